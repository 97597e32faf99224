/**
 * The control plane a benchmark run talks to: by default a fresh local one
 * (lib/testing/control_plane/) per run, so that no run inherits another's objects,
 * garbage collection or etcd history; or an existing cluster named by a
 * kubeconfig, where each run gets a namespace of its own instead.
 *
 * Also installs the target's CRDs (server-side apply, then wait until
 * Established) and reads the server's version.
 *
 * @example
 * ```ts ignore
 * import { installCrds, provideCluster } from "./cluster_setup.ts";
 * await using cluster = await provideCluster({ log: console.error });
 * await installCrds(cluster.client, ["crds/webapps.kinglet.dev.yaml"]);
 * ```
 *
 * @module
 */
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { type Cluster, startCluster } from "../../lib/testing/control_plane/mod.ts";
import { KubeClient } from "../../lib/kube/client.ts";
import { type ClusterConfig, loadConfig } from "../../lib/kube/config.ts";
import { isNotFound, isTooManyRequests } from "../../lib/kube/errors.ts";
import {
  CUSTOM_RESOURCE_DEFINITIONS,
  MUTATING_WEBHOOK_CONFIGURATIONS,
  NAMESPACES,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
} from "../../lib/kube/resources.ts";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";

const FIELD_MANAGER = "kinglet-bench";

/** A cluster for one run, with a namespace made for it. */
export interface BenchCluster extends AsyncDisposable {
  readonly kubeconfig: string;
  readonly client: KubeClient;
  readonly namespace: string;
  /** `gitVersion` of the API server. */
  readonly kubernetesVersion: string;
  /** What the API server stores in: etcd or kine when started here, else unknown. */
  readonly datastore: string;
  /**
   * An existing cluster (`--kubeconfig`), which outlives the run: what the
   * run makes outside its namespace (objects of a cluster-scoped kind) it
   * must delete itself.
   */
  readonly shared: boolean;
  /** Copies the control plane's component logs into `dir` (a fresh cluster only). */
  saveLogs(dir: string): Promise<void>;
  /** Deletes the namespace, or stops the fresh cluster. */
  release(): Promise<void>;
}

/** Options of {@link provideCluster}. */
export interface ProvideOptions {
  /** Use this cluster instead of starting one. */
  kubeconfig?: string;
  log: (message: string) => void;
  signal?: AbortSignal;
  /** Pods each node of a fresh cluster takes (see `startCluster`). */
  podsPerNode?: number;
}

/** Starts (or connects to) a cluster and creates a namespace for the run. */
export async function provideCluster(options: ProvideOptions): Promise<BenchCluster> {
  let cluster: Cluster | undefined;
  if (options.kubeconfig === undefined) {
    cluster = await startCluster({
      gpuNodes: false,
      ...(options.podsPerNode !== undefined && { podsPerNode: options.podsPerNode }),
      log: (m) => options.log(`control plane: ${m}`),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }
  const kubeconfig = cluster?.kubeconfig ?? options.kubeconfig!;
  let client: KubeClient | undefined;
  try {
    const config = await loadConfig({ kubeconfig });
    client = new KubeClient(config, { userAgent: "kinglet-bench" });
    const namespace = cluster ? "bench" : `kinglet-bench-${crypto.randomUUID().slice(0, 8)}`;
    await client.create(NAMESPACES, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: namespace },
    });
    const kubernetesVersion = await serverVersion(config);
    const owned = client;
    const release = async () => {
      try {
        if (!cluster) await owned.delete(NAMESPACES, namespace).catch(() => {});
      } finally {
        owned.close();
        await cluster?.stop();
      }
    };
    return {
      kubeconfig,
      client,
      namespace,
      kubernetesVersion,
      datastore: cluster?.datastore ?? "unknown (--kubeconfig)",
      shared: cluster === undefined,
      async saveLogs(dir) {
        if (!cluster) return;
        await Deno.mkdir(dir, { recursive: true });
        for await (const entry of Deno.readDir(cluster.logDir)) {
          if (entry.isFile) {
            await Deno.copyFile(join(cluster.logDir, entry.name), join(dir, entry.name));
          }
        }
      },
      release,
      [Symbol.asyncDispose]: release,
    };
  } catch (error) {
    client?.close();
    await cluster?.stop();
    throw error;
  }
}

/**
 * Server-side applies every CRD in `files` (YAML, several documents allowed)
 * and waits until each is Established and its objects can be listed.
 *
 * @throws {Error} when a CRD is not Established within `timeoutMs` (default 30 000).
 */
