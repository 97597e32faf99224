/**
 * The standard conditions every kinglet kind reports, set together from one
 * health report, on top of the runtime's `metav1.Condition` helpers
 * (`setCondition`, `findCondition`; the zod schema is `./crd`'s
 * `conditionsSchema`, described in `schema/conditions.ts`):
 *
 * - `Ready`: the workload serves as the spec asks.
 * - `Progressing`: kinglet or Kubernetes is still moving toward the spec.
 * - `Degraded`: the workload had been up and has lost replicas.
 * - `InvalidSpec`: the spec breaks a rule; kinglet leaves the children alone
 *   until the spec changes.
 *
 * `lastTransitionTime` changes only when a condition's status changes, so it
 * answers "since when is this not Ready?".
 *
 * @example
 * ```ts
 * import { setStandardConditions } from "./conditions.ts";
 * const conditions = setStandardConditions([], {
 *   health: "Ready", reason: "Available", message: "1 of 1 replicas available",
 * }, new Date("2025-01-01T00:00:00Z"));
 * conditions[0]?.lastTransitionTime; // "2025-01-01T00:00:00Z"
 * ```
 *
 * @module
 */
import { type Condition, setCondition } from "../runtime/mod.ts";

/**
 * Overall health of a primary, from which the standard conditions follow.
 *
 * | health | Ready | Progressing | Degraded | InvalidSpec |
 * | --- | --- | --- | --- | --- |
 * | Ready | True | False | False | False |
 * | Progressing | False | True | False | False |
 * | Degraded | False | False | True | False |
 * | Invalid | False | False | False | True |
 * | Terminating | False | True | False | unchanged |
 */
export type Health = "Ready" | "Progressing" | "Degraded" | "Invalid" | "Terminating";

/** What {@link setStandardConditions} writes. */
export interface HealthReport {
  health: Health;
  /** CamelCase reason, shared by the conditions this report sets. */
  reason: string;
  /** Human-readable detail, shared likewise. */
  message: string;
  /** The primary's `metadata.generation`. */
  observedGeneration?: number;
}

/**
 * Sets `Ready`, `Progressing`, `Degraded` and `InvalidSpec` from one health
 * report (see {@link Health} for the mapping). All but `InvalidSpec` carry the
 * report's reason and message, so `kubectl describe` tells the same story on
 * each; a valid spec sets `InvalidSpec` to False with reason `SpecValid`.
 *
 * @throws {TypeError} as {@link setCondition}.
 * @example
 * ```ts
 * import { setStandardConditions } from "./conditions.ts";
 * import { findCondition } from "../runtime/mod.ts";
 * const conditions = setStandardConditions(undefined, {
 *   health: "Degraded", reason: "ReplicasUnavailable", message: "1 of 3 replicas available",
 * }, new Date());
 * findCondition(conditions, "Degraded")?.status; // "True"
 * ```
 */
export function setStandardConditions(
  conditions: readonly Condition[] | undefined,
  report: HealthReport,
  now: Date,
): Condition[] {
  const { health, reason, message, observedGeneration } = report;
  const set = (list: readonly Condition[] | undefined, type: string, on: boolean) =>
    setCondition(list, {
      type,
      status: on ? "True" : "False",
      reason,
      message,
      observedGeneration,
    }, now);
  let next = set(conditions, "Ready", health === "Ready");
  next = set(next, "Progressing", health === "Progressing" || health === "Terminating");
  next = set(next, "Degraded", health === "Degraded");
  if (health === "Invalid") return set(next, "InvalidSpec", true);
  if (health === "Terminating") return next;
  return setCondition(next, {
    type: "InvalidSpec",
    status: "False",
    reason: "SpecValid",
    message: "The spec passed validation",
    observedGeneration,
  }, now);
}
