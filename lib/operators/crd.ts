/**
 * CustomResourceDefinitions from zod schemas: one schema is the TypeScript
 * type, the runtime validation and the CRD's `openAPIV3Schema`.
 *
 * `z.toJSONSchema` (OpenAPI 3.0 target, input side so defaulted fields are
 * optional) gets close; {@link toKubernetesSchema} then makes the result a
 * structural schema the API server accepts: no `$schema`, no
 * `additionalProperties: false` (Kubernetes prunes unknown fields instead),
 * no `propertyNames`, `const` as a one-value `enum`, int-or-string nodes in
 * the exact `anyOf` shape Kubernetes permits, and integer bounds that merely
 * restate the number type turned into `format`. {@link structuralProblems}
 * checks the outcome, and {@link buildCrd} refuses a schema that fails it.
 *
 * Kubernetes extensions are written on the zod schema with `.meta()`, e.g.
 * `.meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] })`.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { toKubernetesSchema } from "./crd.ts";
 * toKubernetesSchema(z.object({ replicas: z.int32().min(0).default(1) }));
 * // { type: "object", properties: { replicas: { default: 1, type: "integer", minimum: 0, format: "int32" } } }
 * ```
 *
 * @module
 */
import { z } from "zod";
import type { Resource } from "../kube/mod.ts";

export { API_VERSION, GROUP, VERSION } from "./api_group.ts";

/** A JSON Schema node as the API server reads it (extensions keep their `x-` names). */
export type JsonSchema = { [keyword: string]: unknown };

/** A column of `kubectl get`. */
export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description?: string;
  /** 0 shows in `kubectl get`, 1 and more only with `-o wide`. Defaults to 0. */
  priority?: number;
}

/** A CEL validation rule (`x-kubernetes-validations`). */
export interface CelRule {
  rule: string;
  message: string;
  /**
   * The field a refusal names, relative to the schema holding the rule, e.g.
   * `.metadata.name`; without it a rule on the root is reported as `<nil>`.
   */
  fieldPath?: string;
}

/** Everything that defines one kind's CRD. */
export interface KindDefinition {
  /** Group, version, plural and kind; must be namespaced. */
  resource: Resource;
  singular: string;
  shortNames: string[];
  categories: string[];
  /** What the kind is for, shown by `kubectl explain`. */
  description: string;
  spec: z.ZodType;
  status: z.ZodType;
  printerColumns: PrinterColumn[];
  /** Adds the scale subresource on `.spec.replicas`, `.status.replicas`, `.status.selector`. */
  scale: boolean;
  /**
   * Longest `metadata.name` the kind accepts, enforced by CEL at admission:
   * children's names derive from it and some have tighter limits than the
   * primary (a Service name is a 63-character DNS label).
   */
  maxNameLength: number;
}

/** The CustomResourceDefinition object, with schema extensions spelled as in YAML. */
export interface CustomResourceDefinition {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: {
    name: string;
    labels: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: {
    group: string;
    scope: "Namespaced";
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources: { status: Record<string, never>; scale?: Record<string, string> };
      additionalPrinterColumns: PrinterColumn[];
      schema: { openAPIV3Schema: JsonSchema };
    }[];
  };
}

const INT32_MAX = 2 ** 31 - 1;
const INT32_MIN = -(2 ** 31);
const DROPPED = new Set(["$schema", "$id", "propertyNames"]);
const FORBIDDEN = [
  "$ref",
  "$defs",
  "definitions",
  "$schema",
  "const",
  "propertyNames",
  "patternProperties",
  "dependencies",
  "additionalItems",
  "oneOf",
  "allOf",
  "not",
];
const TYPES = new Set(["object", "array", "string", "integer", "number", "boolean"]);

/**
 * A zod schema as a Kubernetes structural schema node.
 *
 * @throws {TypeError} when zod cannot represent the schema (transforms,
 * functions) or it uses a recursive reference, which structural schemas
 * cannot express.
 * @example
 * ```ts
 * import { z } from "zod";
 * import { toKubernetesSchema } from "./crd.ts";
 * toKubernetesSchema(z.enum(["Retain", "Delete"]).default("Retain"));
 * // { default: "Retain", type: "string", enum: ["Retain", "Delete"] }
 * ```
 */
export function toKubernetesSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { target: "openapi-3.0", io: "input" }) as JsonSchema;
  return adjust(json, "");
}

function adjust(node: JsonSchema, path: string): JsonSchema {
  if ("$ref" in node) {
    throw new TypeError(
      `Cannot convert the schema at ${path || "the root"}: it refers to ${node.$ref}, and ` +
        "structural schemas cannot express references (is the zod schema recursive?)",
    );
  }
  if (node["x-kubernetes-int-or-string"] === true) return intOrString(node);
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key)) continue;
    if (key === "additionalProperties" && typeof value === "boolean") {
      if (value) out["x-kubernetes-preserve-unknown-fields"] = true;
      continue;
    }
    if (key === "const") {
      out.enum = [value];
      continue;
    }
    out[key] = adjustChild(key, value, path);
  }
  if (out.type === "integer") integerFormat(out);
  return ordered(out);
}