export async function installCrds(
  client: KubeClient,
  files: readonly string[],
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<void> {
  const crds: Crd[] = [];
  for (const file of files) {
    for (const document of parseAllDocuments(await Deno.readTextFile(file))) {
      if (document.errors.length > 0) {
        throw new Error(`Cannot read the CRD file ${file}: ${document.errors[0]!.message}`);
      }
      const crd = document.toJS() as Crd | null;
      if (!crd) continue;
      await client.apply(CUSTOM_RESOURCE_DEFINITIONS, crd, {
        fieldManager: FIELD_MANAGER,
        force: true,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      crds.push(crd);
    }
  }
  const deadline = performance.now() + (options.timeoutMs ?? 30_000);
  for (const crd of crds) {
    // Established is not enough: the storage of a new CRD answers 429 for a moment after it.
    while (!(await established(client, crd, options.signal))) {
      if (performance.now() > deadline) {
        throw new Error(
          `The CRD ${crd.metadata?.name} was not served within ${options.timeoutMs ?? 30_000} ms`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

const CONFIGURATIONS: Readonly<Record<string, Resource>> = {
  ValidatingWebhookConfiguration: VALIDATING_WEBHOOK_CONFIGURATIONS,
  MutatingWebhookConfiguration: MUTATING_WEBHOOK_CONFIGURATIONS,
};

/**
 * Server-side applies the webhook configurations in `files` (YAML, several
 * documents allowed) with `{webhookPort}` replaced by `port`, before the
 * operator starts so that it injects its CA bundle into them.
 *
 * @returns a function that deletes them again: a cluster the run does not
 * own (`--kubeconfig`) must not keep a webhook whose operator is gone.
 * @throws {TypeError} for a document that is not a webhook configuration.
 */
export async function applyWebhookConfigurations(
  client: KubeClient,
  files: readonly string[],
  port: number,
  options: { signal?: AbortSignal } = {},
): Promise<() => Promise<void>> {
  const applied: { resource: Resource; name: string }[] = [];
  for (const file of files) {
    const text = (await Deno.readTextFile(file)).replaceAll("{webhookPort}", String(port));
    for (const document of parseAllDocuments(text)) {
      if (document.errors.length > 0) {
        throw new Error(`Cannot read ${file}: ${document.errors[0]!.message}`);
      }
      const configuration = document.toJS() as KubeObject | null;
      if (!configuration) continue;
      const resource = CONFIGURATIONS[configuration.kind ?? ""];
      if (!resource) {
        throw new TypeError(
          `Cannot apply ${file}: expected webhook configurations, got a ${configuration.kind}`,
        );
      }
      await client.apply(resource, configuration, {
        fieldManager: FIELD_MANAGER,
        force: true,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      applied.push({ resource, name: configuration.metadata?.name ?? "" });
    }
  }
  return async () => {
    for (const { resource, name } of applied) {
      await client.delete(resource, name).catch((e) => {
        if (!isNotFound(e)) throw e;
      });
    }
  };
}

interface Crd extends KubeObject {
  spec?: {
    group?: string;
    scope?: string;
    names?: { plural?: string; kind?: string };
    versions?: { name: string; served?: boolean }[];
  };
  status?: { conditions?: { type: string; status: string }[] };
}

/** Whether `crd` is Established and its objects can be listed. */
async function established(client: KubeClient, crd: Crd, signal?: AbortSignal): Promise<boolean> {
  const opts = signal ? { signal } : {};
  try {
    const current = await client.get<Crd>(
      CUSTOM_RESOURCE_DEFINITIONS,
      crd.metadata?.name ?? "",
      opts,
    );
    const ok = current.status?.conditions?.some((c) =>
      c.type === "Established" && c.status === "True"
    );
    if (!ok) return false;
    const spec = crd.spec ?? {};
    await client.list({
      group: spec.group ?? "",
      version: spec.versions?.find((v) => v.served !== false)?.name ?? "v1",
      plural: spec.names?.plural ?? "",
      kind: spec.names?.kind ?? "",
      namespaced: spec.scope === "Namespaced",
    }, { limit: 1, ...opts });
    return true;
  } catch (error) {
    if (signal?.aborted) throw error;
    if (isNotFound(error) || isTooManyRequests(error)) return false;
    throw error;
  }
}

/** `/version`, with the client certificate if there is one; tokens are not needed there. */
async function serverVersion(config: ClusterConfig): Promise<string> {
  const client = Deno.createHttpClient({
    ...(config.caCert ? { caCerts: [config.caCert] } : {}),
    ...(config.clientCert && config.clientKey
      ? { cert: config.clientCert, key: config.clientKey }
      : {}),
  });
  try {
    const response = await fetch(`${config.server}/version`, {
      client,
      signal: AbortSignal.timeout(10_000),
    });
    const body = await response.json() as { gitVersion?: string };
    return body.gitVersion ?? "unknown";
  } catch {
    return "unknown";
  } finally {
    client.close();
  }
}
