/**
 * The fake nodes of the local control plane. kwok manages every node with the
 * annotation `kwok.x-k8s.io/node: fake`: it marks them Ready, renews their
 * Leases and moves the pods bound to them to Running.
 *
 * @module
 */
import type { V1Node, V1Taint } from "@kubernetes/client-node";

/** Annotation that hands a node to kwok (its `--manage-nodes-with-annotation-selector`). */
export const KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node";

/** Label every fake node carries, to select them all. */
export const FAKE_NODE_SELECTOR = "type=kwok";

/** GPU types with one fake node each, named `kwok-gpu-<type in lower case>`. */
export const GPU_TYPES = ["A100", "H100", "L40S"] as const;

/**
 * The fake nodes to create: `kwok-node-0` and `kwok-node-1`, plus one node per
 * GPU type (label `kinglet.dev/gpu-type`, 8 `nvidia.com/gpu`) when `gpuNodes`.
 */
export function fakeNodes(gpuNodes: boolean): V1Node[] {
  const specs: NodeSpec[] = [{ name: "kwok-node-0" }, { name: "kwok-node-1" }];
  if (gpuNodes) {
    for (const type of GPU_TYPES) {
      specs.push({
        name: `kwok-gpu-${type.toLowerCase()}`,
        labels: { "kinglet.dev/gpu-type": type },
        extraCapacity: { "nvidia.com/gpu": "8" },
        // As GPU operators taint GPU nodes: only pods that ask for a GPU land there.
        taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }],
      });
    }
  }
  // Distinct InternalIPs, so pods get a hostIP as they would on real nodes.
  return specs.map((spec, i) => fakeNode(spec, `10.1.0.${i + 10}`));
}

/** Whether a node's Ready condition is True. */
export function nodeReady(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

interface NodeSpec {
  name: string;
  labels?: Record<string, string>;
  extraCapacity?: Record<string, string>;
  taints?: V1Taint[];
}

function fakeNode(
  { name, labels = {}, extraCapacity = {}, taints }: NodeSpec,
  ip: string,
): V1Node {
  const capacity = { cpu: "32", memory: "128Gi", pods: "110", ...extraCapacity };
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
