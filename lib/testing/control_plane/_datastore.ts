/**
 * Where the local API server keeps its data: etcd (the default), or SQLite
 * through kine, the etcd shim a single-server k3s runs. Both speak etcd's
 * gRPC API to kube-apiserver and to etcdctl (so both compact through
 * {@link compactEtcd}); only etcd has the health endpoint and the JSON
 * gateway.
 *
 * @module
 */
import { join } from "node:path";
import { etcdArgs, type Layout } from "./_components.ts";

/** The process that keeps the API server's data, and how to tell it is up. */
export interface DatastoreProcess {
  /** Its executable in the binaries folder, which also names the component. */
  name: string;
  /** Its command line; it must serve etcd's API at `etcdEndpoint(layout)`. */
  args(layout: Pick<Layout, "dir" | "ports">): string[];
  /** Whether it answers at `endpoint`. */
  healthy(endpoint: string, signal?: AbortSignal): Promise<boolean>;
}

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
function kineArgs(layout: Pick<Layout, "dir" | "ports">): string[] {
  const db = join(layout.dir, "kine", "state.db");
  return [
    `--endpoint=sqlite://${db}?_journal=WAL&cache=shared&_busy_timeout=30000`,
    `--listen-address=127.0.0.1:${layout.ports.etcdClient}`,
    "--metrics-bind-address=0",
    "--compact-min-retain=0",
  ];
}

/** etcd, the datastore unless another is asked for. */
const ETCD: DatastoreProcess = { name: "etcd", args: etcdArgs, healthy: etcdHealthy };

/** kine's process: its port open is all the health it reports. */
const KINE: DatastoreProcess = { name: "kine", args: kineArgs, healthy: kineListening };

/** How to run and probe `datastore`. */
export function datastoreProcess(datastore: Datastore): DatastoreProcess {
  return datastore === "etcd" ? ETCD : KINE;
}

/** Whether etcd at `endpoint` answers its health check with a healthy status. */
async function etcdHealthy(endpoint: string, signal?: AbortSignal): Promise<boolean> {
  try {
    const response = await fetch(`${endpoint}/health`, { signal });
    const body = await response.json() as { health?: string };
    return response.ok && body.health === "true";
  } catch (error) {
    if (signal?.aborted) throw error;
    return false;
  }
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

/**
 * Compacts the datastore at `endpoint` (etcd or kine, e.g.
 * `http://127.0.0.1:2379`) to its current revision, physically, with the
 * `etcdctl` in `binDir`, and returns that revision. Watches and lists from
 * any older resourceVersion then fail with 410 Gone wherever the API server
 * reads them from the datastore rather than from its watch cache.
 *
 * @throws {Error} when the datastore cannot be reached or refuses the compaction.
 */
export async function compactEtcd(
  endpoint: string,
  binDir: string,
  signal?: AbortSignal,
): Promise<number> {
  const etcdctl = (...args: string[]) =>
    new Deno.Command(join(binDir, "etcdctl"), {
      args: [`--endpoints=${endpoint}`, ...args],
      stdin: "null",
      signal,
    }).output();
  const range = await etcdctl("get", "/", "--prefix", "--keys-only", "--limit=1", "-w", "json");
  const header = text(range.stdout) && JSON.parse(text(range.stdout)).header;
  const revision = Number(header?.revision);
  if (!range.success || !Number.isSafeInteger(revision) || revision <= 0) {
    throw new Error(
      `The datastore at ${endpoint} reported no usable revision: ${
        text(range.stderr) || text(range.stdout)
      }`,
    );
  }
  const compacted = await etcdctl("compaction", "--physical", String(revision));
  // Nothing was written since the last compaction to this revision.
  if (!compacted.success && !text(compacted.stderr).includes("has been compacted")) {
    throw new Error(`Compacting ${endpoint} to ${revision} failed: ${text(compacted.stderr)}`);
  }
  return revision;
}

function text(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes).trim();
}
