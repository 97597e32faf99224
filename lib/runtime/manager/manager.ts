/**
 * The manager owns lifecycles: it serves the HTTP endpoints, takes the
 * leader Lease when asked to, starts the shared caches, waits for them to
 * sync, runs the controllers, records their Events, and on shutdown drains
 * reconciles in flight, flushes the Events within a deadline and releases
 * the Lease.
 *
 * What the caller must know:
 *
 * - Given no `client`, the manager connects as kubectl would (`KUBECONFIG`,
 *   in-cluster, `~/.kube/config`) when it runs, and closes that client when
 *   the run ends; given no signal, {@link Manager.run} runs until SIGINT or
 *   SIGTERM. `crds` are installed before anything starts.
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
 * - A watch that cannot work at all (a Deno permission denial) stops the
 *   controllers and makes {@link Manager.run} throw it.
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
import type { KubeObject, ObjectKey } from "../../kube/types.ts";
import type { ManagerClient, ManagerOptions, ManagerOutcome } from "./options.ts";
import { logger } from "../../log.ts";
import { Caches } from "../cache/caches.ts";
import { type Clock, deadline, systemClock } from "../../async/clock.ts";
import { Controller } from "../controller/controller.ts";
import type { ControllerSpec } from "../controller/spec.ts";
import { EventRecorder, eventSink } from "../events/events.ts";
import { installCrds } from "../crds/install.ts";
import { HeapRelease, v8Collect } from "./_heap_release.ts";
import { KubeconfigClient } from "./_kubeconfig_client.ts";
import { terminationSignal } from "./_termination_signal.ts";
import { type RunningListener, serveEndpoints } from "./http.ts";
import { electionOf, type LeaderElection } from "./leader_election.ts";
import { managerRoutes } from "./_routes.ts";
import { debugReport, type Phase, readiness } from "./_report.ts";
import { RuntimeMetrics } from "../metrics/metrics.ts";
import { Semaphore } from "../../async/semaphore.ts";
import { TokenBucketRateLimiter } from "../queue/rate_limiter.ts";
import { MemoryGovernor } from "../memory/governor.ts";
import { type MemoryLevel, memoryPlan } from "../memory/plan.ts";
import { cacheShares, limitCaches } from "../memory/cache_shares.ts";

/** How often the manager checks whether a finished burst left garbage to collect. */
const HEAP_RELEASE_CHECK_MS = 5_000;

export {
  type LeaderElection,
  leaseElection,
  type LeaseElectionOptions,
} from "./leader_election.ts";
export type { ManagerClient, ManagerOptions, ManagerOutcome } from "./options.ts";

