/**
 * `kinglet install --node-kubeconfig <path>`: credentials for node mode with
 * kinglet's own rights instead of the cluster-admin `k3s.yaml`. Run with an
 * admin kubeconfig, it applies kinglet's ServiceAccount and its RBAC
 * (lib/cli/rbac.ts, the same as deploy/) and DatabaseCluster's webhook
 * configurations (deploy/systemd/webhooks.yaml), asks the TokenRequest API for a
 * token of that ServiceAccount, and writes two files, mode 0600: the token at
 * `<path>.token`, and at `<path>` a kubeconfig naming the API server, its CA
 * and that token file.
 *
 * It is lib/deploy's `installNodeCredentials` with kinglet's RBAC, which
 * says what the caller must know (the token's lifetime and renewal, the
 * files it writes); an author's operator runs the same for itself.
 *
 * @example
 * ```ts
 * import { installDenied } from "./node_credentials.ts";
 * installDenied(new Error("forbidden"), "/etc/kinglet/kubeconfig").exitCode; // 2
 * ```
 *
 * @module
 */
import type { ClusterConfig } from "../kube/config.ts";
import {
  checkNodeFiles as check,
  type CredentialsClient,
  installDenied as denied,
  type InstallDeniedError,
  installNodeCredentials as install,
} from "../deploy/node_credentials.ts";
import { FIELD_MANAGER } from "../operators/labels.ts";
import { KINGLET_ACCOUNT, KINGLET_NAMESPACE, kingletNodeWebhooks, kingletRbac } from "./rbac.ts";

/**
 * Proves, before install applies anything, that kinglet can write the
 * kubeconfig at `path` and its token (lib/deploy's `checkNodeFiles`).
 *
 * @throws {NodeFilesError} saying which folder, why, and what to grant.
 */
export function checkNodeFiles(path: string): Promise<void> {
  return check(path, FIELD_MANAGER);
}

/**
 * What to say when the API server refuses `kinglet install` run with the
 * kubeconfig at `source`: it takes an admin kubeconfig (lib/deploy's
 * `installDenied`), not more rights for kinglet.
 */
export function installDenied(
  error: Error,
  source: string,
  namespace: string = KINGLET_NAMESPACE,
): InstallDeniedError {
  return denied(error, source, { namespace, name: KINGLET_ACCOUNT });
}

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

/**
 * Applies kinglet's RBAC, requests a token and writes the token file and the
 * kubeconfig (lib/deploy's `installNodeCredentials`, which an author's
 * operator runs for itself); returns a line per thing done, for the user.
 *
 * @throws {RangeError} when `expirationSeconds` is under 600 (the API's floor).
 * @throws {NodeFilesError} before anything is applied, when the files cannot be written.
 */
export async function installNodeCredentials(
  client: CredentialsClient,
  config: Pick<ClusterConfig, "server" | "caCert">,
  options: NodeCredentialsOptions,
): Promise<string[]> {
  const namespace = options.namespace ?? KINGLET_NAMESPACE;
  const watched = options.watchNamespace;
  // The webhook configurations too: on a node no deploy/ applies them, and the API server must
  // call the kinglet beside it for DatabaseCluster's admissions.
  const objects = [
    ...kingletRbac(namespace, { ...(watched && { watchNamespaces: [watched] }) }),
    ...kingletNodeWebhooks(namespace),
  ];
  const done = await install(client, config, {
    objects,
    account: { namespace, name: KINGLET_ACCOUNT },
    fieldManager: FIELD_MANAGER,
    ...(options.watchNamespace && { namespace: options.watchNamespace }),
  }, {
    path: options.path,
    ...(options.expirationSeconds !== undefined &&
      { expirationSeconds: options.expirationSeconds }),
    ...(options.signal && { signal: options.signal }),
  });
  const scope = watched
    ? `its rights serve the namespace ${watched} alone (the Role kinglet there; the ClusterRole ` +
      `keeps what is in no namespace): run kinglet with --namespace ${watched} too`
    : "its rights serve every namespace (the ClusterRole kinglet, as deploy/clusterrole.yaml)";
  return [...done, scope];
}
