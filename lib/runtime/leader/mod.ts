/**
 * Leader election on a `coordination.k8s.io/v1` Lease with client-go's
 * semantics and defaults (15 s lease, 10 s renew deadline, 2 s retry): a
 * {@link LeaderElector} over a {@link LeaseApi} ({@link leaseApi} binds one
 * to a client). A leader that cannot renew stops before its Lease can expire;
 * a clean shutdown releases the Lease.
 *
 * @example
 * ```ts
 * import { type Lease, LeaderElector } from "./mod.ts";
 * let stored: Lease | undefined;
 * const api = {
 *   get: () => Promise.resolve(stored),
 *   create: (lease: Lease) => Promise.resolve(stored = { ...lease, metadata: { ...lease.metadata, resourceVersion: "1" } }),
 *   replace: (lease: Lease) => Promise.resolve(stored = lease),
 * };
 * const elector = new LeaderElector(api, { namespace: "kube-system", name: "demo", identity: "node-a" });
 * const shutdown = new AbortController();
 * await elector.run(shutdown.signal, { onStartedLeading: () => shutdown.abort() });
 * if (stored?.spec?.holderIdentity !== "") throw new Error("not released");
 * ```
 *
 * @module
 */
export * from "./leader.ts";
