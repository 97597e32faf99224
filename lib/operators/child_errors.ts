/**
 * The refusals of a child write that a person must fix, turned into status
 * instead of a silent retry loop: a child the API server rejects as invalid,
 * and an RBAC denial.
 *
 * @module
 */
import { ApiError, isForbidden, isInvalid, type KubeObject } from "../kube/mod.ts";
import { type Condition, findCondition, type ReconcileContext } from "../runtime/mod.ts";
import { setStandardConditions } from "./conditions.ts";
import { rejectSpec } from "./status_writes.ts";

/**
 * Runs `write` (the server-side applies of a primary's children) and turns
 * the refusals a person must fix into status instead of a silent retry loop:
 *
 * - a child the API server rejects as invalid (422) is reported like an
 *   invalid spec, through {@link rejectSpec}: the spec asks for something
 *   Kubernetes refuses, and retrying cannot help until the spec changes;
 * - an RBAC denial (403) sets Ready False and Degraded True with reason
 *   `Forbidden` and the API server's message (which names the verb and the
 *   resource), publishes one Warning Event per distinct message, and is
 *   rethrown, so the key is retried with backoff until someone grants the verb.
 *
 * Other errors are rethrown untouched.
 *
 * @throws {TerminalError} for a rejected child; the original error otherwise.
 * @example
 * ```ts
 * import { guardChildren } from "./child_errors.ts";
 * import { type KubeObject, SERVICES } from "../kube/mod.ts";
 * import type { ReconcileContext } from "../runtime/mod.ts";
 * function applyService(context: ReconcileContext, app: KubeObject, service: KubeObject) {
 *   return guardChildren(context, app, () =>
 *     context.children.apply(SERVICES, service, context.signal),
 *     (message) => ({ phase: "Invalid", message }), () => new Date());
 * }
 * ```
 */
export async function guardChildren<R>(
  context: ReconcileContext,
  primary: KubeObject & { status?: { conditions?: Condition[] } },
  write: () => Promise<R>,
  invalidStatus: (message: string) => unknown,
  now: () => Date,
): Promise<R> {
  try {
    return await write();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (isInvalid(error)) {
      const message = `the API server rejected a child object: ${error.message}`;
      return await rejectSpec(context, primary, message, invalidStatus(message));
    }
    if (isForbidden(error)) await reportForbidden(context, primary, error, now());
    throw error;
  }
}

async function reportForbidden(
  context: ReconcileContext,
  primary: KubeObject & { status?: { conditions?: Condition[] } },
  error: ApiError,
  now: Date,
): Promise<void> {
  const before = findCondition(primary.status?.conditions, "Degraded");
  const conditions = setStandardConditions(primary.status?.conditions, {
    health: "Degraded",
    reason: "Forbidden",
    message: error.message,
    observedGeneration: primary.metadata?.generation,
  }, now);
  // Best effort: the status write may be denied too, and the caller rethrows the denial anyway.
  await context.status({ ...primary.status, conditions }).catch(() => {});
  if (before?.reason !== "Forbidden" || before.message !== error.message) {
    context.events.publish({
      type: "Warning",
      reason: "Forbidden",
      action: "Apply",
      note: error.message,
    });
  }
}
