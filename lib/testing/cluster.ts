/**
 * A real API server for an operator's tests, as envtest is for
 * controller-runtime: {@link testCluster} hands each test an admin
 * {@link KubeClient} and a fresh namespace, and takes both away when the test
 * disposes of it.
 *
 * Where the API server comes from, in this order:
 *
 * 1. `KINGLET_TEST_KUBECONFIG` names the kubeconfig of a cluster the tests
 *    may write to, which `hack/with_cluster.ts` of a kinglet checkout sets for
 *    the full local control plane it starts (controller manager, scheduler and
 *    kwok nodes included). The cluster is shared: the fixture creates the
 *    namespace and deletes it again, waiting until it is gone.
 * 2. `KUBEBUILDER_ASSETS` names a folder holding `etcd` and `kube-apiserver`
 *    (envtest's binaries, or kinglet's own control plane). The fixture starts
 *    both on loopback ports with fresh certificates (made with WebCrypto; no
 *    `openssl` needed) in a temporary folder, and stops them and deletes the
 *    folder on dispose. As with envtest, nothing else runs: no controller
 *    manager (so no Deployment gets a ReplicaSet, no namespace is ever
 *    finalized and no ServiceAccount token is minted into a Secret), no
 *    scheduler, no nodes. The TokenRequest API works (kube-apiserver gets a
 *    signing key), so {@link TestCluster.serviceAccount} does too.
 *
 * With neither variable set, {@link testCluster} fails and says how to set
 * one. Tests need `--allow-all` (or env, read, write, net and run).
 *
 * @example A test against a real API server
 * ```ts ignore
 * import { testCluster } from "./cluster.ts";
 * import { CONFIG_MAPS } from "../kube/mod.ts";
 *
 * Deno.test("a ConfigMap keeps its data", async () => {
 *   await using cluster = await testCluster();
 *   await cluster.client.create(CONFIG_MAPS, {
 *     apiVersion: "v1",
 *     kind: "ConfigMap",
 *     metadata: { name: "settings" }, // created in cluster.namespace
 *     data: { mode: "fast" },
 *   });
 *   const read = await cluster.client.get(CONFIG_MAPS, "settings");
 *   if (read.data?.mode !== "fast") throw new Error("data lost");
 * });
 * ```
 *
 * @module
 */
import { join } from "node:path";
import { systemClock } from "../async/clock.ts";
import { KubeClient } from "../kube/client.ts";
import { loadConfig } from "../kube/config.ts";
import { NAMESPACES } from "../kube/resources.ts";
import { startCluster } from "./control_plane/mod.ts";
import { ClusterNodes, type TestNode, type TestNodeOptions } from "./nodes.ts";
import {
  type ServiceAccountOptions,
  type TestServiceAccount,
  testServiceAccount,
} from "./service_account.ts";

/** How long {@link TestCluster.stop} waits for a shared cluster's namespace to be gone. */
const NAMESPACE_GONE_TIMEOUT_MS = 60_000;
/** What `KUBEBUILDER_ASSETS` must hold. */
const BINARIES = ["etcd", "kube-apiserver"] as const;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Options of {@link testCluster}. */
export interface TestClusterOptions {
  /**
   * Start of the namespace's name, which a random suffix completes: a DNS
   * label of at most 50 characters.
   *
   * @default {"test"}
   */
  namespacePrefix?: string;
  /** Aborts the start; whatever already runs is stopped. */
  signal?: AbortSignal;
  /**
   * The variables to read `KINGLET_TEST_KUBECONFIG` and `KUBEBUILDER_ASSETS`
   * from, instead of this process's environment.
   */
  env?: Readonly<Record<string, string | undefined>>;
}

