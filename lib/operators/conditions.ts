/**
 * Status conditions in the shape of `metav1.Condition`, and the pure helpers
 * that update them (the zod schema is in `schema/conditions.ts`).
 *
 * Every kind reports the same four condition types:
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
 * import { setCondition } from "./conditions.ts";
 * const conditions = setCondition([], {
 *   type: "Ready", status: "True", reason: "Available", message: "1 of 1 replicas available",
 * }, new Date("2025-01-01T00:00:00Z"));
 * conditions[0]?.lastTransitionTime; // "2025-01-01T00:00:00Z"
 * ```
 *
 * @module
 */
import type { Condition } from "./schema/conditions.ts";

export type { Condition };

/** The pattern of a condition type, as `metav1.Condition` requires. */
export const TYPE_PATTERN: RegExp =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
/** The pattern of a condition reason, as `metav1.Condition` requires. */
export const REASON_PATTERN: RegExp = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
/** The longest condition message `metav1.Condition` accepts. */
export const MAX_MESSAGE = 32768;

/** Status of a condition. */
export type ConditionStatus = Condition["status"];

/** A condition to set; `lastTransitionTime` is computed. */
export type ConditionUpdate = Omit<Condition, "lastTransitionTime">;

/** The condition types every kinglet kind reports. */
export type StandardConditionType = "Ready" | "Progressing" | "Degraded" | "InvalidSpec";

/**
 * Sets one condition, returning a new list (the input is not modified).
 * An existing condition of that type is replaced in place, keeping its
 * `lastTransitionTime` unless its status changes; a new type is appended.
 *
 * @throws {TypeError} when `type` or `reason` does not match the patterns
 * `metav1.Condition` requires, or `message` is longer than 32768 characters;
 * the API server would reject the status update otherwise.
 * @example
 * ```ts
 * import { setCondition } from "./conditions.ts";
 * const t0 = new Date("2025-01-01T00:00:00Z");
 * const t1 = new Date("2025-01-01T00:05:00Z");
 * const first = setCondition([], { type: "Ready", status: "False", reason: "Creating", message: "" }, t0);
 * const same = setCondition(first, { type: "Ready", status: "False", reason: "Waiting", message: "" }, t1);
 * same[0]?.lastTransitionTime; // "2025-01-01T00:00:00Z"
 * ```
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  update: ConditionUpdate,
  now: Date,
): Condition[] {
  checkUpdate(update);
  const list = conditions ?? [];
  const index = list.findIndex((condition) => condition.type === update.type);
  const previous = index === -1 ? undefined : list[index];
  const lastTransitionTime = previous && previous.status === update.status
    ? previous.lastTransitionTime
    : formatTime(now);
  const next: Condition = {
    type: update.type,
    status: update.status,
    ...(update.observedGeneration === undefined
      ? {}
      : { observedGeneration: update.observedGeneration }),
    lastTransitionTime,
    reason: update.reason,
    message: update.message,
  };
  if (index === -1) return [...list, next];
  return list.map((condition, i) => i === index ? next : condition);
}

/**
 * The condition of a type, if present.
 *
 * @example
 * ```ts
 * import { findCondition } from "./conditions.ts";
 * findCondition([], "Ready"); // undefined
 * ```
 */
export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((condition) => condition.type === type);
}

/**
 * Whether the condition of a type is present with status `True`.
 *
 * @example
 * ```ts
 * import { isConditionTrue } from "./conditions.ts";
 * isConditionTrue(undefined, "Ready"); // false
 * ```
 */
export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string) {
  return findCondition(conditions, type)?.status === "True";
}

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
 * import { findCondition, setStandardConditions } from "./conditions.ts";
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

/** RFC 3339 with second precision, as the API server stores `metav1.Time`. */
function formatTime(now: Date): string {
  if (Number.isNaN(now.getTime())) {
    throw new TypeError("Cannot set a condition: 'now' is an invalid Date");
  }
  return now.toISOString().replace(/\.\d+Z$/, "Z");
}

function checkUpdate(update: ConditionUpdate): void {
  if (!TYPE_PATTERN.test(update.type)) {
    throw new TypeError(
      `Cannot set a condition: type must be CamelCase, optionally prefixed by a domain, ` +
        `got ${JSON.stringify(update.type)}`,
    );
  }
  if (!REASON_PATTERN.test(update.reason)) {
    throw new TypeError(
      `Cannot set condition ${update.type}: reason must be CamelCase ` +
        `(letters, digits, '_', ',' or ':'), got ${JSON.stringify(update.reason)}`,
    );
  }
  if (update.message.length > MAX_MESSAGE) {
    throw new TypeError(
      `Cannot set condition ${update.type}: message must be at most ${MAX_MESSAGE} ` +
        `characters, got ${update.message.length}`,
    );
  }
}
