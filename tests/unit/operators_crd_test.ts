import assert from "node:assert/strict";
import { z } from "zod";
import {
  defineKind,
  type JsonSchema,
  structuralProblems,
  toKubernetesSchema,
} from "../../lib/crd/mod.ts";
import { KIND_DEFINITIONS } from "../../lib/operators/mod.ts";
import { quantitySchema } from "../../lib/operators/schema/quantity.ts";

/** Every schema node below `node`, with its path. */
function* nodes(node: JsonSchema, path = ""): Generator<[string, JsonSchema]> {
  yield [path || "(root)", node];
  const properties = node.properties as Record<string, JsonSchema> | undefined;
  for (const [name, child] of Object.entries(properties ?? {})) {
    yield* nodes(child, `${path}.${name}`);
  }
  if (typeof node.items === "object") yield* nodes(node.items as JsonSchema, `${path}[]`);
  if (typeof node.additionalProperties === "object") {
    yield* nodes(node.additionalProperties as JsonSchema, `${path}{}`);
  }
}

/** The schema of every version of `kind`'s CRD. */
function rootSchemas(kind: string): JsonSchema[] {
  const definition = KIND_DEFINITIONS.find((d) => d.resource.kind === kind)!;
  return definition.crd().spec.versions.map((version) => version.schema.openAPIV3Schema);
}

for (const definition of KIND_DEFINITIONS) {
  const kind = definition.resource.kind;

  Deno.test(`the ${kind} CRD schema is structural: every node has a type or is int-or-string`, () => {
    for (const root of rootSchemas(kind)) {
      assert.deepEqual(structuralProblems(root), []);
      for (const [path, node] of nodes(root)) {
        const typed = typeof node.type === "string";
        const intOrString = node["x-kubernetes-int-or-string"] === true;
        assert.ok(typed !== intOrString, `${path} must have exactly one of type and int-or-string`);
        for (
          const keyword of ["$ref", "$schema", "oneOf", "allOf", "not", "const", "propertyNames"]
        ) {
          assert.ok(!(keyword in node), `${path} uses ${keyword}`);
        }
        if ("anyOf" in node) assert.ok(intOrString, `${path} uses anyOf outside int-or-string`);
        assert.notEqual(
          node.additionalProperties,
          false,
          `${path} sets additionalProperties: false`,
        );
        if (node.properties) assert.equal(node.additionalProperties, undefined, path);
      }
    }
  });

  Deno.test(`the ${kind} CRD has a status subresource, names and printer columns`, () => {
    const crd = definition.crd();
    const version = crd.spec.versions.find((v) => v.storage)!;
    assert.equal(crd.metadata.name, `${definition.resource.plural}.kinglet.dev`);
    assert.equal(crd.spec.group, "kinglet.dev");
    assert.equal(version.name, kind === "DatabaseCluster" ? "v1alpha2" : "v1alpha1");
    assert.equal(version.name, definition.resource.version);
    assert.ok(version.served);
    assert.ok(crd.spec.versions.every((v) => v.served && v.subresources?.status));
    assert.deepEqual(version.subresources?.status, {});
    assert.deepEqual(crd.spec.names.categories, ["kinglet"]);
    assert.equal(crd.spec.names.listKind, `${kind}List`);
    const columns = (version.additionalPrinterColumns ?? []).map((column) => column.name);
    for (const name of ["Ready", "Desired", "Phase", "Age"]) {
      assert.ok(columns.includes(name), name);
    }
    assert.deepEqual(version.schema.openAPIV3Schema.required, ["spec"]);
  });
}

Deno.test("WebApp and InferenceService have a scale subresource and DatabaseCluster does not", () => {
  const scaleOf = (kind: string) =>
    KIND_DEFINITIONS.find((d) => d.resource.kind === kind)!.crd().spec.versions[0]!
      .subresources?.scale;
  const expected = {
    specReplicasPath: ".spec.replicas",
    statusReplicasPath: ".status.replicas",
    labelSelectorPath: ".status.selector",
  };
  assert.deepEqual(scaleOf("WebApp"), expected);
  assert.deepEqual(scaleOf("InferenceService"), expected);
  assert.equal(scaleOf("DatabaseCluster"), undefined);
});

Deno.test("the CRDs' short names are wa, dbc and isvc", () => {
  const shortNames = KIND_DEFINITIONS.map((d) => d.crd().spec.names.shortNames);
  assert.deepEqual(shortNames, [["wa"], ["dbc"], ["isvc"]]);
});

Deno.test("InferenceService printer columns include Model and GPU from the spec", () => {
  const definition = KIND_DEFINITIONS.find((d) => d.resource.kind === "InferenceService")!;
  const columns = definition.crd().spec.versions[0]!.additionalPrinterColumns ?? [];
  assert.deepEqual(columns.find((c) => c.name === "Model")?.jsonPath, ".spec.model");
  assert.deepEqual(columns.find((c) => c.name === "GPU")?.jsonPath, ".spec.gpuType");
});

