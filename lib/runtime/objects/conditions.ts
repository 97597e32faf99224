/**
 * Status conditions with `metav1.Condition` semantics: one condition per
 * type, and a `lastTransitionTime` that moves only when the condition's
 * status changes, so it answers "since when is this not Ready?" (as
 * controller-runtime's `meta.SetStatusCondition`).
 *
 * The helpers are pure: they return a new list and never modify their input,
 * so a reconcile can build the status it wants and hand it to
 * `context.status`, which writes it only when it differs. The time of a
 * transition comes from a clock: pass the reconcile's `context.clock`, so that
 * a test on a `FakeClock` sees the fake time.
 *
 * @example
 * ```ts
 * import { isConditionTrue, setCondition } from "./conditions.ts";
 * import { FakeClock } from "../../async/clock.ts";
 * const clock = new FakeClock(Date.UTC(2025, 0, 1));
 * const ready = setCondition([], {
 *   type: "Ready", status: "True", reason: "Rendered", message: "the ConfigMap is in place",
 * }, clock);
 * await clock.advance(300_000);
 * const again = setCondition(ready, {
 *   type: "Ready", status: "True", reason: "Rendered", message: "still in place",
 * }, clock);
 * again[0]?.lastTransitionTime; // "2025-01-01T00:00:00Z": the status did not change
 * isConditionTrue(again, "Ready"); // true
 * ```
 *
 * @module
 */
import { rfc3339 } from "../../_rfc3339.ts";
import { type Clock, systemClock } from "../../async/clock.ts";
import {
  type Condition,
  MAX_MESSAGE,
  MAX_REASON,
  MAX_TYPE,
  REASON_PATTERN,
  TYPE_PATTERN,
} from "../../kube/condition.ts";

export {
  type Condition,
  type ConditionStatus,
  MAX_MESSAGE,
  REASON_PATTERN,
  TYPE_PATTERN,
} from "../../kube/condition.ts";

/** A condition to set; {@link setCondition} computes `lastTransitionTime`. */
export type ConditionUpdate = Omit<Condition, "lastTransitionTime">;

/**
 * Sets one condition, returning a new list (the input is not modified).
 * An existing condition of that type is replaced in place, keeping its
 * `lastTransitionTime` unless its status changes; a new type is appended.
 *
 * @param at when a transition happens: a clock, whose `now()` is read as
 * milliseconds since the Unix epoch (as `systemClock` gives it; start a
 * `FakeClock` at a date), or a Date. Pass a reconcile's `context.clock`.
 * Defaults to `systemClock`.
 * @throws {TypeError} when `type` or `reason` does not match the pattern or
 * exceeds the length `metav1.Condition` requires (316 and 1024 characters),
 * `message` is longer than 32768 characters, or `at` reads an invalid time:
 * the API server would reject the status otherwise.
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
  at: Pick<Clock, "now"> | Date = systemClock,
): Condition[] {
  checkUpdate(update);
  const list = conditions ?? [];
  const index = list.findIndex((condition) => condition.type === update.type);
  const previous = index === -1 ? undefined : list[index];
  const lastTransitionTime = previous && previous.status === update.status
    ? previous.lastTransitionTime
    : formatTime(at);
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
function formatTime(at: Pick<Clock, "now"> | Date): string {
  const ms = at instanceof Date ? at.getTime() : at.now();
  if (!Number.isFinite(ms)) {
    throw new TypeError(`Cannot set a condition: 'at' must read a valid time, got ${ms}`);
  }
  return rfc3339(ms, 0);
}

function checkUpdate(update: ConditionUpdate): void {
  if (!TYPE_PATTERN.test(update.type) || update.type.length > MAX_TYPE) {
    throw new TypeError(
      `Cannot set a condition: type must be CamelCase, optionally prefixed by a domain, ` +
        `at most ${MAX_TYPE} characters, got ${JSON.stringify(update.type)}`,
    );
  }
  if (!REASON_PATTERN.test(update.reason) || update.reason.length > MAX_REASON) {
    throw new TypeError(
      `Cannot set condition ${update.type}: reason must be CamelCase ` +
        `(letters, digits, '_', ',' or ':'), at most ${MAX_REASON} characters, ` +
        `got ${JSON.stringify(update.reason)}`,
    );
  }
  if (update.message.length > MAX_MESSAGE) {
    throw new TypeError(
      `Cannot set condition ${update.type}: message must be at most ${MAX_MESSAGE} ` +
        `characters, got ${update.message.length}`,
    );
  }
}
