/**
 * What kinglet's reconcilers report besides status itself: an invalid spec
 * is reported once (condition, one Warning Event, a terminal error), and
 * phase changes are announced as Events. Status goes through the reconcile
 * context's `status`, which skips a status the primary already has.
 *
 * @example
 * ```ts
 * import { announcePhase } from "./status_writes.ts";
 * const notes: string[] = [];
 * const events = { publish: (init: { reason: string }) => void notes.push(init.reason) };
 * announcePhase(events, { status: { phase: "Progressing" } }, "Ready", "WebApp is Ready");
 * notes; // ["Ready"]
 * ```
 *
 * @module
 */
import type { KubeObject } from "../kube/mod.ts";
import {
  type Condition,
  findCondition,
  type ReconcileContext,
  type ReconcileEvents,
  TerminalError,
} from "../runtime/mod.ts";

/**
 * Records an invalid spec: writes `status` (with InvalidSpec True), publishes
 * one Warning Event unless the same message was already reported, and throws
 * a {@link TerminalError} so the key is not retried until the spec changes.
 *
 * @throws {TerminalError} always, once the status is written.
 */
export async function rejectSpec(
  context: ReconcileContext,
  primary: KubeObject & { status?: { conditions?: Condition[] } },
  message: string,
  status: unknown,
): Promise<never> {
  const before = findCondition(primary.status?.conditions, "InvalidSpec");
  await context.status(status);
  if (before?.status !== "True" || before.message !== message) {
    context.events.publish({
      type: "Warning",
      reason: "InvalidSpec",
      action: "Validate",
      note: message,
    });
  }
  throw new TerminalError(`invalid spec: ${message}`);
}

/**
 * Publishes an Event about the primary when its phase changed: a Warning
 * when it turns Degraded (someone may need to act), a Normal one otherwise.
 */
export function announcePhase(
  events: ReconcileEvents,
  primary: KubeObject & { status?: { phase?: string } },
  phase: string | undefined,
  note: string,
): void {
  if (!phase || primary.status?.phase === phase) return;
  const type = phase === "Degraded" ? "Warning" : "Normal";
  events.publish({ type, reason: phase, action: "Reconcile", note });
}
