/**
 * The refusals of a child write that a person must fix, turned into status
 * instead of a silent retry loop: a child the API server rejects as invalid,
 * and an RBAC denial.
 *
 * @module
 */
import { ApiError, isForbidden, isInvalid, type KubeObject, type Resource } from "../kube/mod.ts";
import { type Condition, findCondition, setStandardConditions } from "./conditions.ts";
import type { OperatorDeps } from "./operator_deps.ts";
import { rejectSpec, writeStatus } from "./status_writes.ts";

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
 * import { applyChildAsKinglet, type OperatorDeps } from "./operator_deps.ts";
 * import { type KubeObject, SERVICES } from "../kube/mod.ts";
 * import { WEB_APPS } from "./webapp/kind.ts";
 * declare const deps: OperatorDeps, app: KubeObject, service: KubeObject, signal: AbortSignal;
 * const applied = await guardChildren(deps, WEB_APPS, app, () =>
 *   applyChildAsKinglet(deps)(SERVICES, service, signal), (message) => ({ phase: "Invalid", message }), signal);
 * ```
 */
export async function guardChildren<R>(
  deps: OperatorDeps,
  resource: Resource,
  primary: KubeObject & { status?: { conditions?: Condition[] } },
  write: () => Promise<R>,
  invalidStatus: (message: string) => unknown,
  signal: AbortSignal,
): Promise<R> {
  try {
    return await write();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (isInvalid(error)) {
      const message = `the API server rejected a child object: ${error.message}`;
      return await rejectSpec(deps, resource, primary, message, invalidStatus(message), signal);
    }
    if (isForbidden(error)) await reportForbidden(deps, resource, primary, error, signal);
    throw error;
  }
}

async function reportForbidden(
  deps: OperatorDeps,
  resource: Resource,
  primary: KubeObject & { status?: { conditions?: Condition[] } },
  error: ApiError,
  signal: AbortSignal,
): Promise<void> {
  const before = findCondition(primary.status?.conditions, "Degraded");
  const conditions = setStandardConditions(primary.status?.conditions, {
    health: "Degraded",
    reason: "Forbidden",
    message: error.message,
    observedGeneration: primary.metadata?.generation,
  }, deps.now?.() ?? new Date());
  // Best effort: the status write may be denied too, and the caller rethrows the denial anyway.
  await writeStatus(deps, resource, primary, { ...primary.status, conditions }, signal)
    .catch(() => {});
  if (before?.reason !== "Forbidden" || before.message !== error.message) {
    deps.events.publish(primary, {
      type: "Warning",
      reason: "Forbidden",
      action: "Apply",
      note: error.message,
    });
  }
}
