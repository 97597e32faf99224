/**
 * defineKind with several versions: the CRD holds every version, with the
 * columns and rules of the kind on each, one storage version, and the
 * conversion webhook of its Conversion; what the API server would refuse
 * is refused at definition.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { type CustomObject, defineKind, type JsonSchema } from "../../lib/crd/mod.ts";
import type { Resource } from "../../lib/kube/mod.ts";
import { defineConversion } from "../../lib/runtime/webhook/spec.ts";

const BACKUPS: Resource = {
  group: "example.com",
  version: "v2",
  plural: "backups",
  kind: "Backup",
  namespaced: true,
};
const v1 = z.object({ schedule: z.string() });
const v2 = z.object({ schedules: z.array(z.string()), keep: z.int32().min(1).default(7) });
const identity = { toHub: <T>(o: T) => o, fromHub: <T>(o: T) => o };
const conversion = defineConversion({ resource: BACKUPS, hub: "v2", versions: { v1: identity } });
const base = { group: "example.com", kind: "Backup" };

const twoVersions = () =>
  defineKind({
    ...base,
    versions: [
      { name: "v1", spec: v1, served: true },
      { name: "v2", spec: v2, status: z.object({ phase: z.string().optional() }), storage: true },
    ],
    conversion,
    printerColumns: [{ name: "Phase", type: "string", jsonPath: ".status.phase" }],
    validations: [{ rule: "self.metadata.name.size() <= 20", message: "too long" }],
  });

Deno.test("a kind of two versions has both in its CRD, one stored, and a conversion webhook", () => {
  const backups = twoVersions();
  const crd = backups.crd();
  assert.deepEqual(
    crd.spec.versions.map(({ name, served, storage }) => ({ name, served, storage })),
    [{ name: "v1", served: true, storage: false }, { name: "v2", served: true, storage: true }],
  );
  assert.deepEqual(crd.spec.conversion, {
    strategy: "Webhook",
    webhook: {
      conversionReviewVersions: ["v1"],
      clientConfig: { url: "https://127.0.0.1:9443/convert/example.com/backups" },
    },
  });
  for (const version of crd.spec.versions) {
    assert.deepEqual(version.additionalPrinterColumns, [
      { name: "Phase", type: "string", jsonPath: ".status.phase" },
    ]);
    const root = version.schema.openAPIV3Schema;
    assert.equal((root["x-kubernetes-validations"] as unknown[]).length, 1, version.name);
  }
  const spec = (name: string) => {
    const root = crd.spec.versions.find((v) => v.name === name)!.schema.openAPIV3Schema;
    return Object.keys((root.properties as Record<string, JsonSchema>).spec!.properties!);
  };
  assert.deepEqual(spec("v1"), ["schedule"]);
  assert.deepEqual(spec("v2"), ["schedules", "keep"]);
  assert.equal(crd.spec.versions[0]!.subresources, undefined, "v1 declares no status");
  assert.deepEqual(crd.spec.versions[1]!.subresources, { status: {} });
  assert.deepEqual(backups.resource, BACKUPS, "the resource is the storage version's");
  assert.equal(backups.apiVersion, "example.com/v2");
  assert.deepEqual(backups.versions, ["v1", "v2"]);
  assert.equal(backups.conversion, conversion);
});

Deno.test("the object type of a kind of several versions is its storage version's", () => {
  const backups = twoVersions();
  type Backup = CustomObject<typeof backups>;
  const backup: Backup = { metadata: { name: "nightly" }, spec: { schedules: ["x"], keep: 7 } };
  const keep: number = backup.spec.keep;
  const phase: string | undefined = backup.status?.phase;
  // @ts-expect-error: v1's field is not the storage version's
  const old: Backup["spec"] = { schedule: "x" };
  assert.deepEqual([keep, phase, old], [7, undefined, { schedule: "x" }]);
});

Deno.test("versions of one schema need no conversion: strategy None", () => {
  const kind = defineKind({
    ...base,
    versions: [
      { name: "v1beta1", spec: v2, served: false },
      { name: "v1", spec: v2, storage: true },
    ],
  });
  const crd = kind.crd();
  assert.deepEqual(crd.spec.conversion, { strategy: "None" });
  assert.equal(crd.spec.versions[0]!.served, false);
  assert.equal(kind.resource.version, "v1");
  assert.equal(kind.conversion, undefined);
});

Deno.test("a lone version in the list is the storage version, with no conversion", () => {
  const kind = defineKind({ ...base, versions: [{ name: "v1", spec: v2 }] });
  const crd = kind.crd();
  assert.deepEqual(crd.spec.versions.map((v) => [v.name, v.storage]), [["v1", true]]);
  assert.equal(crd.spec.conversion, undefined);
  const single = defineKind({ ...base, version: "v1", spec: v2 }).crd();
  assert.deepEqual(crd, single, "the same CRD as the single-version form");
});

const refused = (fn: () => unknown, type: ErrorConstructor, message: RegExp) =>
  assert.throws(fn, (error: Error) => {
    assert.ok(error instanceof type, String(error));
    assert.match(error.message, /^Cannot define the kind Backup/);
    assert.match(error.message, message);
    return true;
  });

Deno.test("a conversion naming versions the kind lacks is refused, naming them", () => {
  const v3 = defineConversion({
    resource: BACKUPS,
    hub: "v2",
    versions: { v1: identity, v3: identity },
  });
  refused(
    () =>
      defineKind({
        ...base,
        versions: [{ name: "v1", spec: v1 }, { name: "v2", spec: v2, storage: true }],
        conversion: v3,
      }),
    RangeError,
    /'conversion' must be the kind's versions v1, v2, its hub and every spoke \(the kind has no v3\), got \["v2","v1","v3"\]/,
  );
  const short = defineConversion({ resource: BACKUPS, hub: "v2", versions: { v1: identity } });
  refused(
    () =>
      defineKind({
        ...base,
        versions: [
          { name: "v1", spec: v1 },
          { name: "v2", spec: v2, storage: true },
          { name: "v3", spec: v2 },
        ],
        conversion: short,
      }),
    RangeError,
    /\(it names no v3\)/,
  );
  refused(
    () =>
      defineKind({
        ...base,
        versions: [{ name: "v1", spec: v1 }, { name: "v2", spec: v2, storage: true }],
        conversion: { ...conversion, resource: { ...BACKUPS, plural: "archives" } },
      }),
    RangeError,
    /'conversion\.resource' must be this kind, Backup \(backups\.example\.com\)/,
  );
  refused(
    () => defineKind({ ...base, version: "v2", spec: v2, conversion } as never),
    RangeError,
    /'conversion' must be absent for a kind of one version/,
  );
});

Deno.test("two storage versions, none, or a repeated name are refused", () => {
  refused(
    () =>
      defineKind({
        ...base,
        versions: [{ name: "v1", spec: v2, storage: true }, {
          name: "v2",
          spec: v2,
          storage: true,
        }],
      }),
    RangeError,
    /'versions\[\]\.storage' must be true on exactly one version, got \["v1","v2"\]/,
  );
  refused(
    () => defineKind({ ...base, versions: [{ name: "v1", spec: v2 }, { name: "v2", spec: v2 }] }),
    RangeError,
    /'versions\[\]\.storage' must be true on exactly one version, got \[\]/,
  );
  refused(
    () =>
      defineKind({
        ...base,
        versions: [{ name: "v1", spec: v2, storage: true }, { name: "v1", spec: v2 }],
      }),
    RangeError,
    /'versions\[1\]\.name' must be a version named once, got "v1"/,
  );
  refused(
    () => defineKind({ ...base, versions: [] }),
    RangeError,
    /'versions' must be a non-empty list/,
  );
  refused(
    () => defineKind({ ...base, versions: [{ name: "V1", spec: v2 }] }),
    RangeError,
    /'versions\[0\]\.name' must be a lower-case DNS label/,
  );
});

Deno.test("versions that differ in schema without a conversion are refused with a TypeError", () => {
  refused(
    () =>
      defineKind({
        ...base,
        versions: [{ name: "v1", spec: v1 }, { name: "v2", spec: v2, storage: true }],
      }),
    TypeError,
    /versions v1, v2 differ in schema \(v2 from v1\).*give 'conversion'/,
  );
});
