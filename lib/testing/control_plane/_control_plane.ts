/**
 * The processes of one local control plane and its start sequence:
 * certificates and the datastore, then kube-apiserver. Whoever needs more
 * components (a controller manager, a scheduler, kwok) spawns them through
 * the same object, so that one {@link ControlPlane.stop} ends them all in a
 * safe order. Each wait names the component it depends on, so a failure can
 * quote the right log.
 *
 * @module
 */
import { join } from "node:path";
import { systemClock } from "../../async/clock.ts";
import { ApiClient, type TlsFiles } from "./_api.ts";
import { apiserverArgs, etcdEndpoint, type Layout } from "./_components.ts";
import type { DatastoreProcess } from "./_datastore.ts";
import { writeKubeconfig } from "./_kubeconfig.ts";
import { type ClientIdentity, generatePki } from "./_pki.ts";
import { Component, freePorts } from "./_process.ts";

const DATASTORE_TIMEOUT_MS = 30_000;
const APISERVER_TIMEOUT_MS = 90_000;

/** The `system:masters` identity of `admin.kubeconfig`. */
const ADMIN: ClientIdentity = { commonName: "kinglet-admin", organizations: ["system:masters"] };

/** Where a {@link ControlPlane} keeps its files and finds its binaries. */
export interface ControlPlaneOptions {
  /** Folder for data, certificates and kubeconfigs; it must exist. */
  dir: string;
  /** Folder of the executables (etcd, kube-apiserver, …). */
  binDir: string;
  /** Folder for the `<component>.log` files; created by {@link ControlPlane.start}. */
  logDir: string;
  /** Aborts the start. */
  signal?: AbortSignal;
  /** Receives progress messages, one line each. */
  log?: (message: string) => void;
}

/** What {@link ControlPlane.start} is to run. */
export interface StartOptions {
  /** Client identities besides `admin`; each gets `<name>.kubeconfig` in the folder. */
  clients?: Record<string, ClientIdentity>;
  /** etcd or kine. */
  datastore: DatastoreProcess;
  /** Flags added to kube-apiserver's, after (so overriding) the defaults. */
  apiserverFlags?: readonly string[];
}

/** A control plane whose kube-apiserver reports /readyz ok. */
export interface Started {
  layout: Layout;
  /** `https://127.0.0.1:<port>`. */
  server: string;
  /** `http://127.0.0.1:<port>` of the datastore. */
  etcdEndpoint: string;
  /** The `admin` client certificate, for probing the API server. */
  admin: TlsFiles;
  /** Kubeconfig path per identity, `admin` included. */
  kubeconfigs: Record<string, string>;
  apiserver: Component;
}

/** A component failed or did not get ready in time; carries it for its log. */
export class StartFailure extends Error {
  /** Records that `component` is the one to blame. */
  constructor(readonly component: Component, message: string) {
    super(message);
  }

  /** The message followed by the end of the component's log. */
  async withLog(): Promise<string> {
    return `${this.message}. Last lines of ${this.component.logFile}:\n${await this.component
      .tail()}`;
  }
}

/** The components of one control plane, in the order they were spawned. */
export class ControlPlane {
  readonly #components: Component[] = [];
  readonly #options: ControlPlaneOptions;
  readonly #begun = performance.now();
  #datastore: Component | undefined;
  #started: Started | undefined;
  #stopping: Promise<void> | undefined;

  /** Prepares a control plane in `options.dir`; nothing runs before {@link start}. */
  constructor(options: ControlPlaneOptions) {
    this.#options = options;
  }

