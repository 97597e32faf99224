/**
 * The objects a full local cluster starts with. Fake nodes: kwok manages every
 * node with the annotation `kwok.x-k8s.io/node: fake`, marks them Ready,
 * renews their Leases and moves the pods bound to them to Running. Storage: a
 * default StorageClass `standard` and a pool of pre-created
 * PersistentVolumes, so the PersistentVolumeClaims of StatefulSets bind
 * through kube-controller-manager's volume binder as they would on a cluster
 * with a provisioner. No volume is ever mounted: kwok runs no containers.
 *
 * @module
 */
import type { KubeObject } from "../../kube/types.ts";

/** Annotation that hands a node to kwok (its `--manage-nodes-with-annotation-selector`). */
export const KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node";

/** Label every fake node carries, to select them all. */
export const FAKE_NODE_SELECTOR = "type=kwok";

/** GPU types with one fake node each, named `kwok-gpu-<type in lower case>`. */
const GPU_TYPES = ["A100", "H100", "L40S"] as const;

/**
 * The fake nodes to create: `kwok-node-0` and `kwok-node-1`, plus one node per
 * GPU type (label `kinglet.dev/gpu-type`, 8 `nvidia.com/gpu`) when `gpuNodes`;
 * each takes `podsPerNode` pods.
 */
export function fakeNodes(gpuNodes: boolean, podsPerNode = 110): KubeObject[] {
  if (!(Number.isInteger(podsPerNode) && podsPerNode > 0)) {
    throw new RangeError(
      `Cannot start the cluster: 'podsPerNode' must be a whole number above 0, got ${podsPerNode}`,
    );
  }
  const pods = String(podsPerNode);
  const specs: NodeSpec[] = [{ name: "kwok-node-0", pods }, { name: "kwok-node-1", pods }];
  if (gpuNodes) {
    for (const type of GPU_TYPES) {
      specs.push({
        name: `kwok-gpu-${type.toLowerCase()}`,
        labels: { "kinglet.dev/gpu-type": type },
        pods,
        extraCapacity: { "nvidia.com/gpu": "8" },
        // As GPU operators taint GPU nodes: only pods that ask for a GPU land there.
        taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }],
      });
    }
  }
  // Distinct InternalIPs, so pods get a hostIP as they would on real nodes.
  return specs.map((spec, i) => fakeNode(spec, `10.1.0.${i + 10}`));
}

/** A Node as the API server lists it: what {@link nodeReady} reads. */
export interface ListedNode {
  status?: { conditions?: { type: string; status: string }[] };
}

/** Whether a node's Ready condition is True. */
export function nodeReady(node: ListedNode): boolean {
  return node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

interface NodeSpec {
  name: string;
  labels?: Record<string, string>;
  pods: string;
  extraCapacity?: Record<string, string>;
  taints?: { key: string; value: string; effect: string }[];
}

function fakeNode(
  { name, labels = {}, pods, extraCapacity = {}, taints }: NodeSpec,
  ip: string,
): KubeObject {
  const capacity = { cpu: "32", memory: "128Gi", pods, ...extraCapacity };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      annotations: { [KWOK_NODE_ANNOTATION]: "fake" },
      // The well-known labels a kubelet would set, so node selectors on them work.
      labels: {
        type: "kwok",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        ...labels,
      },
    },
    ...(taints && { spec: { taints } }),
    status: {
      capacity,
      allocatable: capacity,
      addresses: [{ type: "InternalIP", address: ip }, { type: "Hostname", address: name }],
    },
  };
}

/** Name of the default StorageClass. */
const STORAGE_CLASS = "standard";

/** The default StorageClass; it provisions nothing, the pool below is all there is. */
export function storageClass(): KubeObject {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: {
      name: STORAGE_CLASS,
      annotations: { "storageclass.kubernetes.io/is-default-class": "true" },
    },
    provisioner: "kubernetes.io/no-provisioner",
    volumeBindingMode: "Immediate",
    reclaimPolicy: "Retain",
  };
}

/** `count` volumes of 100Gi each, named `kwok-pv-<i>`. */
export function volumePool(count: number): KubeObject[] {
  return Array.from({ length: count }, (_, i) => ({
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name: `kwok-pv-${i}`, labels: { type: "kwok" } },
    spec: {
      storageClassName: STORAGE_CLASS,
      capacity: { storage: "100Gi" },
      accessModes: ["ReadWriteOnce"],
      persistentVolumeReclaimPolicy: "Retain",
      hostPath: { path: `/var/lib/kwok-pv-${i}` },
    },
  }));
}
