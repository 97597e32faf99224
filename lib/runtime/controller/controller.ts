/**
 * A controller: the pipeline watcher → store → queue → reconciler (under the
 * semaphore), wired for one primary resource and the resources it owns or
 * watches.
 *
 * What the caller must know:
 *
 * - Reconciles are level-triggered: `reconcile` gets the current object by
 *   key, never an event. A key is never reconciled twice at once; a key
 *   changed while it is being reconciled runs once more afterwards.
 * - Changes of the primary trigger a reconcile only when `metadata.generation`
 *   or the deletion mark changed, so status writes do not loop. Kinds without
 *   a generation (ConfigMaps, Secrets) count any new resourceVersion as a
 *   change. Changes of an owned child reconcile its controller owner.
 * - A thrown error is retried after what the controller's error policy says
 *   (by default a per-key exponential, 5 ms doubling to 1000 s) less a
 *   random part of up to `requeueJitter`, or after the server's Retry-After
 *   plus a random spread; and never before the controller's retry bucket
 *   (10 a second, burst 100) has a token for it, so keys that failed in one
 *   outage come back spread out; a {@link TerminalError}, or a policy's
 *   `"terminal"`, is not retried until the object changes as above, whatever
 *   else triggers its key meanwhile; a success forgets the key's failures. A
 *   reconcile that throws never stops the controller.
 * - A requeue the reconcile asks for, or the optional resync, is jittered;
 *   an optional token bucket paces reconcile starts. See pacing.ts.
 * - Each reconcile gets an `AbortSignal` that fires on its timeout and when
 *   a shutdown's drain deadline passes, and the rest of its
 *   `ReconcileContext`: the client, the caches, the children, Events
 *   bound to the object and a status write.
 * - A spec with a `finalizer` has it added before its first reconcile of an
 *   object, and its `cleanup` run (then the finalizer removed) instead of
 *   `reconcile` once the object is being deleted.
 *
 * @example
 * ```ts
 * import { Controller, type ControllerClient } from "./controller.ts";
 * import { Semaphore } from "../../async/semaphore.ts";
 * import { CONFIG_MAPS } from "../../kube/resources.ts";
 * // Needs a cluster: `client` is usually a `KubeClient`.
 * async function example(client: ControllerClient): Promise<void> {
 *   const controller = new Controller({
 *     name: "configmaps",
 *     resource: CONFIG_MAPS,
 *     reconcile: (cm) => Promise.resolve(cm.metadata?.name ? {} : { requeueAfterMs: 1000 }),
 *   }, { client, semaphore: new Semaphore(4) });
 *   const stop = new AbortController();
 *   const running = controller.run(stop.signal);
 *   await controller.synced;
 *   stop.abort();
 *   await running;
 * }
 * ```
 *
 * @module
 */
import { ApiError } from "../../kube/errors.ts";
import type { KubeObject, ObjectKey, Resource } from "../../kube/types.ts";
import { logger } from "../../log.ts";
import { type CacheClient, type CacheOptions, Caches, resourceId } from "../cache/caches.ts";
import { type Clock, deadline, systemClock } from "../../async/clock.ts";
import type { ControllerMetrics } from "../metrics/metrics.ts";
import type { QueueMetrics } from "../queue/queue.ts";
import { WorkQueue } from "../queue/queue.ts";
import {
  ExponentialRateLimiter,
  type RateLimiter,
  TokenBucketRateLimiter,
} from "../queue/rate_limiter.ts";
import type { Reflector } from "../cache/reflector.ts";
import { Semaphore } from "../../async/semaphore.ts";
import type { CacheReader, Store, StoreBudget, StoreChange } from "../cache/store.ts";
import { type EventPublisher, EventRecorder, eventSink } from "../events/events.ts";
import { ChildApplier, type Children } from "./child_applier.ts";
import { applyAs, fieldManagerOf, Reconciler } from "./_reconciler.ts";
import { Pacing } from "./pacing.ts";
import {
  changedRelated,
  controllerOwnerKeys,
  primaryChanged,
  type Revision,
  revision,
} from "./relations.ts";
import { type Action, type ControllerSpec, type ReconcileClient, TerminalError } from "./spec.ts";

