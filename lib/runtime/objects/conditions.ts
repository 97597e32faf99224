/**
 * Status conditions with `metav1.Condition` semantics: one condition per
 * type, and a `lastTransitionTime` that moves only when the condition's
 * status changes, so it answers "since when is this not Ready?" (as
 * controller-runtime's `meta.SetStatusCondition`).
 *
 * The helpers are pure: they return a new list and never modify their input,
 * so a reconcile can build the status it wants and hand it to
 * `context.status`, which writes it only when it differs.
 *
 * @example
 * ```ts
 * import { isConditionTrue, setCondition } from "./conditions.ts";
 * const t0 = new Date("2025-01-01T00:00:00Z");
 * const ready = setCondition([], {
 *   type: "Ready", status: "True", reason: "Rendered", message: "the ConfigMap is in place",
 * }, t0);
 * const again = setCondition(ready, {
 *   type: "Ready", status: "True", reason: "Rendered", message: "still in place",
 * }, new Date("2025-01-01T00:05:00Z"));
 * again[0]?.lastTransitionTime; // "2025-01-01T00:00:00Z": the status did not change
 * isConditionTrue(again, "Ready"); // true
 * ```
 *
 * @module
 */
import { rfc3339 } from "../../_rfc3339.ts";

/** One status condition, as `metav1.Condition` defines it. */
export interface Condition {
  /** CamelCase, optionally prefixed by a domain: `Ready`, `example.com/Synced`. */
  type: string;
  /** Whether the condition holds. */
  status: ConditionStatus;
  /** The `metadata.generation` the condition was set for. */
  observedGeneration?: number;
  /** RFC 3339 at second precision: when the status last changed. */
  lastTransitionTime: string;
  /** Programmatic identifier of the last transition, in CamelCase. */
  reason: string;
  /** Human-readable details; may be empty. */
  message: string;
}

/** Status of a {@link Condition}. */
export type ConditionStatus = "True" | "False" | "Unknown";

/** A condition to set; {@link setCondition} computes `lastTransitionTime`. */
export type ConditionUpdate = Omit<Condition, "lastTransitionTime">;

/** The pattern of a condition type, as `metav1.Condition` requires. */
export const TYPE_PATTERN: RegExp =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
/** The pattern of a condition reason, as `metav1.Condition` requires. */
export const REASON_PATTERN: RegExp = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
/** The longest condition message `metav1.Condition` accepts. */
export const MAX_MESSAGE = 32768;

/**
 * Sets one condition, returning a new list (the input is not modified).
 * An existing condition of that type is replaced in place, keeping its
 * `lastTransitionTime` unless its status changes; a new type is appended.
 *
 * @param now the time of a transition; defaults to `new Date()`.
 * @throws {TypeError} when `type` or `reason` does not match the patterns
 * `metav1.Condition` requires, `message` is longer than 32768 characters, or
 * `now` is an invalid Date: the API server would reject the status otherwise.
 * @example
 * ```ts
 * import { setCondition } from "./conditions.ts";
 * const t0 = new Date("2025-01-01T00:00:00Z");
 * const t1 = new Date("2025-01-01T00:05:00Z");
 * const first = setCondition([], { type: "Ready", status: "False", reason: "Creating", message: "" }, t0);
 * const ready = setCondition(first, { type: "Ready", status: "True", reason: "Created", message: "" }, t1);
 * ready[0]?.lastTransitionTime; // "2025-01-01T00:05:00Z"
 * ```
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  update: ConditionUpdate,
  now: Date = new Date(),
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
export function isConditionTrue(
  conditions: readonly Condition[] | undefined,
  type: string,
): boolean {
  return findCondition(conditions, type)?.status === "True";
}

/** RFC 3339 with second precision, as the API server stores `metav1.Time`. */
function formatTime(now: Date): string {
  if (Number.isNaN(now.getTime())) {
    throw new TypeError("Cannot set a condition: 'now' is an invalid Date");
  }
  return rfc3339(now.getTime(), 0);
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
