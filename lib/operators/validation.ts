/**
 * Semantic validation of custom resource specs: the kind's spec schema first
 * (generated from its zod schema, checked without zod), then the cross-field
 * checks the API server cannot express, each failure reported as one
 * `path: message` line a user can act on.
 *
 * The API server already enforces the CRD's schema on writes, so a spec that
 * fails here was usually stored before a rule existed, or breaks a rule only
 * kinglet knows (requests above limits, duplicate env names). Reconcilers
 * report the message in the `InvalidSpec` condition and leave children alone.
 *
 * @example
 * ```ts
 * import { validateSpec } from "./validation.ts";
 * const schema = { type: "object", properties: { gpuType: { enum: ["A100", "none"] } } } as const;
 * const result = validateSpec(schema, { gpuType: "T4" });
 * if (!result.ok) result.message; // 'spec.gpuType: "T4" is not supported; use one of A100, none'
 * ```
 *
 * @module
 */
import { checkSpec, type FieldPath, type Problem, type SpecSchema } from "./spec_check.ts";

export type { FieldPath, Problem } from "./spec_check.ts";

/** A spec that passed validation, or the reasons it did not. */
export type Validation<T> =
  | { ok: true; spec: T }
  | {
    ok: false;
    /** Every problem as a `path: message` line. */
    problems: string[];
    /** The problems joined by newlines: fit for a condition message. */
    message: string;
  };

/**
 * Checks `input` against `schema` (the kind's generated spec schema), then
 * runs `check` on the result (only if the schema passed, so checks see
 * defaults and correct types).
 *
 * @example
 * ```ts
 * import { validateSpec } from "./validation.ts";
 * const schema = {
 *   type: "object",
 *   properties: { min: { type: "integer" }, max: { type: "integer" } },
 *   required: ["min", "max"],
 * } as const;
 * const result = validateSpec<{ min: number; max: number }>(
 *   schema,
 *   { min: 3, max: 1 },
 *   (spec) => spec.min > spec.max ? [{ path: ["max"], message: "must not be below min" }] : [],
 * );
 * result.ok; // false
 * ```
 */
export function validateSpec<T>(
  schema: SpecSchema,
  input: unknown,
  check: (spec: T) => Problem[] = () => [],
): Validation<T> {
  const checked = checkSpec(schema, input);
  const spec = checked.value as T;
  const problems = (checked.problems.length ? checked.problems : check(spec))
    .map(({ path, message }) => `${formatPath(path)}: ${message}`);
  if (problems.length === 0) return { ok: true, spec };
  return { ok: false, problems, message: problems.join("\n") };
}

/**
 * A path below `spec` as a user would write it: `spec.env[0].name`, or
 * `spec.nodeSelector["kubernetes.io/arch"]` for keys that are not identifiers.
 *
 * @example
 * ```ts
 * import { formatPath } from "./validation.ts";
 * formatPath(["env", 0, "name"]); // "spec.env[0].name"
 * ```
 */
export function formatPath(path: FieldPath): string {
  let out = "spec";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else if (typeof key === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}
