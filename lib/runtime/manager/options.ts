/**
 * What a {@link Manager} takes: {@link ManagerOptions}, the
 * {@link ManagerClient} it runs on, and the {@link ManagerOutcome} its run
 * ends with.
 *
 * @example
 * ```ts
 * import type { ManagerOptions } from "./options.ts";
 * const options: ManagerOptions = {
 *   reportingController: "example.com/backup-operator",
 *   leaderElection: { namespace: "kube-system", name: "backup-operator" },
 * };
 * ```
 *
 * @module
 */
import type { Clock } from "../../async/clock.ts";
import type { KubeObject } from "../../kube/types.ts";
import type { StoreBudget } from "../cache/store.ts";
import type { ControllerClient } from "../controller/controller.ts";
import type { LeaseClient } from "../leader/leader.ts";
import type { RuntimeMetrics } from "../metrics/metrics.ts";
import type { WatcherOptions } from "../watcher/watcher.ts";
import type { WebhookServingOptions } from "../webhook/serving.ts";
import type { EndpointAuth } from "./endpoint_auth.ts";
import type { LeaderElection, LeaseElectionOptions } from "./leader_election.ts";

/**
 * What the manager needs of the client: what its controllers need, and
 * Lease writes for leader election. A `KubeClient` is one; so is the test
 * kit's in-memory API server.
 */
export type ManagerClient = ControllerClient & LeaseClient;

/** Options of {@link Manager}; defaults follow controller-runtime where it has one. */
export interface ManagerOptions {
  /**
   * Lists, watches and reads the cached resources, and writes what the
   * controllers write. Defaults to a `KubeClient` for the cluster that
   * `loadConfig` finds (`KUBECONFIG`, in-cluster, `~/.kube/config`), as
   * controller-runtime's `GetConfigOrDie`: {@link Manager.run} loads it
   * first, throwing the `ConfigError` that says what is missing, and closes
   * it when it returns. That client's requests are counted and timed in
   * {@link ManagerOptions.metrics} (`rest_client_requests_total`,
   * `rest_client_request_duration_seconds`,
   * `rest_client_rate_limiter_duration_seconds`); a `KubeClient` of your own
   * is counted when made with `onRequest: metrics.observeRequest` and
   * `onRateLimited: metrics.observeRateLimit` of the metrics you pass.
   */
  client?: ManagerClient;
  /**
   * Where the default client finds the cluster: a kubeconfig path and a
   * context, as `--kubeconfig` and `--context` name them (`operatorFlags`
   * of `./cli` reads both). Ignored with {@link ManagerOptions.client}.
   * Defaults to `loadConfig`'s order.
   */
  connection?: { kubeconfig?: string; context?: string };
  /**
   * CRDs to install before anything starts, e.g. `[backups.crd()]` from
   * `defineKind` of `./crd`: {@link Manager.run} applies them (server-side
   * apply, field manager {@link ManagerOptions.reportingController}) and
   * waits until the API server serves each, as {@link installCrds} does.
   * Most operators ship their CRDs in their manifests instead. Defaults to
   * none.
   */
  crds?: readonly KubeObject[];
  /** Watch only this namespace. Defaults to all. */
  namespace?: string;
  /** Reconciles running at once across all controllers, at most. Defaults to 8. */
  maxConcurrentReconciles?: number;
  /** Caps on each primary cache. Defaults to none. */
  budget?: StoreBudget;
  /**
   * Bytes of resident memory to stay under, e.g. the container's limit from
   * `cgroupMemoryLimit()`. The manager then sizes the primary caches'
   * budget (within {@link ManagerOptions.budget}), list pages and
   * concurrency from it (see `memoryPlan`), samples its RSS every second,
   * and as RSS nears the limit evicts cached objects, then runs fewer
   * reconciles, relaxing again as RSS falls (see `MemoryGovernor`); no key
   * is lost. Reported as `kinglet_memory_*` metrics.
   *
   * @default {undefined} no limit
   */
  memoryLimit?: number;
  /**
   * Campaign for a Lease and run the controllers only while leading: the
   * Lease's namespace and name (and optionally this candidate's identity),
   * or an election of your own. Defaults to none (this process always leads).
   */
  leaderElection?: LeaseElectionOptions | LeaderElection;
  /**
   * With leader election, what a standby holds while it waits: `"cold"`
   * (nothing: every cache is listed once it leads, the least memory) or
   * `"warm"` (its caches listed and watched while it waits, so that it
   * reconciles as soon as it leads, at the memory of the caches).
   *
   * @default "cold"
   */
  standby?: "cold" | "warm";
  /**
   * Names the controller in the Events of every reconcile, e.g.
   * `example.com/backup-operator`.
   *
   * @default "kinglet"
   */
  reportingController?: string;
  /**
   * Names this instance in the Events of every reconcile, e.g. the pod's
   * name. Defaults to the host's name (`Deno.hostname()`, which needs
   * `--allow-sys=hostname`).
   */
  reportingInstance?: string;
  /**
   * `host:port` for `/metrics` and `/debug/cache`; `0` disables. Defaults to
   * `127.0.0.1:8080`: loopback, since `/debug/cache` names every cached
   * object; listen wider with {@link ManagerOptions.metricsAuth}.
   */
  metricsAddress?: string;
  /**
   * Who may read `/metrics` and `/debug/cache`, e.g. {@link tokenReviewAuth}.
   * Defaults to anyone who can reach the address.
   */
  metricsAuth?: EndpointAuth;
  /**
   * `host:port` for `/healthz` and `/readyz` (never protected: kubelets probe
   * them); `0` disables. Defaults to `127.0.0.1:8081`: loopback, so a pod
   * must set `0.0.0.0:8081` (or its own port) for the kubelet to reach it.
   */
  healthAddress?: string;
  /**
   * How long shutdown waits for reconciles in flight and then for the
   * Events they published. Defaults to 10 000 ms, client-go's renew
   * deadline: with leader election the Lease is no longer renewed while
   * draining, so a longer drain could overlap the next leader.
   */
  drainTimeoutMs?: number;
  /**
   * A watch silent for longer makes `/readyz` fail. Defaults to 660 000 ms:
   * a quiet watch is sure to hear only the server ending it, after its
   * server-side timeout of at most 600 s.
   */
  staleAfterMs?: number;
  /** Where the runtime reports. Defaults to a new {@link RuntimeMetrics}. */
  metrics?: RuntimeMetrics;
  /** Options of every watch (stall timeout, page size, streaming lists). */
  watcherOptions?: Omit<WatcherOptions, "backoff" | "outage" | "streamingLists">;
  /**
   * Where and how the webhooks added with {@link Manager.addWebhook} are
   * served: on every candidate, leader or not, before the CRDs are
   * installed. Required to add one; see `WebhookServingOptions`.
   */
  webhook?: WebhookServingOptions;
  /** Defaults to {@link systemClock}. */
  clock?: Clock;
}

/** Why {@link Manager.run} returned. */
export type ManagerOutcome = "stopped" | "leadership-lost";
