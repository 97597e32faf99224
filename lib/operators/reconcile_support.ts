/**
 * What the three reconcilers share: server-side apply of children, status
 * writes that happen only when the status changed, the invalid-spec path
 * (condition, one Warning Event, a terminal error), and the cache projection
 * of children.
 *
 * @example
 * ```ts
 * import { sameJson } from "./reconcile_support.ts";
 * sameJson({ a: 1, b: [2] }, { b: [2], a: 1 }); // true
 * ```
 *
 * @module
 */
import type { KubeClient } from "../kube/client.ts";
import { ApiError, isForbidden, isInvalid, isNotFound } from "../kube/errors.ts";
import type { KubeObject, Resource } from "../kube/types.ts";
import { TerminalError } from "../runtime/controller.ts";
import type { EventInit } from "../runtime/events.ts";
import { type Condition, findCondition, setStandardConditions } from "./conditions.ts";
import { FIELD_MANAGER, MANAGED_BY, MANAGED_BY_LABEL } from "./labels.ts";

/** What every reconciler is given by the CLI. */
export interface OperatorDeps {
  client: Pick<KubeClient, "apply" | "create" | "delete" | "list" | "get" | "patch">;
  events: { publish(regarding: KubeObject, init: EventInit): void };
  /** Defaults to `new Date()`. */
  now?: () => Date;
}

/** Selects the children kinglet manages, so their caches hold nothing else. */
export const MANAGED_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;

/** Server-side applies `child` as kinglet, taking over conflicting fields. */
export function applyChild<T extends KubeObject>(
  deps: OperatorDeps,
  resource: Resource,
  child: T,
  signal: AbortSignal,
): Promise<T> {
  return deps.client.apply(resource, child, { fieldManager: FIELD_MANAGER, force: true, signal });
}

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
 * import { applyChild, guardChildren, type OperatorDeps } from "./reconcile_support.ts";
 * import { SERVICES } from "../kube/resources.ts";
 * import type { KubeObject } from "../kube/types.ts";
 * import { WEB_APPS } from "./webapp/schema.ts";
 * declare const deps: OperatorDeps, app: KubeObject, service: KubeObject, signal: AbortSignal;
 * const applied = await guardChildren(deps, WEB_APPS, app, () =>
 *   applyChild(deps, SERVICES, service, signal), (message) => ({ phase: "Invalid", message }), signal);
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

/**
 * Keeps what reconcilers read of a workload child (identity, owners,
 * `spec.replicas` and status), dropping the pod template that is most of
 * its bytes.
 */
export function projectWorkload(object: KubeObject): KubeObject {
  const m = object.metadata ?? {};
  const spec = object.spec as { replicas?: number } | undefined;
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      generation: m.generation,
      ownerReferences: m.ownerReferences,
      ...(m.deletionTimestamp && { deletionTimestamp: m.deletionTimestamp }),
    },
    spec: { replicas: spec?.replicas },
    status: object.status,
  };
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

/** Publishes a Normal Event when the phase changed. */
export function announcePhase(
  deps: OperatorDeps,
  primary: KubeObject & { status?: { phase?: string } },
  phase: string | undefined,
  note: string,
): void {
  if (!phase || primary.status?.phase === phase) return;
  deps.events.publish(primary, { type: "Normal", reason: phase, action: "Reconcile", note });
}
