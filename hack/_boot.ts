/**
 * The start sequence of the local control plane, one step per method:
 * certificates and etcd, kube-apiserver, then its clients (controller
 * manager, scheduler, kwok) and the fake nodes. Each wait names the component
 * it depends on, so a failure can quote the right log.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { V1NodeList } from "@kubernetes/client-node";
import { systemClock } from "../lib/async/clock.ts";
import { ApiClient, type TlsFiles } from "./_api.ts";
import {
  apiserverArgs,
  controllerManagerArgs,
  etcdEndpoint,
  kwokArgs,
  type Layout,
  schedulerArgs,
} from "./_components.ts";
import { type Datastore, datastoreArgs, datastoreHealthy, DATASTORES } from "./_datastore.ts";
import { writeKubeconfig } from "./_kubeconfig.ts";
import { FAKE_NODE_SELECTOR, fakeNodes, nodeReady } from "./_nodes.ts";
import { storageClass, volumePool } from "./_storage.ts";

/** PersistentVolumes in the pool: enough for the e2e suite and the samples. */
const VOLUMES = 24;
import { generatePki } from "./_pki.ts";
import { Component, freePorts } from "./_process.ts";

const ETCD_TIMEOUT_MS = 30_000;
const APISERVER_TIMEOUT_MS = 90_000;
const NODES_TIMEOUT_MS = 60_000;

/** What a successful boot hands to the cluster object. */
export interface Booted {
  kubeconfig: string;
  server: string;
  etcdEndpoint: string;
  /** The admin client certificate, for probing the API server. */
  admin: TlsFiles;
}

/** A component failed or did not get ready in time; carries it for its log. */
export class StartFailure extends Error {
  constructor(readonly component: Component, message: string) {
    super(message);
  }
}

/** One start attempt. {@link Boot.components} lists what it spawned, in order. */
export class Boot {
  readonly components: Component[] = [];
  readonly #dir: string;
  readonly #binDir: string;
  readonly #logDir: string;
  readonly #signal: AbortSignal | undefined;
  readonly #datastore: Datastore;
  readonly #progress: (message: string) => void;

  constructor(
    options: {
      dir: string;
      binDir: string;
      logDir: string;
      datastore: Datastore;
      signal?: AbortSignal;
    },
    log: (message: string) => void,
  ) {
    this.#dir = options.dir;
    this.#datastore = options.datastore;
    this.#binDir = options.binDir;
    this.#logDir = options.logDir;
    this.#signal = options.signal;
    const begun = performance.now();
    this.#progress = (message) =>
      log(`${message} (${((performance.now() - begun) / 1000).toFixed(1)} s)`);
  }

