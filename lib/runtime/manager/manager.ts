/**
 * The manager owns lifecycles: it runs an ordered list of runnables
 * (runnable.ts) that serve the HTTP endpoints, install the CRDs, take the
 * leader Lease when asked to, run the shared caches and the controllers
 * with the memory governor and the heap release beside them, record their
 * Events, and on shutdown stop in reverse: the reconciles in flight drain,
 * the Events are flushed within a deadline and the Lease is released.
 *
 * What the caller must know:
 *
 * - Given no `client`, the manager connects as kubectl would (`KUBECONFIG`,
 *   in-cluster, `~/.kube/config`) when it runs, and closes that client when
 *   the run ends; given no signal, {@link Manager.run} runs until SIGINT or
 *   SIGTERM. `crds` are installed before the caches start.
 * - The endpoints listen on loopback by default (`127.0.0.1:8080` for
 *   `/metrics` and `/debug/cache`, `127.0.0.1:8081` for the probes): a pod
 *   must listen wider to be probed, and should then protect `/metrics` with
 *   {@link ManagerOptions.metricsAuth}, since `/debug/cache` names every
 *   cached object.
 * - Every reconcile's `events` go to one {@link EventRecorder} the manager
 *   owns ({@link Manager.events}); shutdown flushes it within what is left of
 *   the drain deadline, so nobody else has to.
 * - `/healthz` answers 200 while the process runs; `/readyz` answers 200
 *   only when every cache has synced and every watch showed life recently
 *   (a standby answers 200 too: it is healthy, just waiting), and 503 with
 *   the reasons otherwise.
 * - A watch that cannot work at all (a Deno permission denial), like any
 *   runnable that fails, stops everything and makes {@link Manager.run}
 *   throw it.
 * - Losing the Lease stops every reconcile at once (before the Lease can
 *   expire) and makes {@link Manager.run} resolve with `"leadership-lost"`;
 *   restart the process to stand again, as controller-runtime does.
 *
 * @example
 * ```ts
 * import { Manager } from "./manager.ts";
 * import type { ManagerClient } from "./manager.ts";
 * // Needs a cluster: `client` is usually a `KubeClient`.
 * async function example(client: ManagerClient): Promise<void> {
 *   const manager = new Manager({ client, metricsAddress: "0", healthAddress: "0" });
 *   const stop = new AbortController();
 *   const outcome = manager.run(stop.signal);
 *   stop.abort();
 *   await outcome; // "stopped"
 * }
 * ```
 *
 * @module
 */
import type { KubeObject } from "../../kube/types.ts";
import type { ManagerOptions, ManagerOutcome } from "./options.ts";
import { logger } from "../../log.ts";
import type { Caches } from "../cache/caches.ts";
import { Controller } from "../controller/controller.ts";
import type { ControllerSpec } from "../controller/spec.ts";
import type { EventRecorder } from "../events/events.ts";
import type { RuntimeMetrics } from "../metrics/metrics.ts";
import type { AdmissionWebhook, Conversion } from "../webhook/spec.ts";
import { type ManagerParts, managerParts } from "./_parts.ts";
import { debugReport, type Phase, readiness } from "./_report.ts";
import { managerRoutes } from "./_routes.ts";
import { managerRunnables } from "./_runnables.ts";
import { terminationSignal } from "./_termination_signal.ts";
import type { RunningListener } from "./http.ts";
import { aborted, FirstFailure, RunGroup, type Runnable } from "./runnable.ts";

export {
  type LeaderElection,
  leaseElection,
  type LeaseElectionOptions,
} from "./leader_election.ts";
export type { ManagerClient, ManagerOptions, ManagerOutcome } from "./options.ts";

/** Runs controllers; see the module documentation. */
export class Manager {
  /** The metrics `/metrics` serves. */
  readonly metrics: RuntimeMetrics;
  /** The caches shared by the controllers. */
  readonly caches: Caches;
  /**
   * Where every reconcile's `events` go; publish here what happens outside a
   * reconcile. Flushed when {@link Manager.run} ends, and closed then.
   */
  readonly events: EventRecorder;
  /** The client, the permits, the memory limit, the election and the controllers (_parts.ts). */
  readonly #parts: ManagerParts;
  #phase: Phase = "starting";
  #listeners: RunningListener[] = [];

  /**
   * Creates a manager; add controllers with {@link Manager.add}, then {@link Manager.run} it.
   *
   * @throws {RangeError} when `maxConcurrentReconciles` or `memoryLimit` is
   * not a positive integer, a reporting name is empty or longer than 128 bytes, or the
   * Lease's namespace, name or identity is empty.
   * @throws {TypeError} when `reportingInstance` or the Lease identity is
   * left to its default and the host's name may not be read.
   */
  constructor(options: ManagerOptions) {
    this.#parts = managerParts(options);
    this.metrics = this.#parts.metrics;
    this.caches = this.#parts.caches;
    this.events = this.#parts.events;
  }

