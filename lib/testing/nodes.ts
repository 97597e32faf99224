/**
 * Nodes for the tests of an operator that selects, counts or waits for
 * Nodes: a Node with the labels the test gives it and a Ready condition the
 * test sets, on the in-memory API server ({@link MemoryCluster.node}) and on
 * a real one ({@link TestCluster.node}).
 *
 * A test Node is managed by no kubelet and no kwok: its Ready condition is
 * what the test last set, written through the status subresource as a
 * kubelet writes it (reason `KubeletReady` or `KubeletNotReady`, a
 * `lastTransitionTime` that moves only when the status does). The local
 * control plane's kwok hands out Nodes it keeps Ready on its own (it puts a
 * `Ready=False` back to `True` at once, and keeps a Node Ready for minutes
 * after its annotation is gone), so a test Node carries no kwok annotation.
 * It is tainted `kinglet.dev/test-node:NoSchedule`, so that the scheduler of
 * a shared cluster places no pod on it, where nothing would ever start one.
 *
 * On a real control plane, Nodes are cluster-wide: {@link TestCluster.node}
 * names a Node after the test's namespace (`<namespace>-<name>`, read it
 * from {@link TestNode.name}), renews the Node's Lease in `kube-node-lease`
 * every 10 s, as a kubelet does, so that the controller manager does not mark
 * it `Unknown` for want of a heartbeat after 40 s, and deletes the Nodes and
 * their Leases when the cluster stops. Give the labels values of the test's
 * own too (e.g. with `cluster.namespace` in them) when an operator selects
 * Nodes by label: other tests' Nodes share the cluster.
 *
 * @example A Node that moves to another site and stops being Ready
 * ```ts
 * import { MemoryCluster } from "./memory_cluster.ts";
 * import { type KubeObject, NODES } from "../kube/mod.ts";
 * type Node = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };
 *
 * const cluster = new MemoryCluster();
 * const node = await cluster.node("edge-1", { labels: { "example.dev/site": "a" } });
 * const ready = () =>
 *   cluster.object<Node>(NODES, node.name)?.status?.conditions?.find((c) => c.type === "Ready")
 *     ?.status;
 * if (ready() !== "True") throw new Error("a test Node starts Ready");
 * await node.setReady(false);
 * await node.setLabels({ "example.dev/site": "b" });
 * if (ready() !== "False") throw new Error("the test took its readiness away");
 * cluster.object(NODES, "edge-1")?.metadata?.labels; // { "example.dev/site": "b" }
 * ```
 *
 * @module
 */
import { type Clock, every } from "../async/clock.ts";
import type { KubeClient } from "../kube/client.ts";
import { microTime } from "../kube/micro_time.ts";
import { LEASES, NODES } from "../kube/resources.ts";
import type { KubeObject } from "../kube/types.ts";
import { rfc3339 } from "../_rfc3339.ts";

/** Options of {@link MemoryCluster.node} and {@link TestCluster.node}. */
export interface TestNodeOptions {
  /** The Node's labels. Defaults to none. */
  labels?: Record<string, string>;
  /**
   * Whether the Node's Ready condition starts `True`, or `False`.
   *
   * @default true
   */
  ready?: boolean;
  /** Aborts the requests that create the Node. */
  signal?: AbortSignal;
}

/** A Node of a test; see the module documentation. */
export interface TestNode {
  /** The Node's name: on a real cluster, the test's namespace, a hyphen and the name asked for. */
  readonly name: string;
  /**
   * Sets the Node's Ready condition to `True` or `False` through the status
   * subresource, with a fresh `lastHeartbeatTime`.
   *
   * @throws {ApiError} when the Node is gone (404) or the write is refused.
   */
  setReady(ready: boolean, signal?: AbortSignal): Promise<void>;
  /**
   * Adds or changes the Node's labels, and removes those given `null`
   * (a merge patch: the labels not named stay).
   *
   * @throws {ApiError} when the Node is gone (404) or the write is refused.
   */
  setLabels(labels: Record<string, string | null>, signal?: AbortSignal): Promise<void>;
}

/** The taint every test Node carries, so that no pod is scheduled onto it. */
const TEST_NODE_TAINT = {
  key: "kinglet.dev/test-node",
  effect: "NoSchedule",
} as const;

/** What a test Node needs of a client: a `KubeClient` or a `MemoryCluster`. */
export type NodeClient = Pick<KubeClient, "create" | "get" | "patch" | "delete">;

/** A Node's condition, as a kubelet writes it. */
interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

type Node = KubeObject & { status?: { conditions?: NodeCondition[] } };

/**
 * Creates the Node `name` with `options.labels`, the test taint and, through
 * the status subresource, its Ready condition. Behind
 * {@link MemoryCluster.node} and {@link TestCluster.node}.
 *
 * @throws {ApiError} when a Node of that name exists (409) or the write is refused.
 */
