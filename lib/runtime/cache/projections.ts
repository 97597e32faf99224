/**
 * Projections of what controllers cache: of owned children only what the
 * runtime and reconcilers read of them (the default of a controller's
 * `owns`, see {@link ownedTransform}), of primaries everything but with their
 * repeated strings shared, so that thousands of primaries, Deployments and
 * Services cost a fraction of their size.
 *
 * A projection of an owned child keeps its labels and annotations (less
 * kubectl's last-applied copy), so that a watch's `map` can find its owner
 * by them; their keys and common values are shared strings. The store also
 * keeps a fingerprint of them beside each object (`StoreEntry.fingerprint`),
 * which is what the child applier compares.
 *
 * @example
 * ```ts
 * import { ownedTransform } from "./projections.ts";
 * import { CONFIG_MAPS } from "../../kube/resources.ts";
 * const cached = ownedTransform(CONFIG_MAPS)({
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   metadata: { name: "settings", namespace: "shop", uid: "u1", resourceVersion: "7" },
 *   data: { mode: "fast" },
 * });
 * cached.metadata?.uid; // "u1"
 * "data" in cached; // false
 * ```
 *
 * @module
 */
import type { KubeObject, Resource } from "../../kube/types.ts";
import { sharedObject, sharedString } from "./shared_values.ts";
import { stripTransform } from "./store.ts";

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/**
 * Keeps what the runtime, the child applier and a `map` read of an owned
 * child: its identity, labels, annotations (less kubectl's last-applied
 * copy), revision, owners (their `blockOwnerDeletion` dropped) and deletion
 * mark, and nothing else.
 *
 * @example
 * ```ts
 * import { projectOwned } from "./projections.ts";
 * const service = {
 *   apiVersion: "v1",
 *   kind: "Service",
 *   metadata: { name: "web", labels: { a: "b" } },
 *   spec: { ports: [{ port: 80 }] },
 * };
 * projectOwned(service).metadata?.labels; // { a: "b" }
 * "spec" in projectOwned(service); // false
 * ```
 */
