/**
 * A target's readiness rule: a path into the object and the value that means
 * ready, optionally with the path of `observedGeneration`, so that an update
 * counts as done only once the operator has seen the new generation.
 *
 * Paths are dot-separated field names; a segment `name[key=value]` picks the
 * first element of array `name` whose field `key` equals `value`, which is
 * how conditions are addressed:
 *
 * @example
 * ```ts
 * import { isReady, readPath } from "./ready_rule.ts";
 * const app = {
 *   metadata: { name: "a", generation: 2 },
 *   status: { observedGeneration: 2, conditions: [{ type: "Ready", status: "True" }] },
 * };
 * readPath(app, "status.conditions[type=Ready].status"); // "True"
 * isReady(app, {
 *   path: "status.conditions[type=Ready].status",
 *   equals: "True",
 *   observedGenerationPath: "status.observedGeneration",
 * }); // true
 * ```
 *
 * @module
 */
import { z } from "zod";

const SEGMENT = /^([^.[\]=]+)(?:\[([^=\]]+)=([^\]]*)\])?$/;

/** When an object counts as ready. */
export const readyRuleSchema = z.object({
  /** Where to look, e.g. `status.phase` or `status.conditions[type=Ready].status`. */
  path: z.string().refine(isValidPath, "must be field names separated by dots, e.g. status.phase"),
  /** The value, compared as text, that means ready. */
  equals: z.string(),
  /**
   * Where the operator records the generation it acted on. Without it an
   * update cannot be told apart from the state before it, and the update
   * step is not measured.
   */
  observedGenerationPath: z.string().refine(isValidPath, "must be field names separated by dots")
    .optional(),
});
export type ReadyRule = z.infer<typeof readyRuleSchema>;

/** Whether `path` parses as a rule path. */
export function isValidPath(path: string): boolean {
  return path.split(".").every((segment) => SEGMENT.test(segment));
}

/** The value at `path` in `value`, or `undefined` when any step is missing. */
export function readPath(value: unknown, path: string): unknown {
  let current = value;
  for (const segment of path.split(".")) {
    const match = SEGMENT.exec(segment);
    if (!match || !isRecord(current)) return undefined;
    current = current[match[1]!];
    if (match[2] === undefined) continue;
    if (!Array.isArray(current)) return undefined;
    const [key, wanted] = [match[2], match[3]];
    current = current.find((item) => isRecord(item) && String(item[key]) === wanted);
  }
  return current;
}

/**
 * Whether `object` satisfies `rule`: the value matches and, when the rule
 * names an observedGeneration path, the operator has observed at least
 * `minGeneration` (defaults to the object's own `metadata.generation`).
 */
export function isReady(object: unknown, rule: ReadyRule, minGeneration?: number): boolean {
  const value = readPath(object, rule.path);
  if (value === undefined || value === null || String(value) !== rule.equals) return false;
  if (rule.observedGenerationPath === undefined) return true;
  const wanted = minGeneration ?? Number(readPath(object, "metadata.generation") ?? 0);
  return hasObserved(object, rule, wanted);
}

/**
 * Whether the operator has written, at `rule.observedGenerationPath`, that it
 * observed `generation` or a later one, Ready or not: the moment an edit is
 * taken in. Always false when the rule names no such path.
 */
export function hasObserved(object: unknown, rule: ReadyRule, generation: number): boolean {
  if (rule.observedGenerationPath === undefined) return false;
  const observed = Number(readPath(object, rule.observedGenerationPath));
  return Number.isFinite(observed) && observed >= generation;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