/** What a controller needs of the client: its caches' list and watch, and a reconcile's writes. */
export type ControllerClient = CacheClient & ReconcileClient;

/** What the manager lends a controller. */
export interface ControllerDeps {
  /** Lists, watches and reads the cached resources; every reconcile gets it as its `client`. */
  client: ControllerClient;
  /**
   * Where the Events of reconciles go; the manager lends its recorder.
   * Defaults to an {@link EventRecorder} of the controller's own, writing
   * through `client` with the recorder's defaults; flush it yourself by
   * passing one instead.
   */
  events?: EventPublisher;
  /** Caps concurrent reconciles across all controllers. */
  semaphore: Semaphore;
  /**
   * Caches shared with other controllers, run by their owner. Defaults to a
   * private set that {@link Controller.run} runs.
   */
  caches?: Caches;
  /** Caps on the primary's cache. Defaults to none. */
  budget?: StoreBudget;
  /** Defaults to {@link systemClock}. */
  clock?: Clock;
  /**
   * The per-key delay of a failed key without an error policy. Defaults to
   * client-go's per-key exponential (5 ms doubling to 1000 s). Every retry,
   * with or without a policy, also waits for the controller's retry bucket
   * (client-go's 10 qps, burst 100) and is jittered.
   */
  rateLimiter?: RateLimiter<ObjectKey>;
  /** Source of jitter in [0, 1). Defaults to `Math.random`. */
  random?: () => number;
  /** Where the queue and the reconciles report; defaults to none. */
  metrics?: { queue: QueueMetrics; controller: ControllerMetrics };
}

type Outcome =
  | { kind: "success"; action: Action }
  /** `revision` is the object's, when the failure came after reading it. */
  | { kind: "error"; error: unknown; revision?: Revision }
  | { kind: "terminal"; error: TerminalError; revision: Revision }
  /** The object failed terminally at this revision already; its reconcile was not called. */
  | { kind: "skipped" }
  | { kind: "gone" };

const DEFAULT_RECONCILE_TIMEOUT_MS = 60_000;

/** Runs one {@link ControllerSpec}; see the module documentation. */
export class Controller<T extends KubeObject = KubeObject> {
  /** What the controller was created with. */
  readonly spec: ControllerSpec<T>;
  /** The queue of primary keys waiting for a reconcile. */
  readonly queue: WorkQueue<ObjectKey>;
  readonly #deps: ControllerDeps;
  readonly #clock: Clock;
  readonly #pacing: Pacing;
  /** Per-key delays of failures without an error policy. */
  readonly #backoff: RateLimiter<ObjectKey>;
  /** Every retry of this controller takes a token: after an outage they trickle back. */
  readonly #retryBucket: TokenBucketRateLimiter<ObjectKey>;
  /** This controller's own share of the manager's semaphore, when it has a limit of its own. */
  readonly #ownSlots: Semaphore | undefined;
  readonly #log;
  readonly #caches: Caches;
  /** Whether this controller runs its caches itself (nobody shares them). */
  readonly #ownsCaches: boolean;
  readonly #primary: Reflector<T>;
  /** Every reflector this controller reads, the primary's first. */
  readonly #reflectors: Reflector[] = [];
  /** What a reconcile's `cache` answers: the first cache registered per resource. */
  readonly #byResource = new Map<string, Reflector>();
  /** Revision at which a key failed terminally; cleared when the revision moves. */
  readonly #terminal = new Map<ObjectKey, Revision>();
  readonly #inFlight = new Set<Promise<void>>();
  /** Aborts every reconcile still running once the drain deadline passes. */
  readonly #abort = new AbortController();
  /** The children of every reconcile, tracked from the owned caches from the start. */
  readonly #children: Children;
  /** Builds each reconcile's context and runs the spec's finalizer protocol. */
  readonly #reconciler: Reconciler<T>;