/** A real API server for one test; dispose of it with `await using`, or call {@link stop}. */
export interface TestCluster extends AsyncDisposable {
  /** An admin client whose default namespace is {@link namespace}. */
  readonly client: KubeClient;
  /** Path of an admin kubeconfig, e.g. for `kubectl --kubeconfig` or a spawned operator. */
  readonly kubeconfig: string;
  /** The namespace created for this test. */
  readonly namespace: string;
  /**
   * True when the fixture started its own etcd and kube-apiserver from
   * `KUBEBUILDER_ASSETS`, with no controller manager, scheduler or nodes.
   */
  readonly started: boolean;
  /**
   * Creates a ServiceAccount in {@link namespace} bound to exactly
   * `options.rules`, with a kubeconfig and a client that authenticate as it
   * and record every denial: how a test runs an operator under least
   * privilege. Dispose of it before the cluster. See {@link testServiceAccount}.
   */
  serviceAccount(options: ServiceAccountOptions): Promise<TestServiceAccount>;
  /**
   * Creates a Node named `<namespace>-<name>` with `options.labels`, Ready
   * unless `options.ready` is false, that neither kwok nor a kubelet
   * manages: its readiness and labels are what the test sets through the
   * {@link TestNode} returned. The fixture renews the Node's Lease while the
   * cluster is in use, and deletes the Node on {@link stop}. See nodes.ts.
   *
   * @throws {ApiError} when the Node or its Lease cannot be created.
   */
  node(name: string, options?: TestNodeOptions): Promise<TestNode>;
  /**
   * Deletes the test's Nodes; then deletes the namespace and waits until it
   * is gone (a shared cluster), or stops etcd and kube-apiserver and deletes
   * their folder (a started one); and closes the client. Idempotent.
   *
   * @throws {Error} when the namespace of a shared cluster is still there
   * a minute after its deletion.
   */
  stop(): Promise<void>;
}

/**
 * Connects to the cluster of `KINGLET_TEST_KUBECONFIG`, or else starts etcd
 * and kube-apiserver from `KUBEBUILDER_ASSETS`, and creates a namespace for
 * the test.
 *
 * @example Neither variable set
 * ```ts
 * import { testCluster } from "./cluster.ts";
 * const failed = await testCluster({ env: {} }).catch((error: Error) => error);
 * if (!(failed instanceof Error) || !failed.message.includes("KUBEBUILDER_ASSETS")) {
 *   throw new Error("expected advice on what to set");
 * }
 * ```
 *
 * @throws {RangeError} when `namespacePrefix` is not a DNS label of at most 50 characters.
 * @throws {Error} when neither variable is set, saying how to set one; when
 * `KUBEBUILDER_ASSETS` lacks a binary; when etcd or kube-apiserver does not
 * start, quoting the end of its log (its folder is then kept).
 * @throws {ConfigError} when the kubeconfig of `KINGLET_TEST_KUBECONFIG` cannot be loaded.
 * @throws the signal's reason when aborted.
 */
export async function testCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const prefix = options.namespacePrefix ?? "test";
  if (prefix.length > 50 || !DNS_LABEL.test(prefix)) {
    throw new RangeError(
      `Cannot start a test cluster: 'namespacePrefix' must be a DNS label of at most 50 characters, got ${
        JSON.stringify(prefix)
      }`,
    );
  }
  const env = (name: string) => options.env ? options.env[name] : Deno.env.get(name);
  const shared = env("KINGLET_TEST_KUBECONFIG");
  const assets = env("KUBEBUILDER_ASSETS");
  const { signal } = options;
  if (shared) return await connect(shared, prefix, signal);
  if (assets) return await startFrom(assets, prefix, signal);
  throw new Error(
    "Cannot start a test cluster: neither KINGLET_TEST_KUBECONFIG nor KUBEBUILDER_ASSETS is set. " +
      "Set KINGLET_TEST_KUBECONFIG to the kubeconfig of a cluster the tests may write to: in a " +
      "kinglet checkout, `deno run -A hack/with_cluster.ts -- deno test -A <files>` starts a " +
      "local control plane and sets it for the tests. Or set KUBEBUILDER_ASSETS to a folder " +
      "holding etcd and kube-apiserver: envtest's (`setup-envtest use -p path` prints one), or " +
      "kinglet's own, which `deno task control-plane` builds and prints " +
      "(~/.cache/kinglet/control-plane/k8s-<version>-etcd-<version>-kwok-<version>/bin).",
  );
}

/** Uses the shared cluster of `kubeconfig`; its namespace goes away on stop. */
async function connect(
  kubeconfig: string,
  prefix: string,
  signal: AbortSignal | undefined,
): Promise<TestCluster> {
  const client = await inNewNamespace(kubeconfig, prefix, signal);
  const { namespace } = client;
  return new Fixture({ client, kubeconfig, namespace, started: false }, async () => {
    try {
      await deleteNamespace(client, namespace);
    } finally {
      client.close();
    }
  });
}