  /**
   * Writes certificates and kubeconfigs, starts the datastore and
   * kube-apiserver, and resolves once /readyz answers 200. On failure the
   * caller stops what was spawned with {@link stop}.
   *
   * @throws {StartFailure} when a component exits or does not get ready.
   */
  async start(options: StartOptions): Promise<Started> {
    const { dir } = this.#options;
    await Deno.mkdir(this.#options.logDir, { recursive: true });
    const pkiDir = join(dir, "pki");
    await Deno.mkdir(pkiDir);
    const [etcdClient, etcdPeer, apiserverPort] = freePorts(3) as [number, number, number];
    const base = { dir, ports: { etcdClient, etcdPeer, apiserver: apiserverPort } };
    const endpoint = etcdEndpoint(base);
    const { datastore } = options;
    const store = await this.spawn(datastore.name, datastore.args(base));
    this.#datastore = store;
    const identities = { admin: ADMIN, ...options.clients };
    const [pki] = await Promise.all([
      generatePki(pkiDir, identities, this.#options.signal),
      this.waitFor(
        store,
        `${datastore.name} to become healthy`,
        DATASTORE_TIMEOUT_MS,
        () => datastore.healthy(endpoint, this.#options.signal),
      ),
    ]);
    const server = `https://127.0.0.1:${apiserverPort}`;
    const names = Object.keys(identities);
    const kubeconfigs = Object.fromEntries(names.map((n) => [n, join(dir, `${n}.kubeconfig`)]));
    await Promise.all(
      names.map((user) =>
        writeKubeconfig(kubeconfigs[user]!, {
          server,
          user,
          ca: pki.ca.cert,
          ...pki.clients[user]!,
        })
      ),
    );
    this.progress(`${datastore.name} ready at ${endpoint}`);

    const layout = { ...base, pki };
    const admin = { ca: pki.ca.cert, ...pki.clients["admin"]! };
    const flags = options.apiserverFlags ?? [];
    const apiserver = await this.spawn("kube-apiserver", [...apiserverArgs(layout), ...flags]);
    await this.#readyz({ server, admin, apiserver }, "", this.#options.signal);
    this.progress(`kube-apiserver ready on port ${apiserverPort}`);
    this.#started = { layout, server, etcdEndpoint: endpoint, admin, kubeconfigs, apiserver };
    return this.#started;
  }

  /**
   * Starts `name` from the binaries folder, its output in `<name>.log`.
   *
   * @throws the signal's reason when the start was aborted.
   */
  async spawn(name: string, args: string[]): Promise<Component> {
    this.#options.signal?.throwIfAborted();
    const component = await Component.spawn({
      name,
      command: join(this.#options.binDir, name),
      args,
      logDir: this.#options.logDir,
    });
    this.#components.push(component);
    return component;
  }

  /**
   * Polls `ready` every 100 ms until it holds. Fails as soon as any
   * component has exited, blaming that one, or after `timeoutMs`, blaming
   * `owner`.
   *
   * @throws {StartFailure} naming the component to blame.
   */
  async waitFor(
    owner: Component,
    what: string,
    timeoutMs: number,
    ready: () => Promise<boolean>,
    signal: AbortSignal | undefined = this.#options.signal,
  ): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const exited = this.#components.find((c) => c.status !== undefined);
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

  /** Passes `message` to the log, with the seconds since this control plane was created. */
  progress(message: string): void {
    const seconds = ((performance.now() - this.#begun) / 1000).toFixed(1);
    this.#options.log?.(`${message} (${seconds} s)`);
  }

  /**
   * Stops kube-apiserver and starts it again with the same command line (so
   * the same port, certificates and datastore), then waits until it reports
   * /readyz ok. The other components keep running and reconnect.
   *
   * @throws {TypeError} when the control plane was not started or is stopped.
   * @throws {StartFailure} when it exits or is not ready in time.
   */
  async restartApiServer(signal?: AbortSignal, whileDown?: () => Promise<void>): Promise<void> {
    const started = this.#started;
    const index = this.#components.findIndex((c) => c === started?.apiserver);
    const old = this.#components[index];
    if (!started || !old || this.#stopping) {
      throw new TypeError("Cannot restart kube-apiserver: none is running");
    }
    const apiserver = await old.restart(undefined, whileDown);
    this.#components[index] = apiserver;
    started.apiserver = apiserver;
    await this.#readyz(started, " after its restart", signal);
  }

  /** Waits until `apiserver` answers /readyz 200, blaming it when it does not in time. */
  async #readyz(
    { server, admin, apiserver }: Pick<Started, "server" | "admin" | "apiserver">,
    when: string,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    using api = await ApiClient.connect(server, admin);
    await this.waitFor(
      apiserver,
      `kube-apiserver to report /readyz ok${when}`,
      APISERVER_TIMEOUT_MS,
      async () => (await api.request("GET", "/readyz", { signal })).status === 200,
      signal,
    );
  }

  /**
   * Stops the API clients together, then kube-apiserver, then the datastore,
   * so that nobody logs errors about a server that went away first
   * (SIGTERM, then SIGKILL after 5 s). Idempotent.
   */
  stop(): Promise<void> {
    this.#stopping ??= this.#stopAll();
    return this.#stopping;
  }

  async #stopAll(): Promise<void> {
    const isApiserver = (c: Component) => c.name === "kube-apiserver";
    const tiers = [
      this.#components.filter((c) => !isApiserver(c) && c !== this.#datastore),
      this.#components.filter(isApiserver),
      this.#components.filter((c) => c === this.#datastore),
    ];
    for (const tier of tiers) await Promise.all(tier.map((c) => c.stop()));
  }
}
