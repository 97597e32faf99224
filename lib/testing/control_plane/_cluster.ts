/**
 * {@link startCluster}: the local control plane started, its binaries found
 * or built first, and handed out as one {@link Cluster} that stops it.
 *
 * @module
 */
import { join } from "node:path";
import { controlPlaneBinaries } from "./_binaries.ts";
import { bootCluster, type Booted } from "./_boot.ts";
import { ControlPlane, StartFailure } from "./_control_plane.ts";
import { compactEtcd, type Datastore, datastoreFromEnv } from "./_datastore.ts";

/** Options of {@link startCluster}. */
export interface StartClusterOptions {
  /**
   * Folder that the cluster owns: data, certificates, kubeconfigs and logs.
   * It must be missing or empty. Defaults to a new temporary folder.
   */
  dir?: string;
  /** Aborts the start; whatever already runs is stopped. */
  signal?: AbortSignal;
  /** Receives progress messages, one line each. Defaults to discarding them. */
  log?: (message: string) => void;
  /**
   * A folder holding the binaries to run (envtest's `KUBEBUILDER_ASSETS`):
   * nothing is built or looked up. Defaults to kinglet's own, built once
   * into `~/.cache/kinglet/control-plane`.
   */
  binDir?: string;
  /**
   * Start only the datastore and kube-apiserver, as envtest does: no
   * controller manager, scheduler, nodes or storage.
   *
   * @default {false}
   */
  apiServerOnly?: boolean;
  /** Whether to add one node per GPU type. Defaults to `true`. */
  gpuNodes?: boolean;
  /**
   * How many pods each fake node takes, a kubelet's `maxPods`: more than two
   * nodes' worth of pods stay Pending. Defaults to 110, the kubelet's default.
   */
  podsPerNode?: number;
  /** Initial value of {@link Cluster.keepLogs}. Defaults to `false`. */
  keepLogs?: boolean;
  /**
   * Where the API server keeps its data: etcd, or SQLite through kine as a
   * single-server k3s does. Defaults to `KINGLET_DATASTORE`, else etcd.
   */
  datastore?: Datastore;
  /**
   * Flags added to kube-apiserver's, after (so overriding) the defaults, e.g.
   * `--watch-cache=false` so that watches read etcd and see its compaction.
   */
  apiserverFlags?: readonly string[];
}

/** How long the phases of {@link startCluster} took. */
export interface ClusterTimings {
  /** Getting the binaries: a cold build takes minutes, a cached lookup milliseconds, none 0. */
  binariesMs: number;
  /** Whether the binaries were compiled by this start. */
  binariesBuilt: boolean;
  /** From having the binaries to nodes Ready and the default ServiceAccount present (or /readyz). */
  startMs: number;
}

