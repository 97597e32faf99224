/**
 * Projections of the children kinglet's controllers cache: only what the
 * runtime and the reconcilers read of them, with short strings shared, so
 * that thousands of Deployments and Services cost a fraction of their size.
 *
 * @module
 */
import type { KubeObject } from "../kube/mod.ts";
import { shared } from "./shared_strings.ts";
import { METADATA_FINGERPRINT, metadataFingerprint } from "../runtime/mod.ts";

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/**
 * Keeps what the runtime and the child applier read of an owned child:
 * its identity, revision, owners (their `blockOwnerDeletion` dropped) and a
 * fingerprint of its labels and annotations, and nothing else. The cache of metadata-only children (Services, Secrets) uses
 * it as is.
 *
 * @example
 * ```ts
 * import { projectOwned } from "./projections.ts";
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
      annotations: { [METADATA_FINGERPRINT]: metadataFingerprint(object) },
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