/** Keywords in the order a reader of the YAML wants them; others follow as they came. */
const KEY_ORDER = [
  "description",
  "type",
  "format",
  "enum",
  "default",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "anyOf",
  "properties",
  "additionalProperties",
  "items",
  "required",
];

function ordered(node: JsonSchema): JsonSchema {
  const rank = (key: string) => {
    const index = KEY_ORDER.indexOf(key);
    return index === -1 ? KEY_ORDER.length : index;
  };
  return Object.fromEntries(Object.entries(node).sort(([a], [b]) => rank(a) - rank(b)));
}

function adjustChild(key: string, value: unknown, path: string): unknown {
  if (key === "properties" && isSchema(value)) {
    return Object.fromEntries(
      Object.entries(value).map((
        [name, child],
      ) => [name, adjust(child as JsonSchema, `${path}.${name}`)]),
    );
  }
  if ((key === "items" || key === "additionalProperties") && isSchema(value)) {
    return adjust(value, `${path}[]`);
  }
  if (key === "anyOf" && Array.isArray(value)) {
    return value.map((child) => adjust(child as JsonSchema, path));
  }
  return value;
}

function intOrString(node: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const key of ["description", "default", "pattern"]) {
    if (node[key] !== undefined) out[key] = node[key];
  }
  out.anyOf = [{ type: "integer" }, { type: "string" }];
  out["x-kubernetes-int-or-string"] = true;
  return ordered(out);
}

/**
 * `z.int()` and `z.int32()` bound their range explicitly; in a CRD the bound
 * reads as a business rule, so it becomes the equivalent `format` instead
 * (`int32` also for narrower ranges, e.g. ports).
 */
