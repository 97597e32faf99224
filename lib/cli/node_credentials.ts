/**
 * `kinglet install --node-kubeconfig <path>`: credentials for node mode with
 * kinglet's own rights instead of the cluster-admin `k3s.yaml`. Run with an
 * admin kubeconfig, it applies kinglet's ServiceAccount and its RBAC
 * (lib/cli/rbac.ts, the same as deploy/), asks the TokenRequest API for a
 * token of that ServiceAccount, and writes two files, mode 0600: the token at
 * `<path>.token`, and at `<path>` a kubeconfig naming the API server, its CA
 * and that token file.
 *
 * What the caller must know:
 *
 * - The token expires (`expirationSeconds`, 24 h by default; the API server
 *   may shorten it). Running the command again writes a fresh one in place
 *   (a temporary file renamed over the old, so a reader never sees half a
 *   token); a running kinglet reads the token file again every minute and on
 *   a 401, so it picks the new token up without a restart. The systemd timer
 *   in deploy/systemd/ renews it every 8 hours.
 * - The kubeconfig is written as block YAML that kinglet reads without its
 *   YAML package, and keeps no secret itself: the token is only in its file.
 *
 * @example
 * ```ts
 * import { nodeKubeconfig } from "./node_credentials.ts";
 * nodeKubeconfig({ server: "https://10.0.0.1:6443", caCert: "-----BEGIN CERTIFICATE-----\n" }, "/var/lib/kinglet/kubeconfig.token", "kinglet-system")
 *   .includes("tokenFile: /var/lib/kinglet/kubeconfig.token"); // true
 * ```
 *
 * @module
 */
import { dirname } from "node:path";
import type { KubeClient } from "../kube/client.ts";
import type { ClusterConfig } from "../kube/config.ts";
import { FIELD_MANAGER } from "../operators/labels.ts";
import { KINGLET_ACCOUNT, KINGLET_NAMESPACE, kingletRbac } from "./rbac.ts";

/** Options of {@link installNodeCredentials}. */
export interface NodeCredentialsOptions {
  /** Where the kubeconfig goes; the token goes beside it, at `<path>.token`. */
  path: string;
  /** kinglet's namespace (its ServiceAccount, Lease and Role). Defaults to `kinglet-system`. */
  namespace?: string;
  /**
   * The one namespace a kinglet run with `--namespace` watches: its rights
   * are granted there only, by a Role (see `KingletRbacOptions`). Defaults
   * to none: every namespace.
   */
  watchNamespace?: string;
  /** The token's requested lifetime. Defaults to 86 400 (24 h). */
  expirationSeconds?: number;
  signal?: AbortSignal;
}

/** What the admin client must be able to do. */
export type CredentialsClient = Pick<KubeClient, "apply" | "requestToken">;

/**
 * Applies kinglet's RBAC, requests a token and writes the token file and the
 * kubeconfig; returns a line per thing done, for the user.
 *
 * @throws {RangeError} when `expirationSeconds` is under 600 (the API's floor).
 * @throws {Deno.errors.PermissionDenied} (or NotCapable) when the process may not write there.
 */
export async function installNodeCredentials(
  client: CredentialsClient,
  config: Pick<ClusterConfig, "server" | "caCert">,
  options: NodeCredentialsOptions,
): Promise<string[]> {
  const namespace = options.namespace ?? KINGLET_NAMESPACE;
  const lifetime = options.expirationSeconds ?? 86_400;
  if (!Number.isSafeInteger(lifetime) || lifetime < 600) {
    throw new RangeError(
      `Cannot request kinglet's token: its lifetime must be at least 600 s (the TokenRequest API's floor), got ${lifetime}`,
    );
  }
  const { signal } = options;
  const rbac = kingletRbac(namespace, {
    ...(options.watchNamespace && { watchNamespaces: [options.watchNamespace] }),
  });
  for (const { resource, ...object } of rbac) {
    await client.apply(resource, object, {
      fieldManager: FIELD_MANAGER,
      force: true,
      ...(signal && { signal }),
    });
  }
  const { token, expirationTimestamp } = await client.requestToken(namespace, KINGLET_ACCOUNT, {
    expirationSeconds: lifetime,
    ...(signal && { signal }),
  });
  const tokenPath = `${options.path}.token`;
  await Deno.mkdir(dirname(options.path), { recursive: true, mode: 0o700 });
  await writePrivate(tokenPath, token);
  await writePrivate(options.path, nodeKubeconfig(config, tokenPath, namespace));
  return [
    `applied the ServiceAccount ${namespace}/${KINGLET_ACCOUNT} and its RBAC (deploy/'s)`,
    `wrote ${tokenPath}: a token of ${namespace}/${KINGLET_ACCOUNT}, valid until ${expirationTimestamp}; run this again before then`,
    `wrote ${options.path}: run kinglet with --kubeconfig ${options.path}`,
  ];
}

/** The kubeconfig of a node's kinglet: the API server, its CA and the token file. */
export function nodeKubeconfig(
  config: Pick<ClusterConfig, "server" | "caCert">,
  tokenPath: string,
  namespace: string,
): string {
  const ca = config.caCert === undefined
    ? []
    : [`    certificate-authority-data: ${btoa(config.caCert)}`];
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: kinglet",
    "  cluster:",
    `    server: ${config.server}`,
    ...ca,
    "users:",
    "- name: kinglet",
    "  user:",
    `    tokenFile: ${tokenPath}`,
    "contexts:",
    "- name: kinglet",
    "  context:",
    "    cluster: kinglet",
    "    user: kinglet",
    `    namespace: ${namespace}`,
    "current-context: kinglet",
    "",
  ].join("\n");
}

/** Writes `text` to `path`, mode 0600, replacing any old file at once. */
async function writePrivate(path: string, text: string): Promise<void> {
  const temporary = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(temporary, text, { mode: 0o600 });
  try {
    await Deno.chmod(temporary, 0o600);
    await Deno.rename(temporary, path);
  } catch (error) {
    await Deno.remove(temporary).catch(() => {});
    throw error;
  }
}
