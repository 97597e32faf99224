/**
 * Semantic validation of custom resource specs: the zod schema first, then the
 * cross-field checks the API server cannot express, each failure reported as
 * one `path: message` line a user can act on.
 *
 * The API server already enforces the CRD's schema on writes, so a spec that
 * fails here was usually stored before a rule existed, or breaks a rule only
 * kinglet knows (requests above limits, duplicate env names). Reconcilers
 * report the message in the `InvalidSpec` condition and leave children alone.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { validateSpec } from "./validation.ts";
 * const schema = z.object({ gpuType: z.enum(["A100", "none"]) });
 * const result = validateSpec(schema, { gpuType: "T4" });
 * if (!result.ok) result.message; // 'spec.gpuType: "T4" is not supported; use one of A100, none'
 * ```
 *
 * @module
 */
import type { z } from "zod";

/** One field path, as zod reports it: keys and list indices below `spec`. */
export type FieldPath = readonly PropertyKey[];

/** One semantic rule broken by a spec. */
export interface Problem {
  /** Path below `spec`, e.g. `["env", 0, "name"]`. */
  path: FieldPath;
  /** What is wrong and what to do, without the path. */
  message: string;
}

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
 * Parses `input` with `schema`, then runs `check` on the parsed spec (only if
 * parsing succeeded, so checks see defaults and correct types).
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { validateSpec } from "./validation.ts";
 * const schema = z.object({ min: z.int(), max: z.int() });
 * const result = validateSpec(
 *   schema,
 *   { min: 3, max: 1 },
 *   (spec) => spec.min > spec.max ? [{ path: ["max"], message: "must not be below min" }] : [],
 * );
 * result.ok; // false
 * ```
 */
export function validateSpec<S extends z.ZodType>(
  schema: S,
  input: unknown,
  check: (spec: z.output<S>) => Problem[] = () => [],
): Validation<z.output<S>> {
  const parsed = schema.safeParse(input, { reportInput: true, error: friendlyMessage });
  const problems = parsed.success
    ? check(parsed.data).map(({ path, message }) => `${formatPath(path)}: ${message}`)
    : parsed.error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
  if (parsed.success && problems.length === 0) return { ok: true, spec: parsed.data };
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

type Issue = z.core.$ZodRawIssue;

/**
 * Messages for zod's built-in checks, phrased for someone editing YAML.
 * Messages a schema sets itself take precedence over these.
 */
function friendlyMessage(issue: Issue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      return `must be ${article(issue.expected)}, got ${describe(issue.input)}`;
    case "invalid_value":
      if (issue.values.length === 1) return `must be ${JSON.stringify(issue.values[0])}`;
      return `${JSON.stringify(issue.input)} is not supported; use one of ${
        issue.values.map(String).join(", ")
      }`;
    case "too_small":
      return bound(issue.origin, "least", issue.minimum, issue.inclusive, issue.input);
    case "too_big":
      return bound(issue.origin, "most", issue.maximum, issue.inclusive, issue.input);
    case "invalid_union":
      return `${describe(issue.input)} is not accepted here`;
    default:
      return undefined;
  }
}

function bound(
  origin: string,
  side: "least" | "most",
  limit: number | bigint,
  inclusive: boolean | undefined,
  input: unknown,
): string {
  if (origin === "string") {
    if (side === "least" && limit === 1) return "must not be empty";
    return `must be at ${side} ${limit} characters long`;
  }
  if (origin === "array") return `must have at ${side} ${limit} items`;
  const relation = inclusive === false
    ? (side === "least" ? "greater than" : "less than")
    : `at ${side}`;
  return `must be ${relation} ${limit}, got ${describe(input)}`;
}

function article(expected: string): string {
  const noun = expected === "int" ? "integer" : expected;
  return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return JSON.stringify(value);
  return String(value);
}
