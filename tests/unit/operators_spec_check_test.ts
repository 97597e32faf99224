import assert from "node:assert/strict";
import type { z } from "zod";
import {
  DATABASE_CLUSTER_SPEC,
  INFERENCE_SERVICE_SPEC,
  WEB_APP_SPEC,
} from "../../lib/operators/_spec_schemas.ts";
import { databaseSpecSchema } from "../../lib/operators/database/schema.ts";
import { inferenceSpecSchema } from "../../lib/operators/inference/schema.ts";
import { toSpecSchema } from "../../lib/operators/schema/spec_schema.ts";
import { checkSpec, type SpecSchema } from "../../lib/operators/spec_check.ts";
import { formatPath } from "../../lib/operators/validation.ts";
import { webAppSpecSchema } from "../../lib/operators/webapp/schema.ts";

const KINDS: { name: string; zod: z.ZodType; spec: SpecSchema; valid: Record<string, unknown> }[] =
  [
    {
      name: "WebApp",
      zod: webAppSpecSchema,
      spec: WEB_APP_SPEC,
      valid: {
        image: "nginx:1.27",
        replicas: 2,
        port: 8080,
        env: [
          { name: "A", value: "1" },
          { name: "B", valueFrom: { secretKeyRef: { name: "s", key: "k", optional: true } } },
        ],
        resources: { requests: { cpu: "250m", memory: 1024 }, limits: { cpu: 1 } },
        nodeSelector: { "kubernetes.io/arch": "arm64" },
        tolerations: [{ key: "k", operator: "Equal", value: "v", effect: "NoExecute" }],
      },
    },
    {
      name: "DatabaseCluster",
      zod: databaseSpecSchema,
      spec: DATABASE_CLUSTER_SPEC,
      valid: {
        engine: "postgres",
        version: "17.2",
        image: "postgres:17",
        replicas: 3,
        storage: { size: "10Gi", className: "local" },
        resources: { limits: { memory: "1Gi" } },
        deletionPolicy: "Delete",
      },
    },
    {
      name: "InferenceService",
      zod: inferenceSpecSchema,
      spec: INFERENCE_SERVICE_SPEC,
      valid: {
        model: "HuggingFaceTB/SmolLM2-360M-Instruct",
        image: "ghcr.io/huggingface/text-generation-inference:3",
        replicas: 1,
        gpuType: "L40S",
        maxBatchSize: 64,
        resources: { requests: { cpu: "2" } },
      },
    },
  ];

/** Values that break (or satisfy) the usual rules: types, bounds, patterns, emptiness. */
const REPLACEMENTS: unknown[] = [
  undefined,
  null,
  true,
  0,
  -1,
  1.5,
  70_000,
  2 ** 31,
  "",
  "x",
  "two words",
  "500m",
  "1 GB",
  "x".repeat(300),
  [],
  [{}],
  {},
];

/** Every path of a value's leaves and branches, so each gets every replacement. */
function paths(value: unknown, at: PropertyKey[] = []): PropertyKey[][] {
  const out: PropertyKey[][] = [at];
  if (Array.isArray(value)) value.forEach((item, i) => out.push(...paths(item, [...at, i])));
  else if (value && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) out.push(...paths(child, [...at, key]));
  }
  return out;
}

function replaced(value: unknown, path: PropertyKey[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy = structuredClone(value) as Record<PropertyKey, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<PropertyKey, unknown>;
  const last = path.at(-1)!;
  if (replacement === undefined && !Array.isArray(node)) delete node[last];
  else node[last] = replacement;
  return copy;
}

/**
 * The fields a verdict names, each once: zod also measures the length of a
 * list found where a string belongs, a second problem on the same field.
 */
function fields(paths: PropertyKey[][]): string[] {
  return [...new Set(paths.map(formatPath))];
}

function zodVerdict(schema: z.ZodType, input: unknown) {
  const parsed = schema.safeParse(input);
  return parsed.success
    ? { ok: true, value: parsed.data, paths: [] }
    : { ok: false, value: undefined, paths: fields(parsed.error.issues.map((i) => i.path)) };
}

function runTimeVerdict(schema: SpecSchema, input: unknown) {
  const { value, problems } = checkSpec(schema, input);
  const ok = problems.length === 0;
  return { ok, value: ok ? value : undefined, paths: fields(problems.map((p) => [...p.path])) };
}

for (const kind of KINDS) {
  Deno.test(`the run-time checks judge ${kind.name} specs as its zod schema does`, () => {
    let cases = 0;
    let invalid = 0;
    for (const path of paths(kind.valid)) {
      for (const replacement of REPLACEMENTS) {
        const input = replaced(kind.valid, path, replacement);
        const want = zodVerdict(kind.zod, input);
        const got = runTimeVerdict(kind.spec, input);
        const what = `${formatPath(path)} = ${JSON.stringify(replacement)}`;
        assert.equal(got.ok, want.ok, `${what}: zod says ${want.paths.join(", ") || "valid"}`);
        assert.deepEqual(got.value, want.value, `${what}: the value with defaults`);
        assert.deepEqual(got.paths, want.paths, `${what}: the fields named`);
        cases++;
        if (!want.ok) invalid++;
      }
    }
    // The corpus must exercise both sides of the schema, or agreement proves little.
    assert.ok(cases > 100 && invalid > cases / 3, `${cases} cases, ${invalid} invalid`);
  });
}

Deno.test("the generated spec schemas are the zod schemas' current form", () => {
  for (const kind of KINDS) assert.deepEqual(kind.spec, toSpecSchema(kind.zod), kind.name);
});

Deno.test("the run-time checks fill in defaults and drop keys the schema does not know", () => {
  const { value, problems } = checkSpec(WEB_APP_SPEC, { image: "nginx", extra: 1 });
  assert.deepEqual(problems, []);
  assert.deepEqual(value, { image: "nginx", replicas: 1, port: 8080 });
});
