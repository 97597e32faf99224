/**
 * `metav1.Condition`: its shape and the limits the API server holds every
 * condition to. One home for both, because two modules that may not import
 * each other need them: the runtime's `setCondition` refuses what the API
 * server would refuse, and the zod schema of `./crd` writes the same limits
 * into a CRD. The runtime re-exports these names; `./kube` does not.
 *
 * @example
 * ```ts
 * import { REASON_PATTERN, TYPE_PATTERN } from "./condition.ts";
 * TYPE_PATTERN.test("example.com/Synced"); // true
 * REASON_PATTERN.test("not ready"); // false
 * ```
 *
 * @module
 */

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

/** The pattern of a condition type, as `metav1.Condition` requires. */
export const TYPE_PATTERN: RegExp =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
/** The pattern of a condition reason, as `metav1.Condition` requires. */
export const REASON_PATTERN: RegExp = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
/** The longest condition message `metav1.Condition` accepts. */
export const MAX_MESSAGE = 32768;
/** The longest condition type `metav1.Condition` accepts. */
export const MAX_TYPE = 316;
/** The longest condition reason `metav1.Condition` accepts. */
export const MAX_REASON = 1024;