/** A running local control plane. Stop it, or dispose of it with `await using`. */
export interface Cluster extends AsyncDisposable {
  /** Path of a kubeconfig for a `system:masters` user, certificates embedded. */
  readonly kubeconfig: string;
  /** `https://127.0.0.1:<port>` of kube-apiserver. */
  readonly server: string;
  /** The folder the cluster owns. */
  readonly dir: string;
  /** Folder of kube-apiserver, kubectl, etcd, kwok and the rest. */
  readonly binDir: string;
  /** `http://127.0.0.1:<port>` of etcd, or of kine in its place (plain, loopback only). */
  readonly etcdEndpoint: string;
  /** What the API server keeps its data in. */
  readonly datastore: Datastore;
  /** Folder of the `<component>.log` files. */
  readonly logDir: string;
  /** When true, {@link Cluster.stop} leaves {@link Cluster.dir} on disk; otherwise it deletes it. */
  keepLogs: boolean;
  readonly timings: ClusterTimings;
  /** Compacts the datastore to its current revision (physically) and returns that revision. */
  compactEtcd(signal?: AbortSignal): Promise<number>;
  /**
   * Stops kube-apiserver (SIGTERM by process id, SIGKILL after 5 s), starts
   * it again with the same flags and port, and resolves once /readyz answers
   * 200. Everything else keeps running: a fault for reliability tests.
   * `whileDown` runs between the stop and the start, e.g. to make requests
   * fail while no API server listens.
   *
   * @throws {Error} when it does not come back, quoting the end of its log.
   */
  restartApiServer(signal?: AbortSignal, whileDown?: () => Promise<void>): Promise<void>;
  /** Stops every component (SIGTERM, then SIGKILL after 5 s). Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts a local control plane and waits until it can run pods: fake nodes
 * Ready and the `default` ServiceAccount created (or, with `apiServerOnly`,
 * until kube-apiserver reports /readyz ok).
 *
 * @example
 * ```ts ignore
 * import { startCluster } from "./mod.ts";
 * const cluster = await startCluster({ gpuNodes: false });
 * try {
 *   const revision = await cluster.compactEtcd();
 * } finally {
 *   await cluster.stop();
 * }
 * ```
 *
 * @throws {RangeError} when `dir` exists and is not empty.
 * @throws {TypeError} when `KINGLET_DATASTORE` names no datastore.
 * @throws {Error} when the binaries cannot be built; when a component fails
 *   to start, naming it and quoting the end of its log: everything started so
 *   far is stopped and `dir` is kept.
 * @throws the signal's reason when aborted; `dir` is then deleted unless
 *   `keepLogs`.
 */
export async function startCluster(options: StartClusterOptions = {}): Promise<Cluster> {
  const { signal } = options;
  const log = options.log ?? (() => {});
  signal?.throwIfAborted();
  const datastore = options.datastore ?? datastoreFromEnv();
  const binaries = options.binDir === undefined
    ? await controlPlaneBinaries(log, signal, datastore)
    : { binDir: options.binDir, built: false, ms: 0 };
  log(`control-plane binaries in ${binaries.binDir}`);
  const started = performance.now();
  const dir = await claimDir(options.dir);
  const logDir = join(dir, "logs");
  const plane = new ControlPlane({ dir, binDir: binaries.binDir, logDir, signal, log });
  try {
    const booted = await bootCluster(plane, {
      dir,
      datastore,
      apiServerOnly: options.apiServerOnly ?? false,
      gpuNodes: options.gpuNodes ?? true,
      podsPerNode: options.podsPerNode ?? 110,
      apiserverFlags: options.apiserverFlags ?? [],
      ...(signal && { signal }),
    });
    const timings = {
      binariesMs: binaries.ms,
      binariesBuilt: binaries.built,
      startMs: performance.now() - started,
    };
    return new RunningCluster(
      { ...booted, dir, binDir: binaries.binDir, logDir, datastore },
      plane,
      timings,
      options.keepLogs ?? false,
    );
  } catch (error) {
    await plane.stop();
    if (signal?.aborted) {
      // An abort is no failure to diagnose: nothing worth keeping.
      if (!options.keepLogs) await Deno.remove(dir, { recursive: true }).catch(() => {});
      throw signal.reason;
    }
    const kept = `(the files of this start are kept in ${dir})`;
    if (error instanceof StartFailure) {
      throw new Error(
        `Cannot start the local control plane from ${binaries.binDir}: ${await error
          .withLog()}\n${kept}`,
      );
    }
    throw new Error(`Cannot start the local control plane: ${describe(error)}\n${kept}`, {
      cause: error,
    });
  }
}

interface Started extends Booted {
  datastore: Datastore;
  dir: string;
  binDir: string;
  logDir: string;
}

class RunningCluster implements Cluster {
  readonly kubeconfig: string;
  readonly server: string;
  readonly dir: string;
  readonly binDir: string;
  readonly etcdEndpoint: string;
  readonly datastore: Datastore;
  readonly logDir: string;
  readonly timings: ClusterTimings;
  keepLogs: boolean;
  readonly #plane: ControlPlane;
  #stopping: Promise<void> | undefined;

  constructor(started: Started, plane: ControlPlane, timings: ClusterTimings, keepLogs: boolean) {
    this.kubeconfig = started.kubeconfig;
    this.server = started.server;
    this.dir = started.dir;
    this.binDir = started.binDir;
    this.etcdEndpoint = started.etcdEndpoint;
    this.datastore = started.datastore;
    this.logDir = started.logDir;
    this.timings = timings;
    this.keepLogs = keepLogs;
    this.#plane = plane;
  }

  compactEtcd(signal?: AbortSignal): Promise<number> {
    return compactEtcd(this.etcdEndpoint, this.binDir, signal);
  }

  async restartApiServer(signal?: AbortSignal, whileDown?: () => Promise<void>): Promise<void> {
    if (this.#stopping) {
      throw new TypeError("Cannot restart kube-apiserver: the cluster is stopped");
    }
    try {
      await this.#plane.restartApiServer(signal, whileDown);
    } catch (error) {
      if (!(error instanceof StartFailure)) throw error;
      throw new Error(`Cannot restart kube-apiserver: ${await error.withLog()}`);
    }
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#shutdown();
    return this.#stopping;
  }

  async #shutdown(): Promise<void> {
    await this.#plane.stop();
    if (!this.keepLogs) await Deno.remove(this.dir, { recursive: true });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}

/** Creates `dir` (or a temporary folder), insisting that it holds nothing yet. */
async function claimDir(dir: string | undefined): Promise<string> {
  if (dir === undefined) return await Deno.makeTempDir({ prefix: "kinglet-cluster-" });
  await Deno.mkdir(dir, { recursive: true });
  for await (const entry of Deno.readDir(dir)) {
    throw new RangeError(
      `Cannot start the local control plane: 'dir' must be missing or empty, got ${dir} holding '${entry.name}'`,
    );
  }
  return dir;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
