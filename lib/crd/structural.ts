/**
 * A zod schema as a Kubernetes structural schema, the `openAPIV3Schema` of a
 * CRD: one schema is the TypeScript type, the validation and the CRD.
 *
 * `z.toJSONSchema` (OpenAPI 3.0 target, input side so defaulted fields are
 * optional) gets close; {@link toKubernetesSchema} then makes the result a
 * structural schema the API server accepts: no `$schema`, no
 * `additionalProperties: false` (Kubernetes prunes unknown fields instead),
 * no `propertyNames`, `const` as a one-value `enum`, int-or-string nodes in
 * the exact `anyOf` shape Kubernetes permits, and integer bounds that merely
 * restate the number type turned into `format`. {@link structuralProblems}
 * checks the outcome, and `defineKind` refuses a schema that fails it.
 *
 * What zod checks and `z.toJSONSchema` leaves out is carried where a CRD can
 * hold it: a record's key constraints become a CEL rule on the map (keys
 * from an enum, the map's properties), regex flags the pattern's inline
 * flags, a second pattern a CEL rule. What it cannot hold (refinements,
 * transforms, formats the API server does not know) is listed by
 * {@link unenforcedConstraints}, with the path and what to do.
 *
 * Kubernetes extensions are written on the zod schema with `.meta()`, e.g.
 * `.meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] })`.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { toKubernetesSchema } from "./structural.ts";
 * toKubernetesSchema(z.object({ replicas: z.int32().min(0).default(1) }));
 * // { type: "object", properties: { replicas: { default: 1, type: "integer", minimum: 0, format: "int32" } } }
 * ```
 *
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { carryConstraints, isSchema } from "./_zod_constraints.ts";
import type { JsonSchema, UnenforcedConstraint, ZodSchema } from "./types.ts";

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
 * import { toKubernetesSchema } from "./structural.ts";
 * toKubernetesSchema(z.enum(["Retain", "Delete"]).default("Retain"));
 * // { default: "Retain", type: "string", enum: ["Retain", "Delete"] }
 * ```
 */
export function toKubernetesSchema(schema: ZodSchema): JsonSchema {
  return convert(schema, "").schema;
}

/**
 * The constraints `schema` checks that its Kubernetes schema does not carry,
 * at their paths under `path` (e.g. `.spec`), each with what to do: the API
 * server accepts objects that break them.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { unenforcedConstraints } from "./structural.ts";
 * const spec = z.object({ nodeSelector: z.record(z.string(), z.string()).refine((s) => Object.keys(s).length > 0) });
 * unenforcedConstraints(spec, ".spec").map((c) => c.path); // [".spec.nodeSelector"]
 * ```
 */
export function unenforcedConstraints(schema: ZodSchema, path = ""): UnenforcedConstraint[] {
  return convert(schema, path).unenforced;
}

/** The schema `toKubernetesSchema` returns and what `unenforcedConstraints` reports, at once. */
function convert(
  schema: ZodSchema,
  path: string,
): { schema: JsonSchema; unenforced: UnenforcedConstraint[] } {
  // A copy, because zod hands one node to every place a schema is reused and each place is
  // carried on its own.
  const json = JSON.parse(JSON.stringify(
    z.toJSONSchema(schema as z.ZodType, { target: "openapi-3.0", io: "input" }),
  )) as JsonSchema;
  const unenforced = carryConstraints(schema, json, path);
  return { schema: adjust(json, ""), unenforced };
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

/**
 * Why a schema is not structural, one `path: problem` line each; empty when
 * it is. Stricter than the API server where strictness costs nothing: junctors
 * (`anyOf` and friends) are allowed only in the int-or-string shape.
 *
 * @example
 * ```ts
 * import { structuralProblems } from "./structural.ts";
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
