// deno-lint-ignore-file no-console -- the warnings defineKind writes are read by stubbing console.warn
import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineKind,
  type JsonSchema,
  type KindOptions,
  toKubernetesSchema,
  unenforcedConstraints,
  type ZodSchema,
} from "../../lib/crd/mod.ts";
import { KIND_DEFINITIONS } from "../../lib/operators/mod.ts";
import { backups } from "../../examples/backup/schema.ts";
import { greetings } from "../../examples/greeting/schema.ts";

const properties = (node: JsonSchema) => node.properties as Record<string, JsonSchema>;
const specOf = (
  kind: { crd(): { spec: { versions: { schema: { openAPIV3Schema: JsonSchema } }[] } } },
) => properties(kind.crd().spec.versions[0]!.schema.openAPIV3Schema).spec!;

/** Defines an EdgeSite with `spec`, collecting what it writes to standard error. */
function edgeSites<Spec extends ZodSchema>(
  spec: Spec,
  options: Partial<KindOptions<Spec, undefined>> = {},
) {
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => warnings.push(args.join(" "));
  try {
    const kind = defineKind({
      group: "example.com",
      version: "v1",
      kind: "EdgeSite",
      scope: "Cluster",
      spec,
      ...options,
    });
    return { kind, warnings };
  } finally {
    console.warn = warn;
  }
}

const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

Deno.test("a record's key constraints reach the CRD as a CEL rule on the map", () => {
  const { kind, warnings } = edgeSites(z.object({
    nodeSelector: z.record(z.string().min(1).max(317).regex(LABEL_KEY), z.string()),
  }));
  assert.deepEqual(properties(specOf(kind)).nodeSelector, {
    type: "object",
    additionalProperties: { type: "string" },
    "x-kubernetes-validations": [{
      rule: `self.all(k, size(k) >= 1 && size(k) <= 317 && k.matches(${
        JSON.stringify(LABEL_KEY.source)
      }))`,
      message: `every key must be 1 to 317 characters long and match ${LABEL_KEY.source}`,
    }],
  });
  assert.deepEqual(kind.unenforced, []);
  assert.deepEqual(warnings, []);
});

Deno.test("a record keyed by an enum becomes an object with those properties", () => {
  const zones = z.enum(["north", "south"]);
  const { kind } = edgeSites(z.object({
    quota: z.record(zones, z.int32().min(0)),
    limits: z.partialRecord(zones, z.string()),
  }));
  const spec = properties(specOf(kind));
  assert.deepEqual(spec.quota, {
    type: "object",
    properties: {
      north: { type: "integer", format: "int32", minimum: 0 },
      south: { type: "integer", format: "int32", minimum: 0 },
    },
    required: ["north", "south"],
  });
  assert.deepEqual(spec.limits, {
    type: "object",
    properties: { north: { type: "string" }, south: { type: "string" } },
  });
});

Deno.test("regex flags become the pattern's inline flags, a second pattern a CEL rule", () => {
  const schema = toKubernetesSchema(z.object({
    site: z.string().regex(/^edge-/i).regex(/-[0-9]+$/),
  }));
  assert.deepEqual(properties(schema).site, {
    type: "string",
    pattern: "(?i)^edge-",
    "x-kubernetes-validations": [{
      rule: 'self.matches("-[0-9]+$")',
      message: "must match -[0-9]+$",
    }],
  });
});

