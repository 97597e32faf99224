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
 *   plus a random spread; and never before the retry bucket (10 a second,
 *   burst 100, shared by a manager's controllers) has a token for it, so keys that failed in one
 *   outage come back spread out; a {@link TerminalError}, or a policy's
 *   `"terminal"`, is not retried until the object changes as above, whatever
 *   else triggers its key meanwhile; a success forgets the key's failures. A
 *   reconcile that throws never stops the controller.
 * - A requeue the reconcile asks for, or the optional resync, is jittered;
 *   an optional token bucket paces reconcile starts. See
 *   lib/runtime/scheduling/: pacing.ts, and retries.ts for what each outcome
 *   does to its key.
 * - Each reconcile gets an `AbortSignal` that fires on its timeout and when
 *   a shutdown's drain deadline passes, and the rest of its
 *   `ReconcileContext`: the client, the caches, the children, Events
 *   bound to the object and a status write.
 * - A spec with a `finalizer` has it added before its first reconcile of an
 *   object, and its `cleanup` run (then the finalizer removed) instead of
 *   `reconcile` once the object is being deleted.
 * - Children live in their owner's namespace, reached by its owner
 *   reference, unless their `owns` entry says `anywhere: true`: then owner
 *   labels record them, and the runtime deletes them before the owner goes
 *   (see ../children/owner_labels.ts and `Owned.anywhere`).
 * - Owned children are cached lean unless their `owns` entry has a
 *   `transform` (projections.ts). A `map` gets the object as cached and a
 *   view of the primary cache that sees every key and the spec's `indexes`,
 *   evicted or not; an update is mapped from the object as it was and as it
 *   is, and both answers are reconciled (relations.ts).
 * - A kind may be cached once among `owns` and `watches`: a second entry is
 *   refused, since `context.cache(kind)` could not tell them apart.
 * - This file only wires the stages (docs/runtime-map.md follows one
 *   reconcile through them): relations.ts maps changes to keys,
 *   _reconciler.ts reconciles a key with its context, ../children/ writes
 *   the children.
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
import type { KubeObject, ObjectKey } from "../../kube/types.ts";
import { logger } from "../../log.ts";
import { type CacheClient, Caches } from "../cache/caches.ts";
import { type Clock, systemClock } from "../../async/clock.ts";
import type { ControllerMetrics } from "../metrics/metrics.ts";
import { type QueueMetrics, WorkQueue } from "../queue/queue.ts";
import type { RateLimiter } from "../scheduling/rate_limiter.ts";
import type { Reflector } from "../cache/reflector.ts";
import type { Semaphore } from "../../async/semaphore.ts";
import type { StoreBudget, StoreView } from "../cache/store.ts";
import { ownedTransform } from "../cache/projections.ts";
import { type EventPublisher, EventRecorder, eventSink } from "../events/events.ts";
import {
  ChildApplier,
  childCacheMemo,
  childWriter,
  fieldManagerOf,
} from "../children/child_applier.ts";
import { checkAnywhere } from "../children/owner_labels.ts";
import { ControllerCaches } from "./_caches.ts";
import { RelationErrors } from "./_relation_errors.ts";
import { entryMap, guardedIndexes, refuseAmbiguousCaches } from "./_relation_specs.ts";
import { Reconciler } from "./_reconciler.ts";
import { controllerOwnerKeys, primaryTrigger, relatedTrigger, unobserved } from "./relations.ts";
import { Pacing } from "../scheduling/pacing.ts";
import { Retries } from "../scheduling/retries.ts";
import { Runner } from "../scheduling/runner.ts";
import type { Children, ControllerSpec, PrimaryView, ReconcileClient, Watch } from "./spec.ts";

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
  /**
   * Caps on the caches of the owned kinds, which also lets their budget be
   * changed later (a memory limit shrinks them under pressure). Defaults to
   * none.
   */
  ownedBudget?: StoreBudget;
  /** Defaults to {@link systemClock}. */
  clock?: Clock;
  /**
   * The per-key delay of a failed key without an error policy. Defaults to
   * client-go's per-key exponential (5 ms doubling to 1000 s). Every retry,
   * with or without a policy, also waits for the retry bucket (see
   * `retryBucket`) and is jittered.
   */
  rateLimiter?: RateLimiter<ObjectKey>;
  /**
   * The bucket every retry waits for, shared across controllers; the
   * manager lends one to all of its controllers. Defaults to one of the
   * controller's own (client-go's 10 qps, burst 100).
   */
  retryBucket?: RateLimiter<ObjectKey>;
  /** Source of jitter in [0, 1). Defaults to `Math.random`. */
  random?: () => number;
  /** Where the queue and the reconciles report; defaults to none. */
  metrics?: { queue: QueueMetrics; controller: ControllerMetrics };
}