  /** Registers a controller; call before {@link Manager.run}. */
  add<T extends KubeObject>(spec: ControllerSpec<T>): Controller<T> {
    const { options, permits, memory, metrics, caches } = this.#parts;
    // Under a memory limit every cache starts budgeted; the shares are set once all are added.
    const budget = memory?.startBudgets() ?? { primary: options.budget, owned: undefined };
    const controller = new Controller(spec, {
      client: this.#parts.client,
      events: this.events,
      semaphore: permits.semaphore,
      retryBucket: permits.retryBucket,
      caches,
      clock: this.#parts.clock,
      ...(budget.primary && { budget: budget.primary }),
      ...(budget.owned && { ownedBudget: budget.owned }),
      metrics: {
        queue: metrics.queue(spec.name),
        // The shared limit moves under a memory limit; the gauge follows it.
        controller: metrics.controller(
          spec.name,
          () => permits.limitOf(spec.maxConcurrentReconciles),
        ),
      },
    });
    // Every cache the controller reads, owned and watched kinds too: those are often the largest.
    for (const { kind, reflector } of caches.entries()) {
      if (controller.reflectors.includes(reflector)) metrics.trackStore(kind, reflector.store);
    }
    this.#parts.controllers.push(controller as unknown as Controller<KubeObject>);
    return controller;
  }

  /**
   * Registers an admission webhook or a conversion, served by every
   * candidate; call before {@link Manager.run}.
   *
   * @throws {TypeError} when the manager has no `webhook` option.
   */
  addWebhook(webhook: AdmissionWebhook | Conversion): void {
    const plan = this.#parts.webhooks;
    if (!plan) {
      throw new TypeError(
        `Cannot add the webhook of ${webhook.resource.kind}: the manager has no 'webhook' ` +
          "option, which says where to listen and where the certificates live",
      );
    }
    plan.added.push(webhook);
  }

  /** Ports the endpoints listen on, once running (useful with port 0). */
  get listeners(): readonly RunningListener[] {
    return this.#listeners;
  }

  /**
   * Loads the kubeconfig (when the manager has no client given) and installs
   * the {@link ManagerOptions.crds}, then serves, leads (or waits to) and
   * reconciles until `signal` aborts or leadership is lost. Without a
   * `signal` it runs until SIGINT or SIGTERM, as controller-runtime's
   * `SetupSignalHandler`.
   *
   * @throws {ConfigError} when the manager has no client and finds no usable kubeconfig.
   * @throws {CrdWaitError} when a CRD is not served within a minute.
   * @throws what a runnable failed with, e.g. a watch's permission denial.
   */
  async run(signal?: AbortSignal): Promise<ManagerOutcome> {
    using termination = signal ? undefined : terminationSignal();
    try {
      return await this.#run(signal ?? termination!.signal);
    } finally {
      this.#parts.ownClient?.close();
    }
  }

  async #run(shutdown: AbortSignal): Promise<ManagerOutcome> {
    const failure = new FirstFailure();
    const life = AbortSignal.any([shutdown, failure.signal]);
    const ended = new AbortController();
    const runnables = managerRunnables(this.#parts, {
      routes: managerRoutes(this, this.#parts.options),
      shutdown,
      onListening: (listeners) => this.#listeners = listeners,
      onControllersEnded: () => ended.abort(),
    });
    const leaderElected = runnables.filter((r) => r.leaderElected);
    const everyCandidate = new RunGroup(failure.report);
    const election = this.#parts.election;
    let lost = false;
    try {
      if (await everyCandidate.start(runnables.filter((r) => !r.leaderElected), life)) {
        if (!election) {
          await this.#lead(leaderElected, AbortSignal.any([life, ended.signal]), failure);
        } else {
          this.#phase = "standby";
          await election.run(life, async (leading) => {
            await this.#lead(leaderElected, AbortSignal.any([leading, ended.signal]), failure);
            lost = !life.aborted;
          });
        }
      }
    } finally {
      this.#phase = "stopping";
      await everyCandidate.stop();
      this.#parts.eventsLife.abort();
    }
    failure.rethrow();
    logger("manager").info(lost ? "leadership lost; stopped" : "stopped");
    return lost ? "leadership-lost" : "stopped";
  }

  /**
   * Runs the leader-elected `runnables` until `leading` aborts (or the
   * controllers all returned), then stops them in reverse.
   */
  async #lead(runnables: Runnable[], leading: AbortSignal, failure: FirstFailure): Promise<void> {
    this.#phase = "syncing";
    this.caches.synced().then(() => {
      if (this.#phase === "syncing") this.#phase = "running";
    });
    const group = new RunGroup(failure.report);
    try {
      if (await group.start(runnables, leading)) await aborted(leading);
    } finally {
      await group.stop();
    }
  }

  /** Why the manager is not ready; empty when it is (manager/_report.ts). */
  readiness(): string[] {
    const { clock, options } = this.#parts;
    return readiness(this.#phase, this.caches, clock.now(), options.staleAfterMs);
  }

  /**
   * What each cache holds: sizes and freshness, never object contents
   * (manager/_report.ts). The keys of one cache are served page by page at
   * `/debug/cache?cache=<name>` (see lib/runtime/cache/cache_debug.ts).
   */
  debugCache(): Record<string, unknown> {
    const { memory } = this.#parts;
    return debugReport({
      phase: this.#phase,
      caches: this.caches,
      now: this.#parts.clock.now(),
      ...(memory && { memoryLimit: memory.stats() }),
      controllers: this.#parts.controllers,
    });
  }
}
