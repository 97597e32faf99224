/**
 * The in-memory API server with a kind's CRD: it serves the CRD at once and
 * refuses the kind's writes its structural schema refuses, with the API
 * server's 422 Invalid, one cause per field.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { conditionsSchema, type CustomObject, defineKind } from "../../lib/crd/mod.ts";
import {
  type ApiError,
  CUSTOM_RESOURCE_DEFINITIONS,
  isInvalid,
  type KubeObject,
} from "../../lib/kube/mod.ts";
import { installCrds } from "../../lib/runtime/mod.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";

const backups = defineKind({
  group: "example.com",
  version: "v1",
  kind: "Backup",
  spec: z.object({
    source: z.string().min(1).max(63).regex(/^[a-z]+$/),
    keep: z.int32().min(1).max(365).default(7),
    policy: z.enum(["Retain", "Delete"]).optional(),
    port: z.union([z.int(), z.string()]).meta({ "x-kubernetes-int-or-string": true }).optional(),
    targets: z.array(z.string()).min(1).max(2).optional(),
    labels: z.record(z.string(), z.string()).optional(),
    note: z.string().nullable().optional(),
    suspend: z.boolean().optional(),
  }),
  status: z.object({ conditions: conditionsSchema() }),
});
type Backup = CustomObject<typeof backups>;

const nightly: Backup = {
  apiVersion: "example.com/v1",
  kind: "Backup",
  metadata: { name: "nightly", namespace: "default" },
  spec: { source: "data", keep: 7 },
};

/** A cluster that holds the Backup CRD, installed as an operator installs it. */
async function withCrd(): Promise<MemoryCluster> {
  const cluster = new MemoryCluster();
  await installCrds(cluster, [backups.crd()], { fieldManager: "test" });
  return cluster;
}

/** The fields and messages of a 422 refusal. */
async function refusal(write: Promise<unknown>): Promise<string[]> {
  const error = await write.then(() => assert.fail("the write was accepted"), (e) => e);
  assert.ok(isInvalid(error), String(error));
  return (error as ApiError).causes.map((cause) => `${cause.field}: ${cause.message}`);
}

const spec = (change: Record<string, unknown>) => ({
  ...nightly,
  spec: { ...nightly.spec, ...change },
});

Deno.test("the in-memory API server serves a CRD as soon as it is installed", async () => {
  const cluster = await withCrd();
  const crd = cluster.object<KubeObject & { status?: { conditions?: { type: string }[] } }>(
    CUSTOM_RESOURCE_DEFINITIONS,
    "backups.example.com",
  );
  assert.deepEqual(crd?.status?.conditions?.map((c) => c.type), ["NamesAccepted", "Established"]);
  assert.equal((await cluster.create(backups.resource, nightly)).spec?.source, "data");
});

Deno.test("the in-memory API server refuses a custom object as the API server words it", async () => {
  const cluster = await withCrd();
  const error: ApiError = await cluster.create(backups.resource, spec({ keep: 0, source: "" }))
    .then(() => assert.fail("the write was accepted"), (e) => e);
  assert.equal(error.status, 422);
  assert.equal(error.reason, "Invalid");
  assert.deepEqual(error.causes, [
    {
      field: "spec.source",
      reason: "FieldValueInvalid",
      message: 'Invalid value: "": spec.source in body should be at least 1 chars long',
    },
    {
      field: "spec.keep",
      reason: "FieldValueInvalid",
      message: "Invalid value: 0: spec.keep in body should be greater than or equal to 1",
    },
  ]);
  assert.match(
    error.message,
    /: Backup\.example\.com "nightly" is invalid: \[spec\.source: Invalid value: "": .*, spec\.keep: Invalid value: 0: .*\] \(422 Invalid\)$/,
  );
  assert.equal(cluster.object(backups.resource, "default/nightly"), undefined);
});