function integerFormat(node: JsonSchema): void {
  const { minimum, maximum } = node;
  if (maximum === Number.MAX_SAFE_INTEGER) {
    delete node.maximum;
    node.format = "int64";
  } else if (typeof maximum === "number" && maximum <= INT32_MAX) {
    if (maximum === INT32_MAX) delete node.maximum;
    if (typeof minimum === "number" && minimum >= INT32_MIN) node.format = "int32";
  }
  if (minimum === Number.MIN_SAFE_INTEGER || minimum === INT32_MIN) delete node.minimum;
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Why a schema is not structural, one `path: problem` line each; empty when
 * it is. Stricter than the API server where strictness costs nothing: junctors
 * (`anyOf` and friends) are allowed only in the int-or-string shape.
 *
 * @example
 * ```ts
 * import { structuralProblems } from "./crd.ts";
 * structuralProblems({ type: "object", properties: { x: {} } });
 * // [".x: has no type (set one, or x-kubernetes-preserve-unknown-fields)"]
 * ```
 */
export function structuralProblems(schema: JsonSchema, path = ""): string[] {
  const at = path || "(root)";
  const problems: string[] = [];
  for (const key of FORBIDDEN) {
    if (key in schema) problems.push(`${at}: uses ${key}, which structural schemas forbid`);
  }
  const preserve = schema["x-kubernetes-preserve-unknown-fields"];
  if (preserve !== undefined && preserve !== true) {
    problems.push(`${at}: x-kubernetes-preserve-unknown-fields must be true or absent`);
  }
  if (schema["x-kubernetes-int-or-string"] === true) {
    const shape = JSON.stringify(schema.anyOf);
    if (schema.type !== undefined || shape !== '[{"type":"integer"},{"type":"string"}]') {
      problems.push(`${at}: int-or-string must be anyOf [integer, string] without a type`);
    }
    return problems;
  }
  if ("anyOf" in schema) problems.push(`${at}: uses anyOf outside of int-or-string`);
  const type = schema.type;
  if (type === undefined) {
    if (preserve !== true) {
      problems.push(`${at}: has no type (set one, or x-kubernetes-preserve-unknown-fields)`);
    }
  } else if (typeof type !== "string" || !TYPES.has(type)) {
    problems.push(
      `${at}: type must be one of ${[...TYPES].join(", ")}, got ${JSON.stringify(type)}`,
    );
  }
  const properties = schema.properties;
  const additional = schema.additionalProperties;
  if (properties !== undefined && additional !== undefined) {
    problems.push(`${at}: sets both properties and additionalProperties`);
  }
  if (additional !== undefined && !isSchema(additional)) {
    problems.push(
      `${at}: additionalProperties must be a schema, not ${JSON.stringify(additional)}`,
    );
  }
  if (isSchema(properties)) {
    for (const [name, child] of Object.entries(properties)) {
      problems.push(...structuralProblems(child as JsonSchema, `${path}.${name}`));
    }
  }
  const required = Array.isArray(schema.required) ? schema.required as string[] : [];
  for (const name of required) {
    if (!isSchema(properties) || !(name in properties)) {
      problems.push(`${at}: requires ${name}, which is not among its properties`);
    }
  }
  if (isSchema(additional)) problems.push(...structuralProblems(additional, `${path}{}`));
  if (type === "array") problems.push(...arrayProblems(schema, path, at));
  return problems;
}

function arrayProblems(schema: JsonSchema, path: string, at: string): string[] {
  const items = schema.items;
  if (!isSchema(items)) return [`${at}: an array must have one items schema`];
  const problems = structuralProblems(items, `${path}[]`);
  const keys = schema["x-kubernetes-list-map-keys"];
  if (schema["x-kubernetes-list-type"] === "map") {
    const itemProperties = isSchema(items.properties) ? items.properties : {};
    const itemRequired = Array.isArray(items.required) ? items.required as string[] : [];
    for (const key of Array.isArray(keys) ? keys as string[] : []) {
      const property = itemProperties[key] as JsonSchema | undefined;
      if (!property || (!itemRequired.includes(key) && property.default === undefined)) {
        problems.push(`${at}: list-map key ${key} must be a required or defaulted item property`);
      }
    }
  }
  return problems;
}

/**
 * The scale subresource makes the API server refuse a negative
 * `.spec.replicas` itself; a schema minimum of 0 beside it would report the
 * same value a second time.
 */
function withoutReplicasMinimum(root: JsonSchema): void {
  const spec = (root.properties as Record<string, JsonSchema>).spec;
  const replicas = (spec?.properties as Record<string, JsonSchema> | undefined)?.replicas;
  if (replicas?.minimum === 0) delete replicas.minimum;
}

/**
 * The CRD of one kind: the spec and status schemas under a root with
 * `apiVersion`, `kind` and `metadata`, the status subresource (and scale,
 * when asked), printer columns and names.
 *
 * @throws {TypeError} when the resulting schema is not structural, listing
 * every problem.
 * @example
 * ```ts
 * import { buildCrd } from "./crd.ts";
 * import { webAppDefinition } from "./webapp/schema.ts";
 * buildCrd(webAppDefinition).metadata.name; // "webapps.kinglet.dev"
 * ```
 */
export function buildCrd(definition: KindDefinition): CustomResourceDefinition {
  const { resource, maxNameLength } = definition;
  if (!resource.namespaced) {
    throw new TypeError(`Cannot build the CRD of ${resource.kind}: kinglet's kinds are namespaced`);
  }
  const root: JsonSchema = {
    description: definition.description,
    type: "object",
    properties: {
      apiVersion: { type: "string", description: "Versioned schema of this object." },
      kind: { type: "string", description: "REST resource this object represents." },
      // Declaring name (all a CRD may say of metadata) lets the name rule below point at it.
      metadata: { type: "object", properties: { name: { type: "string" } } },
      spec: toKubernetesSchema(definition.spec),
      status: toKubernetesSchema(definition.status),
    },
    required: ["spec"],
    "x-kubernetes-validations": [
      {
        rule: `self.metadata.name.size() <= ${maxNameLength} && ` +
          `self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')`,
        message: `must be a DNS label of at most ${maxNameLength} characters starting with a ` +
          "letter, because it names the Services kinglet creates",
        fieldPath: ".metadata.name",
      } satisfies CelRule,
    ],
  };
  if (definition.scale) withoutReplicasMinimum(root);
  const problems = structuralProblems(root);
  if (problems.length > 0) {
    throw new TypeError(
      `Cannot build the CRD of ${resource.kind}: its schema is not structural:\n` +
        problems.join("\n"),
    );
  }
  const scale = definition.scale
    ? {
      specReplicasPath: ".spec.replicas",
      statusReplicasPath: ".status.replicas",
      labelSelectorPath: ".status.selector",
    }
    : undefined;
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: `${resource.plural}.${resource.group}`,
      labels: { "app.kubernetes.io/part-of": "kinglet" },
    },
    spec: {
      group: resource.group,
      scope: "Namespaced",
      names: {
        kind: resource.kind,
        listKind: `${resource.kind}List`,
        plural: resource.plural,
        singular: definition.singular,
        shortNames: definition.shortNames,
        categories: definition.categories,
      },
      versions: [{
        name: resource.version,
        served: true,
        storage: true,
        subresources: { status: {}, ...(scale ? { scale } : {}) },
        additionalPrinterColumns: definition.printerColumns,
        schema: { openAPIV3Schema: root },
      }],
    },
  };
}