/** Caches running under {@link Manager}: `stopped` aborts when they stop or fail. */
interface RunningCaches {
  stopped: AbortSignal;
  /** Stops them and waits; rethrows what made them fail, if anything did. */
  stop(): Promise<void>;
}

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
  /** Ends the recorder after the last flush. */
  readonly #eventsLife = new AbortController();
  readonly #options: ManagerOptions;
  readonly #client: ManagerClient;
  /** The client the manager made itself, connected and closed by {@link Manager.run}. */
  readonly #ownClient: KubeconfigClient | undefined;
  readonly #election: LeaderElection | undefined;
  readonly #clock: Clock;
  readonly #semaphore: Semaphore;
  /** Keeps {@link ManagerOptions.memoryLimit}; absent without one. */
  readonly #memory: MemoryGovernor | undefined;
  readonly #controllers: Controller<KubeObject>[] = [];
  /** One bucket for every controller's retries: an outage's retries leave at its pace, not N times it. */
  readonly #retryBucket: TokenBucketRateLimiter<ObjectKey>;
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
    const max = options.maxConcurrentReconciles ?? 8;
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(
        `Cannot create the manager: 'maxConcurrentReconciles' must be a positive integer, got ${max}`,
      );
    }
    this.#options = options;
    this.metrics = options.metrics ?? new RuntimeMetrics();
    this.#ownClient = options.client ? undefined : new KubeconfigClient(options.connection, {
      onRequest: this.metrics.observeRequest,
      onRateLimited: this.metrics.observeRateLimit,
    });
    this.#client = options.client ?? this.#ownClient!;
    this.#clock = options.clock ?? systemClock;
    this.#retryBucket = new TokenBucketRateLimiter(this.#clock);
    const plan = options.memoryLimit === undefined ? undefined : memoryPlan(
      positiveLimit(options.memoryLimit),
      max,
    );
    this.#semaphore = new Semaphore(plan?.concurrency.normal ?? max);
    this.#memory = plan && new MemoryGovernor({
      limitBytes: plan.limitBytes,
      plan,
      clock: this.#clock,
      actions: {
        cacheBytes: (bytes, level) => this.#limitCaches(bytes, level),
        concurrency: (permits) => this.#semaphore.resize(permits),
        collect: v8Collect() ?? (() => {}),
      },
    });
    if (this.#memory) this.metrics.trackMemory(() => this.#memory!.stats());
    const pageSize = options.watcherOptions?.pageSize ?? plan?.pageSize;
    this.events = new EventRecorder(eventSink(this.#client), {
      ...(options.reportingController !== undefined &&
        { reportingController: options.reportingController }),
      ...(options.reportingInstance !== undefined &&
        { reportingInstance: options.reportingInstance }),
      clock: this.#clock,
      signal: this.#eventsLife.signal,
      ...(plan && { maxTracked: plan.eventsTracked }),
    });
    this.#election = options.leaderElection &&
      electionOf(options.leaderElection, this.#client, this.#clock);
    this.caches = new Caches({
      client: this.#client,
      clock: this.#clock,
      ...(options.namespace !== undefined && { namespace: options.namespace }),
      ...((options.watcherOptions || pageSize) &&
        { watcherOptions: { ...options.watcherOptions, ...(pageSize && { pageSize }) } }),
    });
  }

  /** Registers a controller; call before {@link Manager.run}. */
  add<T extends KubeObject>(spec: ControllerSpec<T>): Controller<T> {
    // Under a memory limit every cache starts budgeted; the shares are set once all are added.
    const shares = this.#memory &&
      cacheShares(
        this.#memory.plan.cacheBytes.normal,
        "normal",
        { primaries: 1, owned: 0 },
        this.#options.budget,
      );
    const budget = shares?.primary ?? this.#options.budget;
    const ownedBudget = shares?.owned;
    const controller = new Controller(spec, {
      client: this.#client,
      events: this.events,
      semaphore: this.#semaphore,
      caches: this.caches,
      clock: this.#clock,
      retryBucket: this.#retryBucket,
      ...(budget && { budget }),
      ...(ownedBudget && { ownedBudget }),
      metrics: {
        queue: this.metrics.queue(spec.name),
        // The shared limit moves under a memory limit; the gauge follows it.
        controller: this.metrics.controller(spec.name, () => {
          const shared = this.#semaphore.limit;
          return Math.min(spec.maxConcurrentReconciles ?? shared, shared);
        }),
      },
    });
    // Every cache the controller reads, owned and watched kinds too: those are often the largest.
    for (const { kind, reflector } of this.caches.entries()) {
      if (controller.reflectors.includes(reflector)) this.metrics.trackStore(kind, reflector.store);
    }
    this.#controllers.push(controller as unknown as Controller<KubeObject>);
    return controller;
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
   */
  async run(signal?: AbortSignal): Promise<ManagerOutcome> {
    using termination = signal ? undefined : terminationSignal();
    try {
      return await this.#run(signal ?? termination!.signal);
    } finally {
      this.#ownClient?.close();
    }
  }

  async #run(signal: AbortSignal): Promise<ManagerOutcome> {
    const log = logger("manager");
    const serving = new AbortController();
    this.#listeners = serveEndpoints(managerRoutes(this, this.#options), serving.signal);
    let lost = false;
    // The drain deadline counts from the shutdown: the Events' flush gets what is left of it.
    let stopping: ReturnType<typeof deadline> | undefined;
    const onStop = () => stopping = deadline(this.#clock, this.#drainMs());
    signal.addEventListener("abort", onStop, { once: true });
    try {
      if (!await this.#prepare(signal)) return "stopped";
      if (!this.#election) {
        await this.#lead(signal, signal);
      } else {
        this.#phase = "standby";
        // A warm standby's caches run from now until shutdown, leading or not.
        const warm = this.#options.standby === "warm" ? this.#runCaches(signal) : undefined;
        try {
          await this.#election.run(signal, async (leading) => {
            await this.#lead(leading, signal, warm);
            if (!signal.aborted) lost = true;
          });
        } finally {
          await warm?.stop();
        }
      }
    } finally {
      this.#phase = "stopping";
      signal.removeEventListener("abort", onStop);
      stopping ??= deadline(this.#clock, this.#drainMs());
      await this.events.flush(stopping.signal).catch(() => {});
      stopping[Symbol.dispose]();
      this.#eventsLife.abort();
      serving.abort();
      await Promise.allSettled(this.#listeners.map((l) => l.finished));
    }
    log.info(lost ? "leadership lost; stopped" : "stopped");
    return lost ? "leadership-lost" : "stopped";
  }

  /** Connects the manager's own client and installs the CRDs; false when stopped meanwhile. */
  async #prepare(signal: AbortSignal): Promise<boolean> {
    try {
      await this.#ownClient?.connect();
      const crds = this.#options.crds ?? [];
      if (crds.length > 0) {
        const fieldManager = this.#options.reportingController ?? "kinglet";
        await installCrds(this.#client, crds, { fieldManager, clock: this.#clock, signal });
      }
    } catch (error) {
      if (!signal.aborted) throw error;
    }
    return !signal.aborted;
  }

  /**
   * Runs the caches until `signal` aborts or one fails; `stopped` aborts
   * then, and `stop` ends them and rethrows a failure.
   */
  #runCaches(signal: AbortSignal): RunningCaches {
    const caches = new AbortController();
    const stopOnSignal = () => caches.abort();
    signal.addEventListener("abort", stopOnSignal, { once: true });
    let failure: { error: unknown } | undefined;
    const done = this.caches.run(caches.signal).catch((error) => {
      failure = { error };
      caches.abort();
    });
    return {
      stopped: caches.signal,
      async stop() {
        signal.removeEventListener("abort", stopOnSignal);
        caches.abort();
        await done;
        if (failure) throw failure.error;
      },
    };
  }

  /**
   * Runs controllers (and the caches, unless a warm standby's are given)
   * until `leading` aborts; `shutdown` tells a shutdown from a lost Lease.
   */
  async #lead(leading: AbortSignal, shutdown: AbortSignal, warm?: RunningCaches): Promise<void> {
    this.#phase = "syncing";
    const caches = warm ?? this.#runCaches(leading);
    // A shutdown drains; a lost Lease does not wait, since another leader may already act.
    const drainMs = () => shutdown.aborted ? this.#drainMs() : 0;
    this.caches.synced().then(() => {
      if (this.#phase === "syncing") this.#phase = "running";
    });
    const ended = new AbortController();
    const running = AbortSignal.any([leading, caches.stopped, ended.signal]);
    const releasing = this.#releaseHeap(running);
    // The primaries share the limit's cache budget, known only once every controller is added.
    if (this.#memory) {
      this.#limitCaches(this.#memory.plan.cacheBytes[this.#memory.level], this.#memory.level);
    }
    const governing = this.#memory?.run(running);
    try {
      await Promise.all(this.#controllers.map((c) => c.run(running, { drainMs })));
    } finally {
      ended.abort();
      // A warm standby's caches outlive a lead, unless they failed: then their error ends it.
      const stopping = warm && !warm.stopped.aborted ? undefined : caches.stop();
      await releasing;
      await governing;
      await stopping;
    }
  }

  /** Sets every cache's share of `totalBytes` at a memory limit's `level` (memory/cache_shares.ts). */
  #limitCaches(totalBytes: number, level: MemoryLevel): void {
    // A controller's reflectors start with its primary's.
    const primaries = new Set(this.#controllers.map((c) => c.reflectors[0]!));
    const owned = this.caches.entries().map((e) => e.reflector)
      .filter((reflector) => reflector.store.budgeted && !primaries.has(reflector));
    limitCaches({ primaries: [...primaries], owned }, totalBytes, level, this.#options.budget);
  }

  #drainMs(): number {
    return this.#options.drainTimeoutMs ?? 10_000;
  }

  /** Every few seconds, lets {@link HeapRelease} collect what a finished burst left behind. */
  async #releaseHeap(signal: AbortSignal): Promise<void> {
    const release = new HeapRelease({
      heapBytes: () => Deno.memoryUsage().heapTotal,
      idle: () => this.#controllers.every((c) => c.queue.len === 0 && c.inFlight === 0),
    });
    while (!signal.aborted) {
      try {
        await this.#clock.sleep(HEAP_RELEASE_CHECK_MS, signal);
      } catch {
        return;
      }
      release.check();
    }
  }

  /** Why the manager is not ready; empty when it is (manager/_report.ts). */
  readiness(): string[] {
    return readiness(this.#phase, this.caches, this.#clock.now(), this.#options.staleAfterMs);
  }

  /**
   * What each cache holds: sizes and freshness, never object contents
   * (manager/_report.ts). The keys of one cache are served page by page at
   * `/debug/cache?cache=<name>` (see lib/runtime/cache/cache_debug.ts).
   */
  debugCache(): Record<string, unknown> {
    return debugReport({
      phase: this.#phase,
      caches: this.caches,
      now: this.#clock.now(),
      ...(this.#memory && { memoryLimit: this.#memory.stats() }),
      controllers: this.#controllers,
    });
  }
}

function positiveLimit(bytes: number): number {
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw new RangeError(
      `Cannot create the manager: 'memoryLimit' must be a positive integer of bytes, got ${bytes}`,
    );
  }
  return bytes;
}