Deno.test("a refinement the CRD cannot carry is reported with its path, its message and advice", () => {
  const { kind, warnings } = edgeSites(z.object({
    nodeSelector: z.record(z.string(), z.string())
      .refine((selector) => Object.keys(selector).length > 0, "must select at least one label"),
  }));
  assert.equal(kind.unenforced.length, 1);
  const [only] = kind.unenforced;
  assert.equal(only!.path, ".spec.nodeSelector");
  assert.equal(only!.constraint, 'a refinement ("must select at least one label")');
  assert.match(only!.advice, /x-kubernetes-validations/);
  assert.match(only!.advice, /minProperties: 1/);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /^The CRD of EdgeSite leaves out a zod constraint; the API server/);
  assert.match(warnings[0]!, /\n {2}\.spec\.nodeSelector: a refinement \("must select/);
});

Deno.test("unenforced: error refuses the schema, ignore says nothing", () => {
  const spec = z.object({ name: z.string().trim() });
  assert.throws(
    () => edgeSites(spec, { unenforced: "error" }),
    (error: Error) =>
      error instanceof TypeError &&
      error.message.startsWith("Cannot define the kind EdgeSite: the API server would not") &&
      error.message.includes("\n  .spec.name: an overwrite (.trim()"),
  );
  const { kind, warnings } = edgeSites(spec, { unenforced: "ignore" });
  assert.equal(kind.unenforced.length, 1);
  assert.deepEqual(warnings, []);
  assert.throws(
    () => edgeSites(spec, { unenforced: "loud" as "warn" }),
    /'unenforced' must be warn, error or ignore, got "loud"/,
  );
});

Deno.test("a refinement stated beside it as a CEL rule or minProperties counts as enforced", () => {
  const nonEmpty = (selector: Record<string, string>) => Object.keys(selector).length > 0;
  const { kind, warnings } = edgeSites(z.object({
    nodeSelector: z.record(z.string(), z.string()).refine(nonEmpty).meta({ minProperties: 1 }),
    labels: z.record(z.string(), z.string()).refine(nonEmpty).meta({
      "x-kubernetes-validations": [{ rule: "size(self) > 0", message: "must not be empty" }],
    }),
  }));
  assert.deepEqual(kind.unenforced, []);
  assert.deepEqual(warnings, []);
  assert.equal(properties(specOf(kind)).nodeSelector!.minProperties, 1);
});

Deno.test("transforms, pipes, unknown formats and key refinements are reported where they are", () => {
  const reported = unenforcedConstraints(
    z.object({
      count: z.string().transform((s) => Number(s)),
      name: z.string().pipe(z.string().min(3)),
      token: z.jwt().optional(),
      zones: z.array(z.string().toLowerCase()),
      labels: z.record(z.string().refine((k) => !k.startsWith("kubernetes.io/")), z.string()),
      tags: z.record(z.string(), z.string().refine((v) => v !== "")),
    }),
    ".status",
  );
  assert.deepEqual(reported.map(({ path, constraint }) => `${path}: ${constraint}`), [
    ".status.count: a .transform()",
    ".status.name: the checks of a .pipe() target",
    ".status.token: the string format jwt",
    ".status.zones[]: an overwrite (.trim(), .toLowerCase(), .toUpperCase(), .normalize())",
    ".status.labels (keys): a refinement",
    ".status.tags{}: a refinement",
  ]);
});

Deno.test("a format the API server does not know leaves the CRD; its pattern stays", () => {
  const schema = properties(toKubernetesSchema(z.object({ at: z.string().startsWith("edge-") })));
  assert.deepEqual(schema.at, { type: "string", pattern: "^edge-.*" });
});

Deno.test("kinglet's kinds and the examples' leave nothing to the reconcile", () => {
  for (const kind of [...KIND_DEFINITIONS, backups, greetings]) {
    assert.deepEqual(kind.unenforced, [], kind.resource.kind);
  }
});

Deno.test("a pattern RE2 cannot read leaves the CRD, which the API server would refuse, and is reported", () => {
  const spec = z.object({
    user: z.string().regex(/^(?!admin$)[a-z]+$/),
    brackets: z.string().regex(/^[(?=]+\(\?=$/),
    host: z.hostname(),
    labels: z.record(z.string().regex(/^(\w)\1$/), z.string()),
  });
  const schema = properties(toKubernetesSchema(spec));
  assert.deepEqual(schema.user, { type: "string" });
  assert.equal(schema.brackets!.pattern, "^[(?=]+\\(\\?=$");
  assert.deepEqual(schema.host, { type: "string", format: "hostname" });
  assert.equal(schema.labels!["x-kubernetes-validations"], undefined);
  const reported = unenforcedConstraints(spec, ".spec");
  assert.deepEqual(reported.map(({ path, constraint }) => `${path}: ${constraint}`), [
    ".spec.user: the pattern ^(?!admin$)[a-z]+$",
    ".spec.labels (keys): the pattern ^(\\w)\\1$",
  ]);
  assert.match(reported[0]!.advice, /RE2, which has no lookahead, and would refuse the CRD/);
  assert.match(reported[1]!.advice, /RE2, which has no backreferences/);
});