Deno.test("CRD schemas carry defaults, enums, minimums, required fields and descriptions", () => {
  const spec = (rootSchemas("InferenceService")[0]!.properties as Record<string, JsonSchema>).spec!;
  const properties = spec.properties as Record<string, JsonSchema>;
  assert.deepEqual(spec.required, ["model"]);
  assert.equal(properties.replicas!.default, 1);
  // The scale subresource refuses a negative replicas; a minimum would report it twice.
  assert.equal(properties.replicas!.minimum, undefined);
  assert.deepEqual(properties.gpuType!.enum, ["A100", "H100", "L40S", "none"]);
  assert.equal(properties.gpuType!.default, "none");
  assert.equal(properties.maxBatchSize!.default, 8);
  assert.equal(properties.maxBatchSize!.minimum, 1);
  for (const [path, node] of nodes(spec)) {
    if (path !== "(root)" && !path.endsWith("{}") && !path.endsWith("[]")) {
      assert.ok(typeof node.description === "string", `${path} has no description`);
    }
  }
});

Deno.test("the CRD root rejects names too long for the Services kinglet derives from them", () => {
  const rules = rootSchemas("DatabaseCluster")[0]!["x-kubernetes-validations"] as {
    rule: string;
  }[];
  assert.match(rules[0]!.rule, /self\.metadata\.name\.size\(\) <= 52/);
  assert.equal((rules[0] as { fieldPath?: string }).fieldPath, ".metadata.name");
});

Deno.test("toKubernetesSchema turns a quantity into the int-or-string shape Kubernetes allows", () => {
  const node = toKubernetesSchema(quantitySchema);
  assert.deepEqual(node.anyOf, [{ type: "integer" }, { type: "string" }]);
  assert.equal(node["x-kubernetes-int-or-string"], true);
  assert.equal(node.type, undefined);
  assert.equal(typeof node.pattern, "string");
  assert.ok(new RegExp(node.pattern as string).test("250m"));
});

Deno.test("toKubernetesSchema drops $schema, closed objects and propertyNames", () => {
  const node = toKubernetesSchema(
    z.strictObject({ labels: z.record(z.string(), z.string()), kind: z.literal("Thing") }),
  );
  const properties = node.properties as Record<string, JsonSchema>;
  assert.equal(node.$schema, undefined);
  assert.equal(node.additionalProperties, undefined);
  assert.deepEqual(properties.labels, { type: "object", additionalProperties: { type: "string" } });
  assert.deepEqual(properties.kind, { type: "string", enum: ["Thing"] });
});

Deno.test("toKubernetesSchema turns integer range bounds into formats", () => {
  const node = toKubernetesSchema(
    z.object({ small: z.int32().min(0), big: z.int(), port: z.int32().min(1).max(65535) }),
  );
  const properties = node.properties as Record<string, JsonSchema>;
  assert.deepEqual(properties.small, { type: "integer", format: "int32", minimum: 0 });
  assert.deepEqual(properties.big, { type: "integer", format: "int64" });
  assert.deepEqual(properties.port, {
    type: "integer",
    format: "int32",
    minimum: 1,
    maximum: 65535,
  });
});

Deno.test("toKubernetesSchema keeps Kubernetes extensions set with meta", () => {
  const node = toKubernetesSchema(
    z.array(z.object({ name: z.string() }))
      .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] }),
  );
  assert.equal(node["x-kubernetes-list-type"], "map");
  assert.deepEqual(node["x-kubernetes-list-map-keys"], ["name"]);
});

Deno.test("toKubernetesSchema refuses a recursive schema with a clear error", () => {
  const tree: z.ZodType = z.object({
    get children() {
      return z.array(tree);
    },
  });
  assert.throws(() => toKubernetesSchema(tree), (error: Error) => {
    assert.ok(error instanceof TypeError);
    assert.match(error.message, /structural schemas cannot express references/);
    return true;
  });
});

Deno.test("structuralProblems names each node that breaks a structural rule", () => {
  const problems = structuralProblems({
    type: "object",
    properties: {
      untyped: {},
      union: { anyOf: [{ type: "string" }, { type: "boolean" }] },
      both: { type: "object", properties: {}, additionalProperties: { type: "string" } },
      list: { type: "array" },
      keyed: {
        type: "array",
        items: { type: "object", properties: { id: { type: "string" } } },
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["id"],
      },
    },
    required: ["missing"],
  });
  assert.deepEqual(problems, [
    ".untyped: has no type (set one, or x-kubernetes-preserve-unknown-fields)",
    ".union: uses anyOf outside of int-or-string",
    ".union: has no type (set one, or x-kubernetes-preserve-unknown-fields)",
    ".both: sets both properties and additionalProperties",
    ".list: an array must have one items schema",
    ".keyed: list-map key id must be a required or defaulted item property",
    "(root): requires missing, which is not among its properties",
  ]);
});

Deno.test("defineKind refuses a kind whose schema is not structural", () => {
  const define = () =>
    defineKind({
      group: "kinglet.dev",
      version: "v1alpha1",
      kind: "WebApp",
      spec: z.object({ anything: z.unknown() }),
    });
  assert.throws(define, /not structural:\n\.spec\.anything: has no type/);
});
