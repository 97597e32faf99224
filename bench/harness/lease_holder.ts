/**
 * Who holds a leader-election Lease (`coordination.k8s.io/v1`), read with
 * the harness' own client, never the operator's: the failover scenario's
 * evidence of which candidate leads, and of when leadership moved.
 *
 * A read that fails (a 5xx, a timeout) is one more try, not an error: the
 * API server answers the harness on the same machine the operators load.
 *
 * @example
 * ```ts ignore
 * import { leaseHolder, untilHolder } from "./lease_holder.ts";
 * const lease = { namespace: "bench", name: "kinglet-leader" };
 * await leaseHolder(client, lease); // "bench-a"
 * await untilHolder(client, lease, "bench-b", { now, sinceMs: killedMs, timeoutMs: 600_000 });
 * ```
 *
 * @module
 */
import { setTimeout as delay } from "node:timers/promises";
import type { KubeClient } from "../../lib/kube/client.ts";
import { LEASES } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";

/** A Lease by namespace and name. */
export interface LeaseName {
  namespace: string;
  name: string;
}

/** How often {@link untilHolder} reads the Lease. */
export const LEASE_POLL_MS = 100;

/** The Lease's holder; `undefined` when it has none (released) or there is no Lease yet. */
export async function leaseHolder(
  client: Pick<KubeClient, "getOptional">,
  lease: LeaseName,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const object = await client.getOptional<KubeObject & { spec?: { holderIdentity?: string } }>(
    LEASES,
    lease.name,
    { namespace: lease.namespace, ...(signal && { signal }) },
  );
  return object?.spec?.holderIdentity || undefined;
}

/**
 * Reads the Lease every 100 ms until it names `identity`: milliseconds on
 * the `now` clock from `sinceMs` until then, or `undefined` once `timeoutMs`
 * have passed since `sinceMs`.
 *
 * @throws the reason of `signal` when it aborts.
 */
export async function untilHolder(
  client: Pick<KubeClient, "getOptional">,
  lease: LeaseName,
  identity: string,
  options: { now: () => number; sinceMs: number; timeoutMs: number; signal?: AbortSignal },
): Promise<number | undefined> {
  const { now, sinceMs, signal } = options;
  while (now() < sinceMs + options.timeoutMs) {
    const holder = await leaseHolder(client, lease, signal).catch(() => undefined);
    signal?.throwIfAborted();
    if (holder === identity) return now() - sinceMs;
    await delay(LEASE_POLL_MS, undefined, signal && { signal });
  }
  return undefined;
}