  /**
   * Runs every step; on failure the caller stops {@link Boot.components}.
   *
   * @throws {StartFailure} when a component exits or does not get ready.
   */
  async run(gpuNodes: boolean, apiserverFlags: readonly string[]): Promise<Booted> {
    await Deno.mkdir(this.#logDir, { recursive: true });
    const layout = await this.#certificatesAndEtcd();
    const server = `https://127.0.0.1:${layout.ports.apiserver}`;
    const admin = { ca: layout.pki.ca.cert, ...layout.pki.clients["admin"]! };
    using api = await ApiClient.connect(server, admin);
    const apiserver = await this.#apiserver(layout, api, apiserverFlags);
    await this.#clientsAndNodes(layout, api, apiserver, gpuNodes);
    return {
      kubeconfig: join(this.#dir, "admin.kubeconfig"),
      server,
      etcdEndpoint: etcdEndpoint(layout),
      admin,
    };
  }

  /** Starts the datastore (etcd or kine) while certificates and kubeconfigs are generated. */
  async #certificatesAndEtcd(): Promise<Layout> {
    const pkiDir = join(this.#dir, "pki");
    await Deno.mkdir(pkiDir);
    const [etcdClient, etcdPeer, apiserver] = freePorts(3) as [number, number, number];
    const kubeconfig = (name: string) => join(this.#dir, `${name}.kubeconfig`);
    const base = {
      dir: this.#dir,
      ports: { etcdClient, etcdPeer, apiserver },
      kubeconfigs: {
        controllerManager: kubeconfig("kube-controller-manager"),
        scheduler: kubeconfig("kube-scheduler"),
        kwok: kubeconfig("kwok"),
      },
      kwokStages: fileURLToPath(new URL("./kwok_stages.yaml", import.meta.url)),
    };
    const endpoint = etcdEndpoint(base);
    const datastore = this.#datastore;
    if (datastore === "kine") await Deno.mkdir(join(this.#dir, "kine"));
    const etcd = await this.#spawn(datastore, datastoreArgs(datastore, base));
    const [pki] = await Promise.all([
      generatePki(pkiDir, {
        admin: { commonName: "kinglet-admin", organizations: ["system:masters"] },
        "kube-controller-manager": { commonName: "system:kube-controller-manager" },
        "kube-scheduler": { commonName: "system:kube-scheduler" },
        kwok: { commonName: "kwok", organizations: ["system:masters"] },
      }, this.#signal),
      this.#waitFor(
        etcd,
        `${datastore} to become healthy`,
        ETCD_TIMEOUT_MS,
        () => datastoreHealthy(datastore, endpoint, this.#signal),
      ),
    ]);
    const server = `https://127.0.0.1:${apiserver}`;
    await Promise.all(
      ["admin", "kube-controller-manager", "kube-scheduler", "kwok"].map((user) =>
        writeKubeconfig(kubeconfig(user), { server, user, ca: pki.ca.cert, ...pki.clients[user]! })
      ),
    );
    this.#progress(`${datastore} ready at ${endpoint}`);
    return { ...base, pki };
  }

  async #apiserver(
    layout: Layout,
    api: ApiClient,
    flags: readonly string[],
  ): Promise<Component> {
    const apiserver = await this.#spawn("kube-apiserver", [...apiserverArgs(layout), ...flags]);
    await this.#waitFor(
      apiserver,
      "kube-apiserver to report /readyz ok",
      APISERVER_TIMEOUT_MS,
      () => readyz(api, this.#signal),
    );
    this.#progress(`kube-apiserver ready on port ${layout.ports.apiserver}`);
    return apiserver;
  }

  /**
   * Starts the controller manager, scheduler and kwok, creates the fake nodes
   * and waits until kwok made them Ready and the controller manager created
   * the `default` ServiceAccount (without which admission rejects pods).
   */
  async #clientsAndNodes(
    layout: Layout,
    api: ApiClient,
    apiserver: Component,
    gpuNodes: boolean,
  ): Promise<void> {
    const manager = await this.#spawn("kube-controller-manager", controllerManagerArgs(layout));
    await this.#spawn("kube-scheduler", schedulerArgs(layout));
    const kwok = await this.#spawn("kwok", kwokArgs(layout));
    const nodes = fakeNodes(gpuNodes);
    const objects: [string, { metadata?: { name?: string } }][] = [
      ...nodes.map((n) => ["/api/v1/nodes", n] as [string, typeof n]),
      ["/apis/storage.k8s.io/v1/storageclasses", storageClass()],
      ...volumePool(VOLUMES).map((v) => ["/api/v1/persistentvolumes", v] as [string, typeof v]),
    ];
    for (const [path, object] of objects) {
      const created = await api.request("POST", path, { body: object, signal: this.#signal });
      if (created.status !== 201) {
        const body = JSON.stringify(created.body);
        throw new StartFailure(
          apiserver,
          `creating ${path} ${object.metadata?.name} answered ${created.status}: ${body}`,
        );
      }
    }
    const get = (path: string) => api.request("GET", path, { signal: this.#signal });
    const nodesPath = `/api/v1/nodes?labelSelector=${encodeURIComponent(FAKE_NODE_SELECTOR)}`;
    await Promise.all([
      this.#waitFor(
        kwok,
        `kwok to make ${nodes.length} nodes Ready`,
        NODES_TIMEOUT_MS,
        async () => {
          const list = await get(nodesPath);
          const items = list.status === 200 ? (list.body as V1NodeList).items : [];
          return items.length === nodes.length && items.every(nodeReady);
        },
      ),
      this.#waitFor(
        manager,
        "kube-controller-manager to create the default ServiceAccount",
        NODES_TIMEOUT_MS,
        async () =>
          (await get("/api/v1/namespaces/default/serviceaccounts/default")).status === 200,
      ),
    ]);
    this.#progress(`${nodes.length} kwok nodes Ready, default ServiceAccount present`);
  }

  async #spawn(name: string, args: string[]): Promise<Component> {
    this.#signal?.throwIfAborted();
    const component = await Component.spawn({
      name,
      command: join(this.#binDir, name),
      args,
      logDir: this.#logDir,
    });
    this.components.push(component);
    return component;
  }

  /** {@link waitUntil} over the components started so far. */
  #waitFor(
    owner: Component,
    what: string,
    timeoutMs: number,
    ready: () => Promise<boolean>,
  ): Promise<void> {
    return waitUntil(this.components, owner, what, timeoutMs, ready, this.#signal);
  }
}

/**
 * Stops the kube-apiserver among `components` and starts it again with the
 * same command line (so the same port, certificates and etcd), replacing it
 * in `components`, and waits until it reports /readyz ok. Its clients
 * (controller manager, scheduler, kwok) keep running and reconnect.
 *
 * @throws {StartFailure} when it exits or is not ready in time.
 */
export async function restartApiServer(
  components: Component[],
  booted: Pick<Booted, "server" | "admin">,
  signal?: AbortSignal,
  whileDown?: () => Promise<void>,
): Promise<void> {
  const index = components.findIndex((c) => c.name === "kube-apiserver");
  const old = components[index];
  if (!old) throw new TypeError("Cannot restart kube-apiserver: this cluster has none running");
  const apiserver = await old.restart(undefined, whileDown);
  components[index] = apiserver;
  using api = await ApiClient.connect(booted.server, booted.admin);
  await waitUntil(
    components,
    apiserver,
    "kube-apiserver to report /readyz ok after its restart",
    APISERVER_TIMEOUT_MS,
    () => readyz(api, signal),
    signal,
  );
}

/**
 * Polls `ready` every 100 ms until it holds. Fails as soon as any of
 * `components` has exited, blaming that one, or after `timeoutMs`, blaming
 * `owner`.
 */
async function waitUntil(
  components: readonly Component[],
  owner: Component,
  what: string,
  timeoutMs: number,
  ready: () => Promise<boolean>,
  signal: AbortSignal | undefined,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const exited = components.find((c) => c.status !== undefined);
    if (exited) {
      throw new StartFailure(
        exited,
        `${exited.name} exited with code ${exited.status!.code} while waiting for ${what}`,
      );
    }
    if (await ready()) return;
    if (performance.now() > deadline) {
      throw new StartFailure(owner, `timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    }
    await systemClock.sleep(100, signal);
  }
}

async function readyz(api: ApiClient, signal: AbortSignal | undefined): Promise<boolean> {
  return (await api.request("GET", "/readyz", { signal })).status === 200;
}

const DATASTORE_NAMES: ReadonlySet<string> = new Set(DATASTORES);

/**
 * Stops the API clients (kwok, scheduler, controller manager) together, then
 * kube-apiserver, then the datastore, so that nobody logs errors about a
 * server that went away first.
 */
export async function stopComponents(components: Component[]): Promise<void> {
  const tiers = [
    components.filter((c) => !DATASTORE_NAMES.has(c.name) && c.name !== "kube-apiserver"),
    components.filter((c) => c.name === "kube-apiserver"),
    components.filter((c) => DATASTORE_NAMES.has(c.name)),
  ];
  for (const tier of tiers) await Promise.all(tier.map((c) => c.stop()));
}
