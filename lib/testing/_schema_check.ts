/**
 * What the in-memory API server checks of a custom object against the
 * structural schema of its CRD, worded as the API server's validator words
 * it (`spec.keep: Invalid value: 0: spec.keep in body should be greater than
 * or equal to 1`): types, `required`, `enum`, `minimum`/`maximum` (also
 * exclusive), `minLength`/`maxLength`, `pattern`, `minItems`/`maxItems`,
 * duplicates in a `set` or `map` list, and int-or-string. A `null` in a
 * field that is not `nullable` counts as absent, since the API server prunes
 * it.
 *
 * Not checked: `format`, property counts, CEL rules (`x-kubernetes-validations`)
 * and ratcheting (the API server lets an update keep a value that was already
 * invalid). A pattern JavaScript cannot compile is skipped.
 *
 * @module
 */
import type { JsonSchema } from "../crd/types.ts";
import type { StatusCause } from "../kube/errors.ts";
import { sameJson } from "../runtime/objects/same_json.ts";

/** One refused field, as a cause of the API server's 422 Invalid. */
export interface FieldError extends StatusCause {
  /** The path of the field, e.g. `spec.items[0].name`. */
  field: string;
  /** `FieldValueInvalid`, `FieldValueRequired`, ... */
  reason: string;
  /** What is wrong, without the path in front. */
  message: string;
}

/**
 * Every field of `value` that `schema` refuses (at each level, the missing
 * required fields first); empty when it passes.
 */
export function schemaErrors(schema: JsonSchema, value: unknown, path = ""): FieldError[] {
  const actual = typeOf(value);
  if (schema["x-kubernetes-int-or-string"] === true) {
    if (actual !== "integer" && actual !== "string") {
      return [typeInvalid(path, "integer,string", actual)];
    }
    return actual === "string" ? stringErrors(schema, value as string, path) : [];
  }
  const type = schema.type;
  if (type === undefined) return [];
  if (actual !== type && !(type === "number" && actual === "integer")) {
    return [typeInvalid(path, String(type), actual)];
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => sameJson(allowed, value))) {
    const supported = schema.enum.map(show).join(", ");
    return [{
      field: path,
      reason: "FieldValueNotSupported",
      message: `Unsupported value: ${show(value)}: supported values: ${supported}`,
    }];
  }
  switch (type) {
    case "string":
      return stringErrors(schema, value as string, path);
    case "integer":
    case "number":
      return numberErrors(schema, value as number, path);
    case "array":
      return arrayErrors(schema, value as unknown[], path);
    case "object":
      return objectErrors(schema, value as Record<string, unknown>, path);
    default:
      return [];
  }
}

/**
 * The message of the API server's 422 for `errors`: `Backup.example.com
 * "nightly" is invalid: spec.keep: ...`, the fields in brackets when several.
 */
export function invalidMessage(
  kind: string,
  group: string,
  name: string,
  errors: readonly FieldError[],
): string {
  const fields = errors.map((error) => `${error.field}: ${error.message}`);
  const listed = fields.length === 1 ? fields[0] : `[${fields.join(", ")}]`;
  return `${kind}${group ? `.${group}` : ""} "${name}" is invalid: ${listed}`;
}

function stringErrors(schema: JsonSchema, value: string, path: string): FieldError[] {
  const { minLength, maxLength, pattern } = schema;
  const length = [...value].length;
  if (typeof maxLength === "number" && length > maxLength) {
    return [{
      field: path,
      reason: "FieldValueTooLong",
      message: `Too long: may not be more than ${maxLength} bytes`,
    }];
  }
  if (typeof minLength === "number" && length < minLength) {
    return [invalid(path, value, `should be at least ${minLength} chars long`)];
  }
  if (typeof pattern === "string" && compiled(pattern)?.test(value) === false) {
    return [invalid(path, value, `should match '${pattern}'`)];
  }
  return [];
}

