/**
 * A run wider than its credentials is refused at start, naming the command
 * that fixes it: credentials that `kinglet install --node-kubeconfig
 * --namespace team-a` made serve `team-a` alone, and a run of every
 * namespace from them would list nothing, log a denial per watch and keep
 * `/readyz` failing, while a `--leader-elect` leader held the Lease and
 * reconciled nothing.
 *
 * What the caller must know:
 *
 * - Only a 403 on a list of the run's primary kind, at the run's scope, is
 *   taken as narrower credentials; anything else (an unreachable server, a
 *   missing CRD) is left to the watchers, which retry.
 * - The authorizer follows new RBAC with a short lag, and a node's
 *   credentials unit applies it just before kinglet starts: a 403 is asked
 *   again for `graceMs` before the run is refused.
 * - The namespace the credentials serve is found in the kubeconfig's
 *   context, where install writes it; it is named only when a list there is
 *   allowed.
 *
 * @example
 * ```ts
 * import { checkCredentialsScope } from "./credentials_scope.ts";
 * import { WEB_APPS } from "../operators/webapp/kind.ts";
 * const client = { list: () => Promise.resolve({ items: [], metadata: {} }) };
 * await checkCredentialsScope(client, WEB_APPS, {
 *   config: { source: "/var/lib/kinglet/kubeconfig", namespace: "team-a" },
 * }); // resolves: the list was allowed
 * ```
 *
 * @module
 */
import { type Clock, systemClock } from "../async/clock.ts";
import type { KubeClient } from "../kube/client.ts";
import type { ClusterConfig } from "../kube/config.ts";
import { isForbidden } from "../kube/errors.ts";
import { resourceName } from "../kube/resources.ts";
import type { Resource } from "../kube/types.ts";
import { ENV_FILE } from "./flags.ts";

/** The run's scope is wider than its credentials: a configuration error, exit 2. */
export class ScopeError extends Error {
  /** Always `ScopeError`. */
  override readonly name = "ScopeError";
  /** Always false: the credentials or the scope must change first. */
  readonly retryable = false;
  /** The exit code of a configuration error, which the units do not restart on. */
  readonly exitCode = 2;
}

/** Options of {@link checkCredentialsScope}. */
export interface ScopeOptions {
  /** The one namespace the run watches; unset: every namespace. */
  namespace?: string;
  /** Where the credentials come from, and the namespace of their context. */
  config: Pick<ClusterConfig, "source" | "namespace">;
  /** How long a 403 is asked again before the run is refused. @default 10000 */
  graceMs?: number;
  /** @default systemClock */
  clock?: Clock;
  signal?: AbortSignal;
}

/** Between two asks while a 403 may be the authorizer's lag. */
const RETRY_MS = 1000;

/**
 * Lists one object of `resource` at the run's scope; resolves once that is
 * allowed, or fails with what the list failed with, but for a 403 that
 * lasts `graceMs`.
 *
 * @throws {ScopeError} naming the scope, the credentials and the command
 *   that grants the scope, or the `--namespace` the credentials serve.
 */
export async function checkCredentialsScope(
  client: Pick<KubeClient, "list">,
  resource: Resource,
  options: ScopeOptions,
): Promise<void> {
  const { namespace, signal } = options;
  const clock = options.clock ?? systemClock;
  const until = clock.now() + (options.graceMs ?? 10_000);
  const list = (at: string | undefined) =>
    client.list(resource, { limit: 1, ...(at && { namespace: at }), ...(signal && { signal }) });
  for (;;) {
    try {
      await list(namespace);
      return;
    } catch (error) {
      if (!isForbidden(error)) throw error;
      if (clock.now() >= until) break;
    }
    await clock.sleep(RETRY_MS, signal);
  }
  const context = options.config.namespace;
  const serves = context !== namespace && await list(context).then(() => true, () => false)
    ? context
    : undefined;
  throw new ScopeError(refusal(resource, namespace, options.config.source, serves));
}

function refusal(
  resource: Resource,
  namespace: string | undefined,
  source: string,
  serves: string | undefined,
): string {
  const scope = namespace ? `the namespace ${namespace}` : "every namespace";
  const head = `kinglet run watches ${scope}, but the credentials of ${source} may not list ` +
    `${resourceName(resource)} ${namespace ? `in ${namespace}` : "across the cluster"} (403)`;
  const grant = "kinglet install --kubeconfig <admin kubeconfig> --node-kubeconfig " +
    `<path>${namespace ? ` --namespace ${namespace}` : ""}`;
  const renew = "in node mode, systemctl start kinglet-credentials, then systemctl restart kinglet";
  if (serves) {
    return `${head}: they serve the namespace ${serves} only (install --namespace ${serves}). ` +
      `Run kinglet with --namespace ${serves} (KINGLET_NAMESPACE=${serves} in ${ENV_FILE}), ` +
      `or grant ${scope}: ${grant} (${renew})`;
  }
  return `${head}: grant ${scope} with ${grant} (${renew}); in a pod, apply deploy/'s RBAC ` +
    "(kubectl apply -k deploy/)";
}