export function projectOwned(object: KubeObject): KubeObject {
  const m = object.metadata ?? {};
  const owners = m.ownerReferences as OwnerReference[] | undefined;
  const labels = sharedRecord(m.labels);
  const annotations = sharedRecord(m.annotations, LAST_APPLIED);
  return {
    apiVersion: sharedString(object.apiVersion),
    kind: sharedString(object.kind),
    metadata: {
      name: m.name,
      namespace: sharedString(m.namespace),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      ...(m.generation !== undefined && { generation: m.generation }),
      ...(labels && { labels }),
      ...(annotations && { annotations }),
      ...(owners && {
        ownerReferences: owners.map((o) => ({
          apiVersion: sharedString(o.apiVersion),
          kind: sharedString(o.kind),
          name: o.name,
          uid: o.uid,
          ...(o.controller !== undefined && { controller: o.controller }),
        })),
      }),
      ...(m.deletionTimestamp && { deletionTimestamp: m.deletionTimestamp }),
    },
  };
}

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** A copy of `record` with shared keys and values, less `omit`; undefined when empty. */
function sharedRecord(
  record: Record<string, string> | undefined,
  omit?: string,
): Record<string, string> | undefined {
  if (!record) return undefined;
  let copy: Record<string, string> | undefined;
  for (const key in record) {
    if (key === omit) continue;
    (copy ??= {})[sharedString(key)] = sharedString(record[key]!);
  }
  return copy;
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
 * timestamps are dropped. The spec and status kept are shared: every
 * converged workload of one size and generation has the same, frozen.
 *
 * @example
 * ```ts
 * import { projectWorkload } from "./projections.ts";
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
  const { apiVersion, kind, metadata } = projectOwned(object);
  const kept = sharedObject({ replicas: spec?.replicas });
  // One literal per outcome, so that every property sits inside the object.
  if (!status) return { apiVersion, kind, metadata, spec: kept };
  const projected = counts(status);
  // A failing condition's message names the workload's ReplicaSet: such a status is its own.
  const own = projected.conditions?.some((c) => c.message !== undefined);
  return {
    apiVersion,
    kind,
    metadata,
    spec: kept,
    status: own ? projected : sharedObject(projected),
  };
}

/** The replica counts of a workload's status and its `Progressing` condition. */
function counts(status: WorkloadStatusFields): WorkloadStatusFields {
  const kept: WorkloadStatusFields = {};
  for (
    const field of [
      "observedGeneration",
      "replicas",
      "readyReplicas",
      "availableReplicas",
      "updatedReplicas",
    ] as const
  ) {
    if (status[field] !== undefined) kept[field] = status[field];
  }
  if (status.conditions) {
    kept.conditions = status.conditions.filter((c) => c.type === "Progressing").map((c) => ({
      type: sharedString(c.type),
      status: sharedString(c.status),
      ...(c.reason !== undefined && { reason: sharedString(c.reason) }),
      ...(c.status === "False" && c.message !== undefined && { message: c.message }),
    }));
  }
  return kept;
}

/**
 * The default transform of a controller's owned `resource`:
 * {@link projectWorkload} for Deployments and StatefulSets, whose replica
 * counts a reconcile reads to report readiness, {@link projectOwned} for
 * every other kind. Pass `transform: stripTransform` in `owns` to cache
 * whole children instead.
 */
export function ownedTransform(resource: Resource): (object: KubeObject) => KubeObject {
  return resource.group === "apps" && WORKLOADS.has(resource.plural)
    ? projectWorkload
    : projectOwned;
}

const WORKLOADS = new Set(["deployments", "statefulsets"]);

/**
 * Keys whose string values repeat from one primary to the next: kinds,
 * namespaces, images, condition types, reasons and messages, phases. Other
 * values (names, uids, URLs, selectors) are mostly unique and would only
 * fill the shared table.
 */
const REPEATED_VALUES = new Set([
  "apiVersion",
  "kind",
  "namespace",
  "image",
  "imagePullPolicy",
  "type",
  "status",
  "reason",
  "message",
  "phase",
  "finalizers",
  "storageClassName",
]);

/** Maps whose values repeat, as well as their keys. */
const REPEATED_MAPS = new Set(["labels", "annotations"]);

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/;

/**
 * Keeps all of a primary (a WebApp, DatabaseCluster or InferenceService) as
 * the store's default transform does (without `managedFields`), but with the
 * strings that repeat across objects held once and equal
 * timestamps within the object, such as the `lastTransitionTime` of
 * conditions set together, held once. A JSON decoder gives every value its
 * own string: with 5,000 WebApps, copies of the same image, namespace and
 * condition messages were a third of the cache. Returns a copy; the values
 * are equal to the input's.
 *
 * @example
 * ```ts
 * import { projectPrimary } from "./projections.ts";
 * const app = JSON.parse(`{"metadata":{"name":"a","managedFields":[]},"spec":{"image":"nginx:1.27"}}`);
 * projectPrimary(app); // { metadata: { name: "a" }, spec: { image: "nginx:1.27" } }
 * ```
 */
export function projectPrimary(object: KubeObject): KubeObject {
  return shareValues(stripTransform(object), undefined, new Map()) as KubeObject;
}

/** `value` with its strings shared; `key` is the field it is under (an array's items share its key). */
function shareValues(value: unknown, key: string | undefined, times: Map<string, string>): unknown {
  if (typeof value === "string") {
    if (key !== undefined && REPEATED_VALUES.has(key)) return sharedString(value);
    if (!RFC3339.test(value)) return value;
    const known = times.get(value);
    if (known !== undefined) return known;
    times.set(value, value);
    return value;
  }
  if (Array.isArray(value)) return value.map((item) => shareValues(item, key, times));
  if (value === null || typeof value !== "object") return value;
  const copy: Record<string, unknown> = {};
  for (const [field, inner] of Object.entries(value)) {
    copy[field] = REPEATED_MAPS.has(field)
      ? shareMap(inner, times)
      : shareValues(inner, field, times);
  }
  return copy;
}

function shareMap(map: unknown, times: Map<string, string>): unknown {
  if (map === null || typeof map !== "object" || Array.isArray(map)) {
    return shareValues(map, undefined, times);
  }
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(map)) {
    copy[key] = typeof value === "string" ? sharedString(value) : value;
  }
  return copy;
}
