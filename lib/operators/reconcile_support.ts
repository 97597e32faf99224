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
import {
  ApiError,
  isForbidden,
  isInvalid,
  isNotFound,
  type KubeClient,
  type KubeObject,
  type Resource,
} from "../kube/mod.ts";
import { type EventInit, TerminalError } from "../runtime/mod.ts";
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
 * import { type KubeObject, SERVICES } from "../kube/mod.ts";
 * import { WEB_APPS } from "./webapp/kind.ts";
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
 * The same string for the same short value: a watch decodes every field of
 * every object into a string of its own, so without this thousands of
 * children each hold their own copy of `apps/v1`, `default` or
 * `NewReplicaSetAvailable`. Only values seen while the table has room are
 * shared, which bounds it whatever the cluster holds.
 */
const SHARED = new Map<string, string>();
const SHARED_MAX = 4096;

function shared<T extends string | undefined>(value: T): T {
  if (value === undefined || value.length > 64) return value;
  const known = SHARED.get(value);
  if (known !== undefined) return known as T;
  if (SHARED.size < SHARED_MAX) SHARED.set(value, value);
  return value;
}

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/**
 * Keeps what the runtime and the child applier read of an owned child:
 * its identity, revision and owners (their `blockOwnerDeletion` dropped), and
 * nothing else. The cache of metadata-only children (Services, Secrets) uses
 * it as is.
 *
 * @example
 * ```ts
 * import { projectOwned } from "./reconcile_support.ts";
 * projectOwned({ apiVersion: "v1", kind: "Service", metadata: { name: "web", labels: { a: "b" } } })
 *   .metadata?.labels; // undefined
 * ```
 */
export function projectOwned(object: KubeObject): KubeObject {
  const m = object.metadata ?? {};
  const owners = m.ownerReferences as OwnerReference[] | undefined;
  return {
    apiVersion: shared(object.apiVersion),
    kind: shared(object.kind),
    metadata: {
      name: m.name,
      namespace: shared(m.namespace),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      ...(m.generation !== undefined && { generation: m.generation }),
      ...(owners && {
        ownerReferences: owners.map((o) => ({
          apiVersion: shared(o.apiVersion),
          kind: shared(o.kind),
          name: o.name,
          uid: o.uid,
          ...(o.controller !== undefined && { controller: o.controller }),
        })),
      }),
      ...(m.deletionTimestamp && { deletionTimestamp: m.deletionTimestamp }),
    },
  };
}

interface WorkloadStatusFields {
  observedGeneration?: number;
  replicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  updatedReplicas?: number;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

/**
 * Keeps what reconcilers read of a workload child (a Deployment or a
 * StatefulSet): {@link projectOwned}, `spec.replicas`, the replica counts
 * of its status and its `Progressing` condition (with its message only
 * while it fails). The pod template, most of its bytes, and the condition
 * timestamps are dropped.
 *
 * @example
 * ```ts
 * import { projectWorkload } from "./reconcile_support.ts";
 * projectWorkload({
 *   apiVersion: "apps/v1",
 *   kind: "Deployment",
 *   metadata: { name: "web" },
 *   spec: { replicas: 2, template: {} },
 *   status: { replicas: 2, conditions: [{ type: "Available", status: "True" }] },
 * }).status; // { replicas: 2, conditions: [] }
 * ```
 */
export function projectWorkload(object: KubeObject): KubeObject {
  const spec = object.spec as { replicas?: number } | undefined;
  const status = object.status as WorkloadStatusFields | undefined;
  const projected: KubeObject = { ...projectOwned(object), spec: { replicas: spec?.replicas } };
  if (!status) return projected;
  const counts: WorkloadStatusFields = {};
  for (
    const field of [
      "observedGeneration",
      "replicas",
      "readyReplicas",
      "availableReplicas",
      "updatedReplicas",
    ] as const
  ) {
    if (status[field] !== undefined) counts[field] = status[field];
  }
  if (status.conditions) {
    counts.conditions = status.conditions.filter((c) => c.type === "Progressing").map((c) => ({
      type: shared(c.type),
      status: shared(c.status),
      ...(c.reason !== undefined && { reason: shared(c.reason) }),
      ...(c.status === "False" && c.message !== undefined && { message: c.message }),
    }));
  }
  projected.status = counts;
  return projected;
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
