/**
 * A kind's zod spec schema as the plain {@link SpecSchema} that
 * `kinglet run` checks specs with (`../spec_check.ts`), and the source of the
 * generated `../_spec_schemas.ts`: `deno task crds` writes it beside the CRDs
 * and the drift test keeps it current. So zod stays the single source of the
 * types, the CRDs and the checks, and the operator loads none of zod's code.
 *
 * The conversion keeps what the checks need (types, bounds, patterns, enums,
 * defaults, required properties), the message a schema sets on a pattern, and
 * marks int-or-string nodes as quantities; descriptions and Kubernetes
 * extensions stay in the CRD only.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { toSpecSchema } from "./spec_schema.ts";
 * toSpecSchema(z.object({ port: z.int32().min(1).default(8080) }));
 * // { type: "object", properties: { port: { type: "integer", default: 8080, minimum: 1, maximum: 2147483647 } } }
 * ```
 *
 * @module
 */
import { z } from "npm:zod@4.6.7";
import type { SpecSchema } from "../spec_check.ts";

/** The JSON Schema keywords a {@link SpecSchema} keeps, in this order. */
const KEPT = [
  "type",
  "enum",
  "default",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "pattern",
  "patternMessage",
  "properties",
  "additionalProperties",
  "items",
  "required",
] as const;

type Json = { [keyword: string]: unknown };

/**
 * The spec schema of `schema`.
 *
 * @throws {TypeError} when the schema uses a keyword the checks do not
 * implement (a union other than a quantity, a tuple, a reference), so that a
 * new zod feature cannot silently go unchecked at run time.
 */
export function toSpecSchema(schema: z.ZodType): SpecSchema {
  const json = z.toJSONSchema(schema, {
    target: "openapi-3.0",
    io: "input",
    override: ({ zodSchema, jsonSchema }) => {
      const message = patternMessage(zodSchema);
      if (message !== undefined) jsonSchema.patternMessage = message;
    },
  }) as Json;
  return convert(json, "spec");
}

function convert(node: Json, path: string): SpecSchema {
  if (node["x-kubernetes-int-or-string"] === true) {
    return node.default === undefined
      ? { quantity: true }
      : { quantity: true, default: node.default };
  }
  for (const key of ["anyOf", "oneOf", "allOf", "not", "$ref", "prefixItems"]) {
    if (key in node) {
      throw new TypeError(
        `Cannot check ${path} at run time: its schema uses ${key}, which the spec checks do ` +
          "not implement; extend lib/operators/spec_check.ts or simplify the schema",
      );
    }
  }
  const out: Json = {};
  for (const key of KEPT) {
    const value = node[key];
    if (value === undefined) continue;
    if (key === "properties") {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, Json>).map((
          [name, child],
        ) => [name, convert(child, `${path}.${name}`)]),
      );
    } else if (key === "items") out.items = convert(value as Json, `${path}[]`);
    else if (key === "additionalProperties") {
      if (typeof value === "object") out.additionalProperties = convert(value as Json, `${path}[]`);
    } else out[key] = value;
  }
  return out as SpecSchema;
}

/** The message a schema sets on its `regex` check, if any. */
function patternMessage(schema: z.core.$ZodType): string | undefined {
  const checks = (schema._zod.def as { checks?: z.core.$ZodCheck[] }).checks ?? [];
  for (const check of checks) {
    const def = check._zod.def as { format?: string; error?: (issue: unknown) => unknown };
    if (def.format !== "regex" || !def.error) continue;
    const message = def.error({ code: "invalid_format", format: "regex", input: "" });
    if (typeof message === "string") return message;
  }
  return undefined;
}
