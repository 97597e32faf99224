import assert from "node:assert/strict";
import { z } from "zod";
import {
  checkEnv,
  checkNodeSelector,
  checkResources,
  checkTolerations,
  containerEnv,
  containerResources,
  podTolerations,
} from "../../lib/operators/pod_fields.ts";
import { parseQuantity, QUANTITY_PATTERN } from "../../lib/operators/quantity.ts";
import { quantitySchema } from "../../lib/operators/schema/quantity.ts";
import { toSpecSchema } from "../../lib/operators/schema/spec_schema.ts";
import { formatPath, type Problem, validateSpec as check } from "../../lib/operators/validation.ts";

/** What `kinglet run` does: the zod schema's generated spec schema, checked without zod. */
function validateSpec<S extends z.ZodType>(
  schema: S,
  input: unknown,
  semantic?: (spec: z.output<S>) => Problem[],
) {
  return check<z.output<S>>(toSpecSchema(schema), input, semantic);
}

function problems(result: ReturnType<typeof validateSpec>): string[] {
  assert.equal(result.ok, false, "expected the spec to be invalid");
  return result.ok ? [] : result.problems;
}

Deno.test("validateSpec returns the parsed spec with defaults applied", () => {
  const schema = z.object({ replicas: z.int().default(1), name: z.string() });
  assert.deepEqual(validateSpec(schema, { name: "a" }), {
    ok: true,
    spec: { replicas: 1, name: "a" },
  });
});

Deno.test("validateSpec phrases zod's issues as path: message lines", () => {
  const schema = z.object({
    image: z.string().min(1),
    port: z.int().min(1).max(65535),
    replicas: z.int().min(0),
    gpuType: z.enum(["A100", "none"]),
    kind: z.literal("X"),
    env: z.array(z.object({ name: z.string() })),
    tags: z.array(z.string()).min(1),
  });
  const result = validateSpec(schema, {
    image: "",
    port: 70000,
    replicas: "two",
    gpuType: "T4",
    kind: "Y",
    env: [{}],
    tags: [],
  });
  assert.deepEqual(problems(result), [
    "spec.image: must not be empty",
    "spec.port: must be at most 65535, got 70000",
    'spec.replicas: must be a number, got "two"',
    'spec.gpuType: "T4" is not supported; use one of A100, none',
    'spec.kind: must be "X"',
    "spec.env[0].name: is required",
    "spec.tags: must have at least 1 items",
  ]);
  assert.equal(result.ok ? "" : result.message, problems(result).join("\n"));
});

Deno.test("validateSpec runs semantic checks only on a spec that parsed", () => {
  const schema = z.object({ min: z.int(), max: z.int() });
  let checked = 0;
  const check = (spec: { min: number; max: number }) => {
    checked++;
    return spec.min > spec.max ? [{ path: ["max"], message: "must not be below min" }] : [];
  };
  assert.deepEqual(problems(validateSpec(schema, { min: "a", max: 1 }, check)).length, 1);
  assert.equal(checked, 0);
  assert.deepEqual(problems(validateSpec(schema, { min: 3, max: 1 }, check)), [
    "spec.max: must not be below min",
  ]);
  assert.equal(checked, 1);
});

Deno.test("validateSpec reports a missing or non-object spec", () => {
  const schema = z.object({ image: z.string() });
  assert.deepEqual(problems(validateSpec(schema, undefined)), ["spec: is required"]);
  assert.deepEqual(problems(validateSpec(schema, [])), ["spec: must be an object, got a list"]);
});

Deno.test("formatPath quotes keys that are not identifiers", () => {
  assert.equal(formatPath([]), "spec");
  assert.equal(formatPath(["env", 2, "valueFrom"]), "spec.env[2].valueFrom");
  assert.equal(
    formatPath(["nodeSelector", "kubernetes.io/arch"]),
    'spec.nodeSelector["kubernetes.io/arch"]',
  );
});

Deno.test("parseQuantity reads decimal, binary and exponent suffixes", () => {
  assert.equal(parseQuantity("500m"), 0.5);
  assert.equal(parseQuantity("100m"), parseQuantity("0.1"));
  assert.equal(parseQuantity("2"), 2);
  assert.equal(parseQuantity(3), 3);
  assert.equal(parseQuantity("1Ki"), 1024);
  assert.equal(parseQuantity("1.5Gi"), 1.5 * 2 ** 30);
  assert.equal(parseQuantity("2k"), 2000);
  assert.equal(parseQuantity("1e3"), 1000);
  assert.equal(parseQuantity("250u"), 0.00025);
  assert.ok(parseQuantity("1Gi") > parseQuantity("1G"));
  assert.throws(() => parseQuantity("1 GB"), {
    name: "TypeError",
    message: /"1 GB" is not a quantity/,
  });
});

