/**
 * Status writes of kinglet's reconcilers: the status subresource is applied
 * only when it changed, an invalid spec is reported once (condition, one
 * Warning Event, a terminal error), and phase changes are announced as Events.
 *
 * @example
 * ```ts
 * import { sameJson } from "./status_writes.ts";
 * if (!sameJson({ a: 1, b: [2] }, { b: [2], a: 1 })) throw new Error("key order matters");
 * ```
 *
 * @module
 */
import { isNotFound, type KubeObject, type Resource } from "../kube/mod.ts";
import { TerminalError } from "../runtime/mod.ts";
import { type Condition, findCondition } from "./conditions.ts";
import { FIELD_MANAGER } from "./labels.ts";
import type { OperatorDeps } from "./operator_deps.ts";

/**
 * Applies `status` to the primary's status subresource unless it already
 * reads the same. Returns whether it wrote (not when the primary is gone).
 */
export async function writeStatus(
  deps: OperatorDeps,
  resource: Resource,
  primary: KubeObject,
  status: unknown,
  signal: AbortSignal,
): Promise<boolean> {
  if (sameJson(primary.status, status)) return false;
  const { name, namespace } = primary.metadata ?? {};
  try {
    await deps.client.apply(resource, {
      apiVersion: primary.apiVersion,
      kind: primary.kind,
      metadata: { name, namespace },
      status,
    }, { fieldManager: FIELD_MANAGER, force: true, subresource: "status", signal });
  } catch (error) {
    // Deleted while we reconciled: there is no status left to write.
    if (isNotFound(error)) return false;
    throw error;
  }
  return true;
}

/**
 * Records an invalid spec: writes `status` (with InvalidSpec True), publishes
 * one Warning Event unless the same message was already reported, and throws
 * a {@link TerminalError} so the key is not retried until the spec changes.
 */
export async function rejectSpec(
  deps: OperatorDeps,
  resource: Resource,
  primary: KubeObject & { status?: { conditions?: Condition[] } },
  message: string,
  status: unknown,
  signal: AbortSignal,
): Promise<never> {
  const before = findCondition(primary.status?.conditions, "InvalidSpec");
  await writeStatus(deps, resource, primary, status, signal);
  if (before?.status !== "True" || before.message !== message) {
    deps.events.publish(primary, {
      type: "Warning",
      reason: "InvalidSpec",
      action: "Validate",
      note: message,
    });
  }
  throw new TerminalError(`invalid spec: ${message}`);
}

/**
 * Publishes an Event when the phase changed: a Warning when the primary turns
 * Degraded (someone may need to act), a Normal one otherwise.
 */
export function announcePhase(
  deps: OperatorDeps,
  primary: KubeObject & { status?: { phase?: string } },
  phase: string | undefined,
  note: string,
): void {
  if (!phase || primary.status?.phase === phase) return;
  const type = phase === "Degraded" ? "Warning" : "Normal";
  deps.events.publish(primary, { type, reason: phase, action: "Reconcile", note });
}

/** Deep equality of JSON values, ignoring key order (the API server sorts keys). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((v, i) => sameJson(v, other[i]));
  }
  const ak = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const bk = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ak.length === bk.length &&
    ak.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