/** Runs one {@link ControllerSpec}; see the module documentation. */
export class Controller<T extends KubeObject = KubeObject> {
  /** What the controller was created with. */
  readonly spec: ControllerSpec<T>;
  /** The queue of primary keys waiting for a reconcile. */
  readonly queue: WorkQueue<ObjectKey>;
  readonly #clock: Clock;
  readonly #retries: Retries;
  readonly #runner: Runner;
  readonly #log;
  /** The shared caches, when nobody shares them: this controller runs them itself. */
  readonly #ownCaches: Caches | undefined;
  readonly #caches: ControllerCaches;
  readonly #primary: Reflector<T>;
  readonly #reconciler: Reconciler<T>;

  /**
   * Wires the pipeline; nothing runs before {@link Controller.run}.
   *
   * @throws {RangeError} when `reconcileTimeoutMs`, `maxConcurrentReconciles`,
   * `fieldManager` or a {@link PacingOptions} field is out of range.
   * @throws {TypeError} when the spec's finalizer has no qualified name, a
   * watch has no `map`, a kind is cached twice, or an `owns` entry's
   * `anywhere` cannot work (see ../children/owner_labels.ts).
   */
  constructor(spec: ControllerSpec<T>, deps: ControllerDeps) {
    this.spec = spec;
    this.#clock = deps.clock ?? systemClock;
    this.#log = logger("controller", spec.name);
    const any = spec as unknown as ControllerSpec<KubeObject>;
    refuseAmbiguousCaches(any);
    checkAnywhere(any);
    const fieldManager = fieldManagerOf(any);

    this.#ownCaches = deps.caches
      ? undefined
      : new Caches({ client: deps.client, clock: this.#clock });
    this.#caches = new ControllerCaches(spec.name, deps.caches ?? this.#ownCaches!);
    const metrics = deps.metrics?.controller;
    const errors = new RelationErrors(this.#log, metrics);
    const indexers = guardedIndexes(any, errors);
    this.#primary = this.#caches.register(spec.resource, {
      ...(spec.transform && { transform: spec.transform }),
      ...(deps.budget && { budget: deps.budget }),
      ...(indexers && { indexers }),
    }) as unknown as Reflector<T>;
    const applier = new ChildApplier(childWriter(any, deps.client));

    const pacing = new Pacing(spec, {
      name: spec.name,
      clock: this.#clock,
      ...(deps.random && { random: deps.random }),
    });
    // The retries hold every key's failures; the queue only delays and deduplicates.
    this.queue = new WorkQueue<ObjectKey>({
      clock: this.#clock,
      ...(deps.metrics && { metrics: deps.metrics.queue }),
    });
    this.#retries = new Retries(spec, {
      name: spec.name,
      queue: this.queue,
      clock: this.#clock,
      pacing,
      ...(deps.rateLimiter && { rateLimiter: deps.rateLimiter }),
      ...(deps.retryBucket && { retryBucket: deps.retryBucket }),
      ...(metrics && { metrics }),
    });
    this.#reconciler = new Reconciler(spec, {
      client: deps.client,
      clock: this.#clock,
      log: this.#log,
      events: deps.events ?? new EventRecorder(eventSink(deps.client)),
      primary: this.#primary.store,
      cache: this.#caches.cache,
      applier,
      fieldManager,
      retries: this.#retries,
    });
    this.#runner = new Runner(spec, {
      queue: this.queue,
      clock: this.#clock,
      semaphore: deps.semaphore,
      pacing,
      handle: this.#reconciler.handle,
      ...(metrics && { metrics }),
    });

    this.#primary.store.subscribe(primaryTrigger(this.queue, this.#retries));
    // What every map reads of the primaries: all keys and indexes, evicted or not.
    const primary = this.#primary.store as unknown as PrimaryView<KubeObject>;
    for (const [i, owned] of (spec.owns ?? []).entries()) {
      const memo = childCacheMemo(any, owned);
      const { store } = this.#caches.register(owned.resource, {
        ...owned,
        transform: owned.transform ?? ownedTransform(owned.resource),
        // A restarted controller skips the children it finds as its last apply left them.
        ...(memo && { memo }),
        ...(deps.ownedBudget && { budget: deps.ownedBudget }),
      });
      const map = entryMap(any, owned as Watch<KubeObject>, `owns[${i}]`, primary) ??
        controllerOwnerKeys(spec.resource);
      store.subscribe(relatedTrigger(map, this.queue, errors.mapFailed(owned.resource.plural)));
      applier.track(owned.resource, store);
    }
    for (const [i, watched] of (spec.watches ?? []).entries()) {
      const map = entryMap(any, watched as Watch<KubeObject>, `watches[${i}]`, primary);
      if (!map) {
        throw new TypeError(
          `Cannot create controller '${spec.name}': watches[${i}] (${watched.resource.plural}) ` +
            "needs a 'map' function or an 'index' of the spec's 'indexes'",
        );
      }
      const { store } = this.#caches.register(watched.resource, watched);
      store.subscribe(relatedTrigger(map, this.queue, errors.mapFailed(watched.resource.plural)));
    }
  }

  /**
   * The children component a reconcile of `owner` gets: what it applies is
   * recorded to `owner`, by owner reference or owner labels.
   */
  childrenOf(owner: KubeObject): Children {
    return this.#reconciler.children(owner);
  }

  /** The primary's cache, read-only. */
  get store(): StoreView<T> {
    return this.#primary.store;
  }

  /** Resolves when every cache this controller reads has its first complete list. */
  get synced(): Promise<void> {
    return this.#caches.synced;
  }

  /** The reflectors this controller reads, for readiness and `/debug/cache`. */
  get reflectors(): readonly Reflector[] {
    return this.#caches.reflectors;
  }

  /** Reconciles in flight right now. */
  get inFlight(): number {
    return this.#runner.inFlight;
  }

  /** Failures of `key` in a row since its last success, as its error policy counts them. */
  failures(key: ObjectKey): number {
    return this.#retries.failures(key);
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
    const watches = this.#ownCaches?.run(signal) ?? Promise.resolve();
    const stopQueue = () => this.queue.shutDown();
    signal.addEventListener("abort", stopQueue, { once: true });
    try {
      await Promise.race([this.synced, aborted(signal)]);
      // Keys queued before this run (a warm standby's) were mostly served by the leader before
      // it: those whose change nobody observed are missed ones, the rest join the backlog.
      this.queue.relane((key) => unobserved(this.#primary.store.get(key)));
      if (!signal.aborted) {
        this.#log.info("caches synced; starting reconciles", { controller: this.spec.name });
        await this.#runner.run(signal);
      }
    } finally {
      signal.removeEventListener("abort", stopQueue);
      this.queue.shutDown();
      const drainMs = options.drainMs ?? 0;
      await this.#runner.drain(typeof drainMs === "number" ? drainMs : drainMs());
      await watches;
    }
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
