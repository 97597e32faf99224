/**
 * The {@link Manager}: owns the lifecycles of a set of controllers, as an
 * ordered list of {@link Runnable}s started in order and stopped in reverse.
 * It serves `/healthz`, `/readyz`, `/metrics` and `/debug/cache` (on loopback
 * unless told otherwise), takes the leader Lease when given one
 * ({@link LeaseElectionOptions} or a {@link LeaderElection}), starts the
 * shared caches, waits for them to sync, runs the controllers, records their
 * Events, and on shutdown drains the reconciles in flight and flushes the
 * Events within a deadline.
 *
 * @example
 * ```ts
 * import { Manager, type ManagerClient } from "./mod.ts";
 * // Usually a `KubeClient`; a manager without controllers never calls it.
 * const client = {} as ManagerClient;
 * const manager = new Manager({ client, metricsAddress: "0", healthAddress: "0" });
 * const stop = new AbortController();
 * const outcome = manager.run(stop.signal);
 * stop.abort();
 * if (await outcome !== "stopped") throw new Error("unexpected outcome");
 * ```
 *
 * @module
 */
export type { Listener, Route, RunningListener } from "./http.ts";
export * from "./manager.ts";
export {
  type LeaderElection,
  leaseElection,
  type LeaseElectionOptions,
} from "./leader_election.ts";
export * from "./endpoint_auth.ts";