  /**
   * Wires the pipeline; nothing runs before {@link Controller.run}.
   *
   * @throws {RangeError} when `reconcileTimeoutMs`, `fieldManager` or a
   * {@link PacingOptions} field is out of range.
   * @throws {TypeError} when the spec's finalizer has no qualified name, or a
   * watch has no `map`.
   */
  constructor(spec: ControllerSpec<T>, deps: ControllerDeps) {
    const timeout = spec.reconcileTimeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS;
    if (!(timeout > 0)) {
      throw new RangeError(
        `Cannot create controller '${spec.name}': 'reconcileTimeoutMs' must be positive, got ${timeout}`,
      );
    }
    this.spec = spec;
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
    this.#pacing = new Pacing(spec, {
      name: spec.name,
      clock: this.#clock,
      ...(deps.random && { random: deps.random }),
    });
    this.#log = logger("controller", spec.name);
    this.#backoff = deps.rateLimiter ?? new ExponentialRateLimiter<ObjectKey>();
    this.#retryBucket = new TokenBucketRateLimiter<ObjectKey>(this.#clock);
    const own = spec.maxConcurrentReconciles;
    if (own !== undefined && (!Number.isSafeInteger(own) || own < 1)) {
      throw new RangeError(
        `Cannot create controller '${spec.name}': 'maxConcurrentReconciles' must be a positive integer, got ${own}`,
      );
    }
    this.#ownSlots = own === undefined ? undefined : new Semaphore(own);
    this.queue = new WorkQueue<ObjectKey>({
      clock: this.#clock,
      // The queue forgets and counts a key's failures in #backoff, their one home.
      rateLimiter: this.#backoff,
      ...(deps.metrics && { metrics: deps.metrics.queue }),
    });
    this.#ownsCaches = !deps.caches;
    this.#caches = deps.caches ?? new Caches({ client: deps.client, clock: this.#clock });
    this.#primary = this.#reflector(spec.resource, {
      ...(spec.transform && { transform: spec.transform }),
      ...(deps.budget && { budget: deps.budget }),
    }) as unknown as Reflector<T>;
    this.#primary.store.subscribe((change) => this.#onPrimary(change));
    const applier = new ChildApplier(
      spec.applyChild ??
        applyAs(deps.client, fieldManagerOf(spec as unknown as ControllerSpec<KubeObject>)),
    );
    for (const owned of spec.owns ?? []) {
      const map = owned.map ?? controllerOwnerKeys(spec.resource);
      const { store } = this.#reflector(owned.resource, owned);
      store.subscribe((c) => this.#onRelated(c, map));
      applier.track(owned.resource, store);
    }
    this.#children = {
      apply: (resource, desired, signal) => {
        if (!spec.owns?.some((o) => resourceId(o.resource) === resourceId(resource))) {
          throw new TypeError(
            `Controller '${spec.name}' cannot apply ${resource.plural}: add it to 'owns'`,
          );
        }
        return applier.apply(resource, desired, this.#cache(resource), signal);
      },
    };
    for (const watched of spec.watches ?? []) {
      if (!watched.map) {
        throw new TypeError(
          `Cannot create controller '${spec.name}': the watch of ${watched.resource.plural} needs a 'map' function`,
        );
      }
      const map = watched.map;
      this.#reflector(watched.resource, watched).store.subscribe((c) => this.#onRelated(c, map));
    }
    this.#reconciler = new Reconciler(spec, {
      client: deps.client,
      events: deps.events ?? new EventRecorder(eventSink(deps.client)),
      cache: (resource) => this.#cache(resource),
      children: this.#children,
    });
  }

  /** The children component every reconcile of this controller gets. */
  get children(): Children {
    return this.#children;
  }

  /** The primary's cache. */
  get store(): Store<T> {
    return this.#primary.store;
  }

  /** Resolves when every cache this controller reads has its first complete list. */
  get synced(): Promise<void> {
    return Promise.all(this.#reflectors.map((r) => r.synced)).then(() => {});
  }

  /** The reflectors this controller reads, for readiness and `/debug/cache`. */
  get reflectors(): readonly Reflector[] {
    return this.#reflectors;
  }

  /**
   * Runs the watches and, once they are synced, the reconcile loop, until
   * `signal` aborts. Then it takes no new keys, lets reconciles in flight
   * finish for up to `drainMs` (default 0; a function is asked at that
   * moment), aborts the signals of those still
   * running, and resolves once they have all returned.
   */
  async run(
    signal: AbortSignal,
    options: { drainMs?: number | (() => number) } = {},
  ): Promise<void> {
    const watches = this.#ownsCaches ? this.#caches.run(signal) : Promise.resolve();
    const stopQueue = () => this.queue.shutDown();
    signal.addEventListener("abort", stopQueue, { once: true });
    try {
      await Promise.race([this.synced, aborted(signal)]);
      if (!signal.aborted) {
        this.#log.info("caches synced; starting reconciles", { controller: this.spec.name });
        await this.#loop(signal);
      }
    } finally {
      signal.removeEventListener("abort", stopQueue);
      this.queue.shutDown();
      const drainMs = options.drainMs ?? 0;
      await this.#drain(typeof drainMs === "number" ? drainMs : drainMs());
      await watches;
    }
  }

  async #drain(drainMs: number): Promise<void> {
    if (this.#inFlight.size && drainMs > 0) {
      const deadline = new AbortController();
      await Promise.race([
        Promise.allSettled([...this.#inFlight]),
        this.#clock.sleep(drainMs, deadline.signal).catch(() => {}),
      ]);
      deadline.abort();
    }
    if (this.#inFlight.size) {
      this.#log.warn("aborting {count} reconciles still running at shutdown", {
        count: this.#inFlight.size,
      });
    }
    this.#abort.abort(new DOMException("The controller is stopping", "AbortError"));
    await Promise.allSettled([...this.#inFlight]);
  }

  /** Reconciles in flight right now. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  async #loop(signal: AbortSignal): Promise<void> {
    for (;;) {
      try {
        await this.#pacing.admit(signal);
      } catch {
        return;
      }
      const key = await this.queue.get();
      if (key === undefined) return;
      let own;
      let permit;
      try {
        // This controller's slot first: waiting for it holds none of the others'.
        own = await this.#ownSlots?.acquire(signal);
        permit = await this.#deps.semaphore.acquire(signal);
      } catch {
        own?.release();
        this.queue.done(key);
        return;
      }
      const task = this.#process(key).finally(() => {
        permit.release();
        own?.release();
        this.#inFlight.delete(task);
      });
      this.#inFlight.add(task);
    }
  }

  async #process(key: ObjectKey): Promise<void> {
    const started = this.#clock.now();
    using limit = deadline(
      this.#clock,
      this.spec.reconcileTimeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS,
    );
    const signal = AbortSignal.any([this.#abort.signal, limit.signal]);
    this.#deps.metrics?.controller.activeWorkers(1);
    let outcome: Outcome;
    try {
      outcome = await this.#reconcile(key, signal);
    } catch (error) {
      outcome = { kind: "error", error };
    }
    this.#deps.metrics?.controller.activeWorkers(-1);
    this.#settle(key, outcome, (this.#clock.now() - started) / 1000);
  }

  async #reconcile(key: ObjectKey, signal: AbortSignal): Promise<Outcome> {
    const object = await this.#primary.store.getOrFetch(key, signal);
    if (!object) return { kind: "gone" };
    const current = revision(object.metadata);
    if (this.#terminal.has(key) && this.#terminal.get(key) === current) return { kind: "skipped" };
    try {
      const action = await this.#reconciler.run(object, key, signal);
      return { kind: "success", action };
    } catch (error) {
      if (error instanceof TerminalError) return { kind: "terminal", error, revision: current };
      return { kind: "error", error, revision: current };
    }
  }

  /** The one place that maps a reconcile outcome to a queue operation. */
  #settle(key: ObjectKey, outcome: Outcome, seconds: number): void {
    const metrics = this.#deps.metrics?.controller;
    if (outcome.kind !== "error") this.#pacing.forget(key);
    switch (outcome.kind) {
      case "gone":
        this.#terminal.delete(key);
        this.queue.forget(key);
        metrics?.reconciled("success", seconds);
        break;
      case "success": {
        this.#terminal.delete(key);
        this.queue.forget(key);
        const asked = outcome.action.requeueAfterMs;
        const after = this.#pacing.requeueDelay(asked);
        if (after !== undefined) this.queue.addAfter(key, after);
        metrics?.reconciled(asked === undefined ? "success" : "requeue_after", seconds);
        break;
      }
      case "skipped":
        this.queue.forget(key);
        break;
      case "terminal":
        this.#failTerminally(key, outcome.revision, outcome.error);
        metrics?.reconciled("error", seconds);
        break;
      case "error":
        this.#retry(key, outcome);
        metrics?.reconciled("error", seconds);
        break;
    }
    this.queue.done(key);
  }

  #failTerminally(key: ObjectKey, revision: Revision, error: unknown): void {
    this.#terminal.set(key, revision);
    this.queue.forget(key);
    this.#pacing.forget(key);
    this.#log.warn("reconcile of {key} failed terminally, not retried until it changes: {error}", {
      key,
      error: describe(error),
    });
  }

  #retry(key: ObjectKey, outcome: { error: unknown; revision?: Revision }): void {
    const error = outcome.error;
    const retryAfter = error instanceof ApiError ? error.retryAfterSeconds : undefined;
    if (retryAfter !== undefined) {
      // The server is shedding load (a 429 or a 503): it said when to come back.
      this.#retryLater(key, this.#pacing.retryAfterDelay(retryAfter));
      this.#log.warn(
        "reconcile of {key} failed, retried in {seconds} s as the API server asked: {error}",
        { key, seconds: retryAfter, error: describe(error) },
      );
      return;
    }
    const decision = this.#pacing.failure(key, error);
    if (decision === "terminal") return this.#failTerminally(key, outcome.revision, error);
    this.#retryLater(key, this.#pacing.retryDelay(decision ?? this.#backoff.when(key)));
    this.#log.error("reconcile of {key} failed, retry {retries}: {error}", {
      key,
      retries: decision === undefined ? this.queue.numRequeues(key) : this.#pacing.attempts(key),
      error: describe(error),
    });
  }

  /**
   * Schedules a failed key after `ms`, and never before the retry bucket has
   * a token for it: after an outage, N failed keys come back at the
   * bucket's pace, not together.
   */
  #retryLater(key: ObjectKey, ms: number): void {
    this.queue.addAfter(key, Math.max(ms, this.#retryBucket.when(key)));
  }

  #onPrimary(change: StoreChange<T>): void {
    if (change.type === "replace" || !primaryChanged(change)) return;
    if (change.type === "delete") this.#terminal.delete(change.key);
    this.queue.add(change.key);
  }

  #onRelated(change: StoreChange<KubeObject>, map: (o: KubeObject) => ObjectKey[]): void {
    const object = changedRelated(change);
    if (!object) return;
    let keys: ObjectKey[];
    try {
      keys = map(object);
    } catch (error) {
      this.#log.error("mapping {key} to primaries failed: {error}", {
        key: change.type === "replace" ? undefined : change.key,
        error: describe(error),
      });
      return;
    }
    for (const key of keys) this.queue.add(key);
  }

  #reflector(resource: Resource, options: CacheOptions): Reflector {
    const reflector = this.#caches.reflector(resource, options);
    if (!this.#reflectors.includes(reflector)) this.#reflectors.push(reflector);
    const id = resourceId(resource);
    if (!this.#byResource.has(id)) this.#byResource.set(id, reflector);
    return reflector;
  }

  #cache<C extends KubeObject>(resource: Resource): CacheReader<C> {
    const reflector = this.#byResource.get(resourceId(resource));
    if (!reflector) {
      throw new TypeError(
        `Controller '${this.spec.name}' has no cache of ${resource.plural}: add it to 'owns' or 'watches'`,
      );
    }
    return reflector.store as unknown as CacheReader<C>;
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
