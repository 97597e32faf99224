/**
 * In-cluster configuration: the API server from `KUBERNETES_SERVICE_HOST`
 * and `KUBERNETES_SERVICE_PORT`, credentials from the mounted service
 * account folder.
 *
 * @module
 */
import type { Clock } from "../async/clock.ts";
import type { ClusterConfig } from "./cluster_config.ts";
import { ConfigError, describeError } from "./errors.ts";
import { FileTokenSource } from "./token_source.ts";

/** Where the kubelet mounts the service account token, CA and namespace. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** Inputs of {@link inClusterConfig}, injectable for tests. */
export interface InClusterOptions {
  env: Record<string, string | undefined>;
  serviceAccountDir: string;
  readTextFile: (path: string) => Promise<string>;
  clock?: Clock;
}

/**
 * Builds the in-cluster configuration. The token is read now, so that a
 * missing mount fails at start-up, and re-read later as the kubelet rotates it.
 *
 * @throws {ConfigError} when the environment or the service account files are missing.
 */
export async function inClusterConfig(opts: InClusterOptions): Promise<ClusterConfig> {
  const host = opts.env.KUBERNETES_SERVICE_HOST;
  const port = opts.env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new ConfigError(
      "Cannot use the in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT " +
        "must both be set (they are, inside a pod); outside a cluster pass a kubeconfig",
    );
  }
  const dir = opts.serviceAccountDir.replace(/\/+$/, "");
  const read = async (file: string, what: string, optional = false) => {
    try {
      return await opts.readTextFile(`${dir}/${file}`);
    } catch (e) {
      if (optional && e instanceof Deno.errors.NotFound) return "";
      const reason = describeError(e);
      throw new ConfigError(
        `Cannot read the service account ${what} ${dir}/${file}: ${reason}; ` +
          "mount a service account token in the pod (automountServiceAccountToken must not be false)",
        { cause: e },
      );
    }
  };
  const caCert = await read("ca.crt", "CA certificate");
  const auth = new FileTokenSource(`${dir}/token`, {
    readTextFile: opts.readTextFile,
    description: `service account token ${dir}/token`,
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  await auth.token();
  const namespace = opts.env.POD_NAMESPACE?.trim() ||
    (await read("namespace", "namespace", true)).trim();
  const server = host.includes(":") ? `https://[${host}]:${port}` : `https://${host}:${port}`;
  return { server, caCert, auth, namespace: namespace || "default", source: "in-cluster" };
}
