/**
 * How a `Manager` takes part in leader election: a
 * {@link LeaderElection} runs the manager's work while this process leads.
 * Give the manager plain {@link LeaseElectionOptions} (a Lease's namespace
 * and name) and it builds the Lease elector itself, with client-go's timings;
 * or adapt a {@link LeaderElector} of your own with {@link leaseElection}.
 *
 * @example
 * ```ts
 * import { Manager, type ManagerClient } from "./mod.ts";
 * // Usually a `KubeClient`; a manager that is never run never calls it.
 * const client = {} as ManagerClient;
 * new Manager({
 *   client,
 *   leaderElection: { namespace: "kube-system", name: "backup-operator", identity: "node-a" },
 * });
 * ```
 *
 * @module
 */
import type { Clock } from "../../async/clock.ts";
import { hostName } from "../_host_name.ts";
import { LeaderElector, leaseApi, type LeaseClient } from "../leader/leader.ts";

/** Runs `lead` while holding leadership; see lib/runtime/leader/leader.ts. */
export interface LeaderElection {
  /**
   * Campaigns until `signal` aborts, calling `lead` with a signal that aborts
   * when leadership is lost. Resolves after releasing the Lease.
   */
  run(signal: AbortSignal, lead: (leading: AbortSignal) => Promise<void>): Promise<void>;
}

/** Where the candidates meet: the Lease the manager campaigns for. */
export interface LeaseElectionOptions {
  /** Namespace of the Lease. */
  namespace: string;
  /** Name of the Lease, the same for every candidate of one operator. */
  name: string;
  /**
   * Who this process is, unique among the candidates. Defaults to the
   * host's name, `_` and 8 random hex digits, as client-go's
   * (`Deno.hostname()` needs `--allow-sys=hostname`).
   */
  identity?: string;
}

/**
 * Adapts a {@link LeaderElector} to the manager: the work runs while we lead,
 * and the Lease is released only after the work has drained.
 *
 * @example
 * ```ts
 * import { leaseElection } from "./leader_election.ts";
 * import { type Lease, LeaderElector } from "../leader/leader.ts";
 * let stored: Lease | undefined;
 * const api = {
 *   get: () => Promise.resolve(stored),
 *   create: (lease: Lease) => Promise.resolve(stored = { ...lease, metadata: { ...lease.metadata, resourceVersion: "1" } }),
 *   replace: (lease: Lease) => Promise.resolve(stored = lease),
 * };
 * const election = leaseElection(
 *   new LeaderElector(api, { namespace: "kube-system", name: "demo", identity: "node-a" }),
 * );
 * const shutdown = new AbortController();
 * let led = false;
 * await election.run(shutdown.signal, () => {
 *   led = true;
 *   shutdown.abort();
 *   return Promise.resolve();
 * });
 * if (!led) throw new Error("never led");
 * ```
 */
export function leaseElection(elector: LeaderElector): LeaderElection {
  return {
    async run(signal, lead) {
      let work: Promise<void> = Promise.resolve();
      await elector.run(signal, {
        onStartedLeading: (leading) => {
          work = lead(leading);
          return work;
        },
        onStoppedLeading: () => work.catch(() => {}),
      });
    },
  };
}

/**
 * The election `option` names: itself, or a Lease elector over `client` for
 * plain options.
 *
 * @throws {RangeError} when the namespace, name or identity is empty.
 * @throws {TypeError} when the identity is left to its default and the
 * host's name may not be read.
 */
export function electionOf(
  option: LeaderElection | LeaseElectionOptions,
  client: LeaseClient,
  clock: Clock,
): LeaderElection {
  if ("run" in option) return option;
  const identity = option.identity ??
    `${hostName("the manager", "leaderElection.identity")}_${crypto.randomUUID().slice(0, 8)}`;
  return leaseElection(
    new LeaderElector(leaseApi(client), {
      namespace: option.namespace,
      name: option.name,
      identity,
      clock,
    }),
  );
}