Deno.test("quantities accept integers and suffixed strings and reject the rest", () => {
  for (const good of [0, 4, "4", "250m", "1.5", ".5", "512Mi", "1e6"]) {
    assert.ok(quantitySchema.safeParse(good).success, String(good));
  }
  for (const bad of ["", "-1", "1GB", "1 Gi", "one", "1.5.5"]) {
    assert.ok(!QUANTITY_PATTERN.test(bad), bad);
  }
  const fractional = validateSpec(z.object({ cpu: quantitySchema }), { cpu: 0.5 });
  assert.deepEqual(problems(fractional), ['spec.cpu: 0.5 must be written as a string, e.g. "0.5"']);
  const flag = validateSpec(z.object({ cpu: quantitySchema }), { cpu: true });
  assert.deepEqual(problems(flag), [
    "spec.cpu: must be a quantity: an integer or a string such as 500m, 2, 256Mi or 1Gi",
  ]);
  const result = validateSpec(z.object({ cpu: quantitySchema }), { cpu: "1GB" });
  assert.deepEqual(problems(result), [
    'spec.cpu: "1GB" is not a quantity; use a number with an optional suffix, such as 500m, 2, 256Mi or 1Gi',
  ]);
});

Deno.test("checkEnv finds duplicate names, '=' in names and ambiguous sources", () => {
  const found = checkEnv([
    { name: "A", value: "1" },
    { name: "A", value: "2" },
    { name: "B=C", value: "3" },
    { name: "D", value: "4", valueFrom: { secretKeyRef: { name: "s", key: "k" } } },
    { name: "E", valueFrom: {} },
  ], ["env"]).map(({ path, message }) => `${formatPath(path)}: ${message}`);
  assert.deepEqual(found, [
    'spec.env[1].name: "A" is already set by spec.env[0]',
    "spec.env[2].name: must not contain '='",
    "spec.env[3]: set value or valueFrom, not both",
    "spec.env[4].valueFrom: must set exactly one of secretKeyRef and configMapKeyRef",
  ]);
  assert.deepEqual(
    checkEnv([{ name: "A", valueFrom: { configMapKeyRef: { name: "c", key: "k" } } }], ["env"]),
    [],
  );
});

Deno.test("checkResources compares requests with limits across units", () => {
  assert.deepEqual(
    checkResources(
      { requests: { cpu: "1500m", memory: "1Gi" }, limits: { cpu: 1, memory: "2Gi" } },
      ["resources"],
    ),
    [{
      path: ["resources", "requests", "cpu"],
      message: "request 1500m exceeds the limit 1; pods would be rejected",
    }],
  );
  assert.deepEqual(
    checkResources({ requests: { memory: "1000Mi" }, limits: { memory: "1Gi" } }, ["r"]),
    [],
  );
  assert.deepEqual(checkResources({ requests: { cpu: "2" } }, ["r"]), []);
});

Deno.test("checkTolerations applies the core API's toleration rules", () => {
  const found = checkTolerations([
    { key: "a", operator: "Exists", value: "x" },
    { value: "x" },
    { key: "b", operator: "Equal", value: "y", tolerationSeconds: 30 },
    { key: "c", value: "not a label value!" },
  ], ["tolerations"]).map(({ path, message }) => `${formatPath(path)}: ${message}`);
  assert.deepEqual(found, [
    "spec.tolerations[0].value: must be empty when operator is Exists",
    "spec.tolerations[1].operator: must be Exists when key is empty (an empty key matches every taint)",
    "spec.tolerations[2].tolerationSeconds: applies only to effect NoExecute",
    "spec.tolerations[3].value: \"not a label value!\" is not a label value: use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
  ]);
  assert.deepEqual(
    checkTolerations([{ operator: "Exists" }, {
      key: "k",
      effect: "NoExecute",
      tolerationSeconds: 5,
    }], ["t"]),
    [],
  );
});

Deno.test("checkNodeSelector accepts label keys and values and names bad ones", () => {
  assert.deepEqual(
    checkNodeSelector({ "kubernetes.io/arch": "arm64", zone: "" }, ["nodeSelector"]),
    [],
  );
  const found = checkNodeSelector({ "Bad_Prefix.io/x": "ok", "ok": "-bad" }, ["nodeSelector"]);
  assert.deepEqual(found.map((p) => p.path), [["nodeSelector", "Bad_Prefix.io/x"], [
    "nodeSelector",
    "ok",
  ]]);
  assert.match(found[0]!.message, /is not a label key/);
  assert.match(found[1]!.message, /"-bad" is not a label value/);
});

Deno.test("pod fields render into core types without unset fields", () => {
  assert.deepEqual(
    containerEnv([{ name: "A", value: "1" }, {
      name: "B",
      valueFrom: { secretKeyRef: { name: "s", key: "k" } },
    }]),
    [
      { name: "A", value: "1" },
      { name: "B", valueFrom: { secretKeyRef: { name: "s", key: "k" } } },
    ],
  );
  assert.deepEqual(containerEnv(undefined), []);
  assert.deepEqual(containerResources({ requests: { cpu: 1, memory: "64Mi" } }), {
    requests: { cpu: "1", memory: "64Mi" },
  });
  assert.deepEqual(containerResources(undefined), {});
  assert.deepEqual(containerResources(undefined, { "nvidia.com/gpu": "1" }), {
    limits: { "nvidia.com/gpu": "1" },
  });
  assert.deepEqual(podTolerations([{ key: "k", operator: "Exists", value: undefined }]), [{
    key: "k",
    operator: "Exists",
  }]);
});
