/**
 * The start sequence of the local control plane: the datastore and
 * kube-apiserver as every local control plane starts them
 * (`_control_plane.ts`), then, unless only the API server is asked for, the
 * API server's clients (controller manager, scheduler, kwok), the fake nodes
 * and the storage. Each wait names the component it depends on, so a failure
 * can quote the right log.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ApiClient } from "./_api.ts";
import {
  FAKE_NODE_SELECTOR,
  fakeNodes,
  type ListedNode,
  nodeReady,
  storageClass,
  volumePool,
} from "./_cluster_objects.ts";
import { controllerManagerArgs, kwokArgs, schedulerArgs } from "./_components.ts";
import { type ControlPlane, StartFailure } from "./_control_plane.ts";
import { type Datastore, datastoreProcess } from "./_datastore.ts";

/** PersistentVolumes in the pool: enough for the e2e suite and the samples. */
const VOLUMES = 24;
const NODES_TIMEOUT_MS = 60_000;

/** What a successful boot hands to the cluster object. */
export interface Booted {
  kubeconfig: string;
  server: string;
  etcdEndpoint: string;
}

/** How to boot: the folder `plane` owns, its datastore, nodes and API server flags. */
export interface BootOptions {
  dir: string;
  datastore: Datastore;
  /** Only the datastore and kube-apiserver, as envtest starts them. */
  apiServerOnly: boolean;
  gpuNodes: boolean;
  podsPerNode: number;
  apiserverFlags: readonly string[];
  signal?: AbortSignal;
}

/**
 * Runs every step in `plane`; on failure the caller stops `plane`.
 *
 * @throws {StartFailure} when a component exits or does not get ready.
 */
export async function bootCluster(plane: ControlPlane, options: BootOptions): Promise<Booted> {
  if (options.datastore === "kine") await Deno.mkdir(join(options.dir, "kine"));
  const started = await plane.start({
    clients: options.apiServerOnly ? {} : {
      "kube-controller-manager": { commonName: "system:kube-controller-manager" },
      "kube-scheduler": { commonName: "system:kube-scheduler" },
      kwok: { commonName: "kwok", organizations: ["system:masters"] },
    },
    datastore: datastoreProcess(options.datastore),
    apiserverFlags: options.apiserverFlags,
  });
  const { kubeconfigs } = started;
  const booted = {
    kubeconfig: kubeconfigs["admin"]!,
    server: started.server,
    etcdEndpoint: started.etcdEndpoint,
  };
  if (options.apiServerOnly) return booted;
  const layout = {
    pki: started.layout.pki,
    kubeconfigs: {
      controllerManager: kubeconfigs["kube-controller-manager"]!,
      scheduler: kubeconfigs["kube-scheduler"]!,
      kwok: kubeconfigs["kwok"]!,
    },
    kwokStages: fileURLToPath(new URL("./kwok_stages.yaml", import.meta.url)),
  };
  const manager = await plane.spawn("kube-controller-manager", controllerManagerArgs(layout));
  await plane.spawn("kube-scheduler", schedulerArgs(layout));
  const kwok = await plane.spawn("kwok", kwokArgs(layout));
  using api = await ApiClient.connect(started.server, started.admin);
  const { signal } = options;
  const nodes = fakeNodes(options.gpuNodes, options.podsPerNode);
  const objects: [string, { metadata?: { name?: string } }][] = [
    ...nodes.map((n) => ["/api/v1/nodes", n] as [string, typeof n]),
    ["/apis/storage.k8s.io/v1/storageclasses", storageClass()],
    ...volumePool(VOLUMES).map((v) => ["/api/v1/persistentvolumes", v] as [string, typeof v]),
  ];
  for (const [path, object] of objects) {
    const created = await api.request("POST", path, { body: object, signal });
    if (created.status !== 201) {
      const body = JSON.stringify(created.body);
      throw new StartFailure(
        started.apiserver,
        `creating ${path} ${object.metadata?.name} answered ${created.status}: ${body}`,
      );
    }
  }
  const get = (path: string) => api.request("GET", path, { signal });
  const nodesPath = `/api/v1/nodes?labelSelector=${encodeURIComponent(FAKE_NODE_SELECTOR)}`;
  // The controller manager creates the default ServiceAccount, without which admission rejects pods.
  await Promise.all([
    plane.waitFor(
      kwok,
      `kwok to make ${nodes.length} nodes Ready`,
      NODES_TIMEOUT_MS,
      async () => {
        const list = await get(nodesPath);
        const items = list.status === 200 ? (list.body as { items: ListedNode[] }).items : [];
        return items.length === nodes.length && items.every(nodeReady);
      },
    ),
    plane.waitFor(
      manager,
      "kube-controller-manager to create the default ServiceAccount",
      NODES_TIMEOUT_MS,
      async () => (await get("/api/v1/namespaces/default/serviceaccounts/default")).status === 200,
    ),
  ]);
  plane.progress(`${nodes.length} kwok nodes Ready, default ServiceAccount present`);
  return booted;
}