Deno.test("the in-memory API server checks types, required fields, enums, bounds, lengths and patterns", async () => {
  const cluster = await withCrd();
  const create = (object: KubeObject) => refusal(cluster.create(backups.resource, object));
  assert.deepEqual(await create(spec({ keep: "7" })), [
    'spec.keep: Invalid value: "string": spec.keep in body must be of type integer: "string"',
  ]);
  assert.deepEqual(await create(spec({ keep: 1.5 })), [
    'spec.keep: Invalid value: "number": spec.keep in body must be of type integer: "number"',
  ]);
  assert.deepEqual(await create({ ...nightly, spec: { keep: 7 } }), [
    "spec.source: Required value",
  ]);
  assert.deepEqual(await create({ ...nightly, spec: undefined }), ["spec: Required value"]);
  assert.deepEqual(await create(spec({ policy: "Keep" })), [
    'spec.policy: Unsupported value: "Keep": supported values: "Retain", "Delete"',
  ]);
  assert.deepEqual(await create(spec({ keep: 366 })), [
    "spec.keep: Invalid value: 366: spec.keep in body should be less than or equal to 365",
  ]);
  assert.deepEqual(await create(spec({ source: "a".repeat(64) })), [
    "spec.source: Too long: may not be more than 63 bytes",
  ]);
  assert.deepEqual(await create(spec({ source: "Data" })), [
    `spec.source: Invalid value: "Data": spec.source in body should match '^[a-z]+$'`,
  ]);
  assert.deepEqual(await create(spec({ targets: [] })), [
    "spec.targets: Invalid value: 0: spec.targets in body should have at least 1 items",
  ]);
  assert.deepEqual(await create(spec({ targets: ["a", "b", "c"] })), [
    "spec.targets: Too many: 3: must have at most 2 items",
  ]);
  assert.deepEqual(await create(spec({ targets: [1] })), [
    'spec.targets[0]: Invalid value: "integer": spec.targets[0] in body must be of type string: "integer"',
  ]);
  assert.deepEqual(await create(spec({ labels: { team: 1 } })), [
    'spec.labels.team: Invalid value: "integer": spec.labels.team in body must be of type string: "integer"',
  ]);
  assert.deepEqual(await create(spec({ port: true })), [
    'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
  ]);
});

Deno.test("the in-memory API server takes what the schema allows, and nulls as the API server prunes them", async () => {
  const cluster = await withCrd();
  const fine = spec({
    port: "http",
    targets: ["s3://a"],
    labels: { team: "a" },
    note: null,
    suspend: null,
    unknown: { kept: true },
  });
  await cluster.create(backups.resource, fine);
  const required = refusal(cluster.create(backups.resource, spec({ source: null })));
  assert.deepEqual(await required, ["spec.source: Required value"]);
});

Deno.test("the in-memory API server checks replaces, patches, applies and status writes too", async () => {
  const cluster = await withCrd();
  const stored = await cluster.create(backups.resource, nightly);
  const keep0 =
    "spec.keep: Invalid value: 0: spec.keep in body should be greater than or equal to 1";
  assert.deepEqual(await refusal(cluster.replace(backups.resource, spec({ keep: 0 }))), [keep0]);
  assert.deepEqual(
    await refusal(cluster.patch(backups.resource, "nightly", { spec: { keep: 0 } }, {
      type: "merge",
      namespace: "default",
    })),
    [keep0],
  );
  assert.deepEqual(
    await refusal(cluster.apply(backups.resource, spec({ keep: 0 }), { fieldManager: "test" })),
    [keep0],
  );
  const condition = {
    type: "Ready",
    status: "True",
    lastTransitionTime: "2025-01-01T00:00:00Z",
    reason: "Scheduled",
    message: "",
  };
  const status = (conditions: unknown[]) =>
    cluster.apply(backups.resource, { ...nightly, status: { conditions } }, {
      fieldManager: "test",
      subresource: "status",
    });
  assert.deepEqual(await refusal(status([condition, { ...condition, status: "False" }])), [
    'status.conditions[1]: Duplicate value: {"type":"Ready"}',
  ]);
  assert.deepEqual(await refusal(status([{ ...condition, reason: "not ready" }])), [
    `status.conditions[0].reason: Invalid value: "not ready": status.conditions[0].reason in body should match '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$'`,
  ]);
  await status([condition]);
  const now = cluster.object<Backup>(backups.resource, "default/nightly");
  assert.equal(now?.metadata.resourceVersion, String(Number(stored.metadata?.resourceVersion) + 1));
});

Deno.test("the in-memory API server takes a kind whose CRD it does not hold as it comes", async () => {
  const cluster = new MemoryCluster();
  const created = await cluster.create(backups.resource, spec({ keep: "many" }));
  assert.equal(created.spec?.keep, "many");
});
