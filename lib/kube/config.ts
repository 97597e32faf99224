/**
 * Where the API server is and how to authenticate to it, from a kubeconfig
 * (one file or several merged), or from the in-cluster service account.
 *
 * @example
 * ```ts ignore
 * import { loadConfig } from "./config.ts";
 * const config = await loadConfig({ kubeconfig: "/etc/rancher/k3s/k3s.yaml" });
 * config.server; // "https://127.0.0.1:6443"
 * ```
 *
 * @module
 */
import { resolvePath as resolve } from "./_path.ts";
import type { Clock } from "../async/clock.ts";
import { ConfigError } from "./errors.ts";
import { inClusterConfig, SERVICE_ACCOUNT_DIR } from "./_in_cluster.ts";
import type { KubeconfigOptions } from "./_kubeconfig.ts";
import type { ClusterConfig } from "./cluster_config.ts";

export type { ClusterConfig } from "./cluster_config.ts";
export type { TokenSource } from "./token_source.ts";

/** Options of {@link loadConfig}; everything but the first two exists for tests. */
export interface LoadConfigOptions {
  /** An explicit kubeconfig path (`--kubeconfig`); wins over everything else. */
  kubeconfig?: string;
  /** The context to use instead of `current-context` (`--context`). */
  context?: string;
  /**
   * Defaults to {@link CONFIG_VARIABLES} of this process. When given, exec
   * plugins see exactly this environment; otherwise they see the variables
   * this process may read (Deno's `--allow-env`), never the rest.
   */
  env?: Record<string, string | undefined>;
  /** The home folder holding `.kube/config`. Defaults to `HOME` (or `USERPROFILE`) of `env`. */
  home?: string;
  /** Defaults to `Deno.readTextFile`; must throw `Deno.errors.NotFound` for missing files. */
  readTextFile?: (path: string) => Promise<string>;
  /** Defaults to `/var/run/secrets/kubernetes.io/serviceaccount`. */
  serviceAccountDir?: string;
  /** Times token re-reads and exec credential expiry; must tell wall-clock time. */
  clock?: Clock;
}

/**
 * Finds and loads the configuration, in controller-runtime's order:
 *
 * 1. `opts.kubeconfig`;
 * 2. the files listed in `KUBECONFIG`, merged as kubectl merges them (the
 *    first file to define a cluster, user or context name wins; missing files
 *    are skipped);
 * 3. the in-cluster service account, when `KUBERNETES_SERVICE_HOST` is set
 *    and no context was asked for;
 * 4. `~/.kube/config`.
 *
 * Paths inside a kubeconfig are relative to the file that holds them.
 *
 * @throws {ConfigError} saying what is wrong, in which file, context, cluster
 * or user, and what to do.
 *
 * @example
 * ```ts ignore
 * import { loadConfig } from "./config.ts";
 * const config = await loadConfig({ context: "edge-1" });
 * config.namespace; // the context's namespace, or "default"
 * ```
 */
export async function loadConfig(opts: LoadConfigOptions = {}): Promise<ClusterConfig> {
  const env = opts.env ?? readEnv(CONFIG_VARIABLES);
  const readTextFile = opts.readTextFile ?? ((path: string) => Deno.readTextFile(path));
  const common = {
    readTextFile,
    ...(opts.env ? { execEnv: opts.env } : {}),
    ...(opts.context ? { context: opts.context } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
  };
  if (opts.kubeconfig) {
    return await fromKubeconfig({
      ...common,
      paths: [resolve(opts.kubeconfig)],
      skipMissing: false,
    });
  }
  const separator = Deno.build.os === "windows" ? ";" : ":";
  const listed = (env.KUBECONFIG ?? "").split(separator).filter((p) => p.trim() !== "");
  if (listed.length > 0) {
    const paths = [...new Set(listed.map((p) => resolve(p)))];
    return await fromKubeconfig({ ...common, paths, skipMissing: true });
  }
  if (env.KUBERNETES_SERVICE_HOST && !opts.context) {
    return await inClusterConfig({
      env,
      readTextFile,
      serviceAccountDir: opts.serviceAccountDir ?? SERVICE_ACCOUNT_DIR,
      ...(opts.clock ? { clock: opts.clock } : {}),
    });
  }
  const home = opts.home ?? env.HOME ?? env.USERPROFILE;
  if (!home) {
    throw new ConfigError(
      "No kubeconfig to load: no --kubeconfig, KUBECONFIG is unset, not running in a cluster " +
        "and HOME is unset, so ~/.kube/config cannot be found; pass a kubeconfig path",
    );
  }
  const path = resolve(home, ".kube", "config");
  return await fromKubeconfig({
    ...common,
    paths: [path],
    skipMissing: false,
    missingHint: "KUBECONFIG is unset and KUBERNETES_SERVICE_HOST is unset (not in a cluster); " +
      "pass a kubeconfig path",
  });
}

/** The variables {@link loadConfig} reads; only these need `--allow-env`. */
export const CONFIG_VARIABLES: readonly string[] = [
  "KUBECONFIG",
  "HOME",
  "USERPROFILE",
  "KUBERNETES_SERVICE_HOST",
  "KUBERNETES_SERVICE_PORT",
  "POD_NAMESPACE",
];

/**
 * The named variables of this process; one that is unset, or that Deno's
 * `--allow-env` list does not grant, reads as undefined.
 */
export function readEnv(names: readonly string[]): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const name of names) {
    try {
      env[name] = Deno.env.get(name);
    } catch {
      env[name] = undefined;
    }
  }
  return env;
}

/**
 * Loads the kubeconfig code, and the YAML parser with it, only when a
 * kubeconfig is read: in-cluster, that saves about 8 MB of RSS.
 */
async function fromKubeconfig(opts: KubeconfigOptions): Promise<ClusterConfig> {
  const { kubeconfigConfig } = await import("./_kubeconfig.ts");
  return await kubeconfigConfig(opts);
}