function numberErrors(schema: JsonSchema, value: number, path: string): FieldError[] {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema;
  // OpenAPI v3.0, which CRDs speak: the exclusive flags are booleans beside the bounds.
  if (typeof minimum === "number") {
    if (exclusiveMinimum === true ? value <= minimum : value < minimum) {
      const than = exclusiveMinimum === true ? "greater than" : "greater than or equal to";
      return [invalid(path, value, `should be ${than} ${minimum}`)];
    }
  }
  if (typeof maximum === "number") {
    if (exclusiveMaximum === true ? value >= maximum : value > maximum) {
      const than = exclusiveMaximum === true ? "less than" : "less than or equal to";
      return [invalid(path, value, `should be ${than} ${maximum}`)];
    }
  }
  return [];
}

function arrayErrors(schema: JsonSchema, value: unknown[], path: string): FieldError[] {
  const { minItems, maxItems, items } = schema;
  if (typeof maxItems === "number" && value.length > maxItems) {
    return [{
      field: path,
      reason: "FieldValueTooMany",
      message: `Too many: ${value.length}: must have at most ${maxItems} items`,
    }];
  }
  if (typeof minItems === "number" && value.length < minItems) {
    return [invalid(path, value.length, `should have at least ${minItems} items`)];
  }
  const errors = isSchema(items)
    ? value.flatMap((item, i) => schemaErrors(items, item, `${path}[${i}]`))
    : [];
  return [...errors, ...duplicates(schema, value, path)];
}

/** Items a `set` list holds twice, or `map` list items with the same keys. */
function duplicates(schema: JsonSchema, value: unknown[], path: string): FieldError[] {
  const listType = schema["x-kubernetes-list-type"];
  const keys = schema["x-kubernetes-list-map-keys"];
  if (listType !== "set" && listType !== "map") return [];
  const identity = (item: unknown) =>
    listType === "map" && Array.isArray(keys) && typeof item === "object" && item !== null
      ? Object.fromEntries(keys.map((key) => [key, (item as Record<string, unknown>)[key]]))
      : item;
  const seen: unknown[] = [];
  const errors: FieldError[] = [];
  value.forEach((item, i) => {
    const id = identity(item);
    if (seen.some((other) => sameJson(other, id))) {
      errors.push({
        field: `${path}[${i}]`,
        reason: "FieldValueDuplicate",
        message: `Duplicate value: ${show(id)}`,
      });
    } else seen.push(id);
  });
  return errors;
}

function objectErrors(
  schema: JsonSchema,
  value: Record<string, unknown>,
  path: string,
): FieldError[] {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const additional = schema.additionalProperties;
  const present = (name: string) => {
    const child = properties[name] as JsonSchema | undefined;
    return value[name] !== undefined && (value[name] !== null || child?.nullable === true);
  };
  const required = Array.isArray(schema.required) ? schema.required as string[] : [];
  const errors: FieldError[] = required.filter((name) => !present(name)).map((name) => ({
    field: child(path, name),
    reason: "FieldValueRequired",
    message: "Required value",
  }));
  for (const [name, field] of Object.entries(value)) {
    const fieldSchema = (properties[name] ?? (isSchema(additional) ? additional : undefined)) as
      | JsonSchema
      | undefined;
    if (!fieldSchema || !present(name) || (field === null && fieldSchema.nullable === true)) {
      continue;
    }
    errors.push(...schemaErrors(fieldSchema, field, child(path, name)));
  }
  return errors;
}

function invalid(path: string, value: unknown, should: string): FieldError {
  return {
    field: path,
    reason: "FieldValueInvalid",
    message: `Invalid value: ${show(value)}: ${path} in body ${should}`,
  };
}

function typeInvalid(path: string, expected: string, actual: string): FieldError {
  return {
    field: path,
    reason: "FieldValueTypeInvalid",
    message: `Invalid value: "${actual}": ${path} in body must be of type ${expected}: "${actual}"`,
  };
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function child(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

function show(value: unknown): string {
  return typeof value === "number" || typeof value === "boolean"
    ? String(value)
    : JSON.stringify(value);
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Compiled patterns; `null` for one JavaScript cannot compile (RE2 differs in corners). */
const patterns = new Map<string, RegExp | null>();

function compiled(pattern: string): RegExp | null {
  if (!patterns.has(pattern)) {
    let regex: RegExp | null = null;
    try {
      regex = new RegExp(pattern);
    } catch {
      // Left unchecked rather than refusing what the API server might accept.
    }
    patterns.set(pattern, regex);
  }
  return patterns.get(pattern)!;
}