/** Starts etcd and kube-apiserver from `assets` in a temporary folder that goes away on stop. */
async function startFrom(
  assets: string,
  prefix: string,
  signal: AbortSignal | undefined,
): Promise<TestCluster> {
  await requireBinaries(assets);
  const cluster = await startCluster({
    binDir: assets,
    apiServerOnly: true,
    datastore: "etcd",
    ...(signal && { signal }),
  });
  const { kubeconfig } = cluster;
  let client: KubeClient;
  try {
    client = await inNewNamespace(kubeconfig, prefix, signal);
  } catch (error) {
    await cluster.stop();
    throw signal?.aborted ? signal.reason : error;
  }
  const { namespace } = client;
  return new Fixture({ client, kubeconfig, namespace, started: true }, async () => {
    client.close();
    await cluster.stop();
  });
}

class Fixture implements TestCluster {
  readonly client: KubeClient;
  readonly kubeconfig: string;
  readonly namespace: string;
  readonly started: boolean;
  readonly #teardown: () => Promise<void>;
  #stopping: Promise<void> | undefined;
  /** The test's Nodes, their Leases renewed until stop; none before the first. */
  #nodes: ClusterNodes | undefined;

  constructor(
    fields: Pick<TestCluster, "client" | "kubeconfig" | "namespace" | "started">,
    teardown: () => Promise<void>,
  ) {
    this.client = fields.client;
    this.kubeconfig = fields.kubeconfig;
    this.namespace = fields.namespace;
    this.started = fields.started;
    this.#teardown = teardown;
  }

  serviceAccount(options: ServiceAccountOptions): Promise<TestServiceAccount> {
    return testServiceAccount(this, options);
  }

  node(name: string, options: TestNodeOptions = {}): Promise<TestNode> {
    this.#nodes ??= new ClusterNodes(this.client, systemClock);
    return this.#nodes.add(`${this.namespace}-${name}`, options);
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      try {
        await this.#nodes?.stop();
      } finally {
        await this.#teardown();
      }
    })();
    return this.#stopping;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}

/** @throws {Error} naming what `assets` lacks. */
async function requireBinaries(assets: string): Promise<void> {
  const missing: string[] = [];
  for (const name of BINARIES) {
    const info = await Deno.stat(join(assets, name)).catch(() => undefined);
    if (!info?.isFile || ((info.mode ?? 0o111) & 0o111) === 0) missing.push(name);
  }
  if (missing.length > 0) {
    throw new Error(
      `Cannot start a test cluster: KUBEBUILDER_ASSETS=${assets} holds no executable ${
        missing.join(" nor ")
      }; point it at a folder with both etcd and kube-apiserver`,
    );
  }
}

/**
 * An admin client of `kubeconfig` whose default namespace is a new one named
 * `<prefix>-<random>`; the client is closed again when the namespace cannot
 * be created.
 */
async function inNewNamespace(
  kubeconfig: string,
  prefix: string,
  signal: AbortSignal | undefined,
): Promise<KubeClient> {
  const name = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  const client = new KubeClient({ ...await loadConfig({ kubeconfig }), namespace: name });
  try {
    await client.create(
      NAMESPACES,
      { apiVersion: "v1", kind: "Namespace", metadata: { name } },
      signal ? { signal } : {},
    );
  } catch (error) {
    client.close();
    throw error;
  }
  return client;
}

/** Deletes `name` and polls until the namespace controller has finalized it. */
async function deleteNamespace(client: KubeClient, name: string): Promise<void> {
  await client.delete(NAMESPACES, name, { ignoreNotFound: true });
  const deadline = performance.now() + NAMESPACE_GONE_TIMEOUT_MS;
  while (await client.getOptional(NAMESPACES, name)) {
    if (performance.now() > deadline) {
      throw new Error(
        `The test namespace ${name} still exists ${
          NAMESPACE_GONE_TIMEOUT_MS / 1000
        } s after its deletion: something holds a finalizer in it`,
      );
    }
    await systemClock.sleep(250);
  }
}