export async function createTestNode(
  client: NodeClient,
  clock: Pick<Clock, "now">,
  name: string,
  options: TestNodeOptions = {},
): Promise<TestNode & { uid: string }> {
  const signal = options.signal;
  const created = await client.create<Node>(NODES, {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, ...(options.labels && { labels: { ...options.labels } }) },
    spec: { taints: [{ ...TEST_NODE_TAINT }] },
  }, signal ? { signal } : {});
  const node = new Handle(client, clock, name, created.metadata?.uid ?? "");
  await node.setReady(options.ready ?? true, signal);
  return node;
}

class Handle implements TestNode {
  constructor(
    readonly client: NodeClient,
    readonly clock: Pick<Clock, "now">,
    readonly name: string,
    readonly uid: string,
  ) {}

  async setReady(ready: boolean, signal?: AbortSignal): Promise<void> {
    const options = signal ? { signal } : {};
    const node = await this.client.get<Node>(NODES, this.name, options);
    const conditions = node.status?.conditions ?? [];
    const before = conditions.find((c) => c.type === "Ready");
    const now = rfc3339(this.clock.now(), 0);
    const status = ready ? "True" : "False";
    const condition: NodeCondition = {
      type: "Ready",
      status,
      reason: ready ? "KubeletReady" : "KubeletNotReady",
      message: ready ? "the test made this Node Ready" : "the test took this Node's readiness away",
      lastHeartbeatTime: now,
      lastTransitionTime: before?.status === status ? before.lastTransitionTime ?? now : now,
    };
    // A merge patch replaces the list whole: the other conditions go along unchanged.
    const next = [...conditions.filter((c) => c.type !== "Ready"), condition];
    await this.client.patch(NODES, this.name, { status: { conditions: next } }, {
      type: "merge",
      subresource: "status",
      ...options,
    });
  }

  async setLabels(labels: Record<string, string | null>, signal?: AbortSignal): Promise<void> {
    await this.client.patch(NODES, this.name, { metadata: { labels } }, {
      type: "merge",
      ...(signal && { signal }),
    });
  }
}

/** Where a kubelet keeps its Node's Lease. */
const NODE_LEASE_NAMESPACE = "kube-node-lease";
/** A kubelet's: a Lease of 40 s, renewed every 10 s. */
const LEASE_SECONDS = 40;
const RENEW_EVERY_MS = 10_000;

/**
 * The test Nodes of a real cluster: each created with a Lease in
 * `kube-node-lease`, renewed every 10 s until {@link ClusterNodes.stop},
 * which deletes the Nodes and their Leases.
 */
export class ClusterNodes {
  readonly #client: NodeClient;
  readonly #clock: Clock;
  readonly #names: string[] = [];
  readonly #stop = new AbortController();
  #beating: Promise<void> | undefined;

  /** Nodes written through `client`, their Leases renewed on `clock`. */
  constructor(client: NodeClient, clock: Clock) {
    this.#client = client;
    this.#clock = clock;
  }

  /**
   * Creates the Node `name` (see {@link createTestNode}) and its Lease,
   * owned by it, and renews the Lease from now on. The Node is deleted on
   * {@link ClusterNodes.stop} even when this fails halfway.
   *
   * @throws {ApiError} when the Node or its Lease cannot be created.
   */
  async add(name: string, options: TestNodeOptions = {}): Promise<TestNode> {
    this.#names.push(name);
    const node = await createTestNode(this.#client, this.#clock, name, options);
    await this.#client.create(LEASES, {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name,
        namespace: NODE_LEASE_NAMESPACE,
        ownerReferences: [{ apiVersion: "v1", kind: "Node", name, uid: node.uid }],
      },
      spec: {
        holderIdentity: name,
        leaseDurationSeconds: LEASE_SECONDS,
        renewTime: microTime(this.#clock.now()),
      },
    }, { namespace: NODE_LEASE_NAMESPACE, ...(options.signal && { signal: options.signal }) });
    this.#beating ??= this.#beat();
    return node;
  }

  /** Stops renewing, then deletes every Node added and its Lease (those already gone are fine). */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#beating;
    for (const name of this.#names.splice(0)) {
      await this.#client.delete(NODES, name, { ignoreNotFound: true });
      await this.#client.delete(LEASES, name, {
        namespace: NODE_LEASE_NAMESPACE,
        ignoreNotFound: true,
      });
    }
  }

  #beat(): Promise<void> {
    const signal = this.#stop.signal;
    return every(this.#clock, RENEW_EVERY_MS, signal, async () => {
      const spec = { spec: { renewTime: microTime(this.#clock.now()) } };
      for (const name of this.#names) {
        // A renewal that fails is tried again at the next beat, well within the Lease's 40 s.
        await this.#client.patch(LEASES, name, spec, {
          type: "merge",
          namespace: NODE_LEASE_NAMESPACE,
          signal,
        }).catch(() => {});
      }
    });
  }
}
