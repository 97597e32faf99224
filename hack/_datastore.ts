/**
 * Where the local API server keeps its data: etcd (the default), or SQLite
 * through kine, the etcd shim a single-server k3s runs. Both speak etcd's
 * gRPC API to kube-apiserver and to etcdctl; only etcd has the health
 * endpoint and the JSON gateway.
 *
 * @module
 */
import { join } from "node:path";
import type { Layout } from "../lib/testing/_components.ts";
import { type DatastoreProcess, ETCD } from "../lib/testing/_control_plane.ts";

/** The datastores the local control plane can run on. */
export const DATASTORES = ["etcd", "kine"] as const;

/** One of {@link DATASTORES}. */
export type Datastore = typeof DATASTORES[number];

/**
 * The datastore named by `KINGLET_DATASTORE`, `etcd` when unset.
 *
 * @throws {TypeError} when it names no known datastore.
 */
export function datastoreFromEnv(): Datastore {
  const named = Deno.env.get("KINGLET_DATASTORE") || "etcd";
  if (!(DATASTORES as readonly string[]).includes(named)) {
    throw new TypeError(
      `KINGLET_DATASTORE=${named} is not a datastore: use ${DATASTORES.join(" or ")}`,
    );
  }
  return named as Datastore;
}

/**
 * kine on loopback over SQLite in the cluster's folder (WAL, as k3s runs
 * it), its metrics listener off. It listens where etcd's client URL would.
 * kine keeps at least 1,000 revisions through any compaction by default;
 * here it keeps none, so that a compaction on demand does what etcd's does
 * and a watch from before it gets 410 Gone, as on a k3s server that has
 * written more than 1,000 revisions since.
 */
export function kineArgs(layout: Pick<Layout, "dir" | "ports">): string[] {
  const db = join(layout.dir, "kine", "state.db");
  return [
    `--endpoint=sqlite://${db}?_journal=WAL&cache=shared&_busy_timeout=30000`,
    `--listen-address=127.0.0.1:${layout.ports.etcdClient}`,
    "--metrics-bind-address=0",
    "--compact-min-retain=0",
  ];
}

/** kine's process: its port open is all the health it reports. */
const KINE: DatastoreProcess = { name: "kine", args: kineArgs, healthy: kineListening };

/** How to run and probe `datastore`. */
export function datastoreProcess(datastore: Datastore): DatastoreProcess {
  return datastore === "etcd" ? ETCD : KINE;
}

async function kineListening(endpoint: string, signal?: AbortSignal): Promise<boolean> {
  signal?.throwIfAborted();
  try {
    const { port } = new URL(endpoint);
    const connection = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
    connection.close();
    return true;
  } catch {
    return false;
  }
}
