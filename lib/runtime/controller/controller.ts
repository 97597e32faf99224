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
 *   reference, unless their `owns` entry says `anywhere: true`: then a child
 *   in another namespace, or cluster-scoped, carries owner labels instead
 *   (see owner_labels.ts), its changes reconcile the owner through them, and
 *   when the owner is deleted the runtime deletes every child so labelled
 *   before it removes the finalizer (the spec's, or `<group>/children` of
 *   its own). The owned cache of such a kind must see the children's
 *   namespaces: a manager confined to one namespace does not.
 * - Owned children are cached lean by default: identity, labels,
 *   annotations, owners and revision, and for Deployments and StatefulSets
 *   their replica counts (see projections.ts); an `owns` entry's own
 *   `transform` overrides it. A `map`, of an owned or a watched kind, gets
 *   the object as cached and a view of the primary cache that sees every
 *   key and the spec's `indexes`, evicted under a memory limit or not. An
 *   update is mapped from the object as it was cached before and as it is
 *   now, and both answers are reconciled (relations.ts).
 * - A kind may be cached once among `owns` and `watches`: a second entry is
 *   refused, since `context.cache(kind)` could not tell them apart.
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
import type { KubeObject, ObjectKey, Resource } from "../../kube/types.ts";
import { resourceId } from "../../kube/resources.ts";
import { logger } from "../../log.ts";
import { type CacheClient, type CacheOptions, Caches } from "../cache/caches.ts";
import { type Clock, systemClock } from "../../async/clock.ts";
import type { ControllerMetrics } from "../metrics/metrics.ts";
import { type AddOptions, type QueueMetrics, WorkQueue } from "../queue/queue.ts";
import type { Reflector } from "../cache/reflector.ts";
import type { Semaphore } from "../../async/semaphore.ts";
import type { CacheReader, StoreBudget, StoreView } from "../cache/store.ts";
import { ownedTransform } from "../cache/projections.ts";
import { type EventPublisher, EventRecorder, eventSink } from "../events/events.ts";
import { ChildApplier, type Children, controllerChildren } from "./child_applier.ts";
import { checkAnywhere } from "./owner_labels.ts";
import { RelationErrors } from "./_relation_errors.ts";
import { entryMap, guardedIndexes, refuseAmbiguousCaches } from "./_relation_specs.ts";
import { applyAs, fieldManagerOf, Reconciler } from "./_reconciler.ts";
import {
  controllerOwnerKeys,
  primaryTrigger,
  relatedTrigger,
  revision,
  unobserved,
} from "./relations.ts";
import { Pacing } from "../scheduling/pacing.ts";
import type { RateLimiter } from "../scheduling/rate_limiter.ts";
import { type Outcome, Retries } from "../scheduling/retries.ts";
import { Runner } from "../scheduling/runner.ts";
import {
  type ControllerSpec,
  type PrimaryView,
  type ReconcileClient,
  TerminalError,
  type Watch,
} from "./spec.ts";

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
  readonly #caches: Caches;
  /** Whether this controller runs its caches itself (nobody shares them). */
  readonly #ownsCaches: boolean;
  readonly #primary: Reflector<T>;
  /** Every reflector this controller reads, the primary's first. */
  readonly #reflectors: Reflector[] = [];
  /** What a reconcile's `cache` answers: the first cache registered per resource. */
  readonly #byResource = new Map<string, Reflector>();
  /** Writes the children of every reconcile and remembers what it wrote. */
  readonly #applier: ChildApplier;
  /** Builds each reconcile's context and runs the spec's finalizer protocol. */
  readonly #reconciler: Reconciler<T>;

  /**
   * Wires the pipeline; nothing runs before {@link Controller.run}.
   *
   * @throws {RangeError} when `reconcileTimeoutMs`, `maxConcurrentReconciles`,
   * `fieldManager` or a {@link PacingOptions} field is out of range.
   * @throws {TypeError} when the spec's finalizer has no qualified name, a
   * watch has no `map`, a kind is cached twice, or an `owns` entry's
   * `anywhere` cannot work (see owner_labels.ts).
   */
  constructor(spec: ControllerSpec<T>, deps: ControllerDeps) {
    this.spec = spec;
    this.#clock = deps.clock ?? systemClock;
    this.#log = logger("controller", spec.name);
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
    const metrics = deps.metrics?.controller;
    this.#retries = new Retries(spec, {
      name: spec.name,
      queue: this.queue,
      clock: this.#clock,
      pacing,
      ...(deps.rateLimiter && { rateLimiter: deps.rateLimiter }),
      ...(deps.retryBucket && { retryBucket: deps.retryBucket }),
      ...(metrics && { metrics }),
    });
    this.#runner = new Runner(spec, {
      queue: this.queue,
      clock: this.#clock,
      semaphore: deps.semaphore,
      pacing,
      handle: (key, signal) => this.#process(key, signal),
      ...(metrics && { metrics }),
    });
    this.#ownsCaches = !deps.caches;
    this.#caches = deps.caches ?? new Caches({ client: deps.client, clock: this.#clock });
    const add = (key: ObjectKey, options: AddOptions) => this.queue.add(key, options);
    const any = spec as unknown as ControllerSpec<KubeObject>;
    refuseAmbiguousCaches(any);
    checkAnywhere(any);
    const errors = new RelationErrors(
      this.#log,
      metrics?.relationFailed && ((fn, resource) => metrics.relationFailed!(fn, resource)),
    );
    const indexers = guardedIndexes(any, errors);
    this.#primary = this.#reflector(spec.resource, {
      ...(spec.transform && { transform: spec.transform }),
      ...(deps.budget && { budget: deps.budget }),
      ...(indexers && { indexers }),
    }) as unknown as Reflector<T>;
    this.#primary.store.subscribe(primaryTrigger(add, (key) => this.#retries.deleted(key)));
    // What every map reads of the primaries: all keys and indexes, evicted or not.
    const primary = this.#primary.store as unknown as PrimaryView<KubeObject>;
    const trigger = (entry: Watch<T>, map: (o: KubeObject) => ObjectKey[]) =>
      relatedTrigger(
        map,
        add,
        (key, error) => errors.failed("map", entry.resource.plural, key, error),
      );
    const fieldManager = fieldManagerOf(spec as unknown as ControllerSpec<KubeObject>);
    const applier = new ChildApplier(spec.applyChild ?? applyAs(deps.client, fieldManager));
    for (const [i, owned] of (spec.owns ?? []).entries()) {
      const transform = owned.transform ?? ownedTransform(owned.resource);
      const { store } = this.#reflector(owned.resource, {
        ...owned,
        transform,
        // The runtime's own applies are recorded on each child, so a restarted
        // controller skips the children it finds as it left them.
        ...(!spec.applyChild && { appliedBy: fieldManager }),
        ...(deps.ownedBudget && { budget: deps.ownedBudget }),
      });
      const map = entryMap(any, owned as Watch<KubeObject>, `owns[${i}]`, primary) ??
        controllerOwnerKeys(spec.resource);
      store.subscribe(trigger(owned, map));
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
      const { store } = this.#reflector(watched.resource, watched);
      store.subscribe(trigger(watched, map));
    }
    this.#reconciler = new Reconciler(spec, {
      client: deps.client,
      clock: this.#clock,
      events: deps.events ?? new EventRecorder(eventSink(deps.client)),
      cache: (resource) => this.#cache(resource),
      children: (owner) => this.childrenOf(owner),
    });
    this.#applier = applier;
  }

  /**
   * The children component a reconcile of `owner` gets: what it applies is
   * recorded to `owner`, by owner reference or owner labels.
   */
  childrenOf(owner: KubeObject): Children {
    return controllerChildren(
      this.spec as unknown as ControllerSpec<KubeObject>,
      owner,
      this.#applier,
      (r) => this.#cache(r),
    );
  }

  /** The primary's cache, read-only. */
  get store(): StoreView<T> {
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
    const watches = this.#ownsCaches ? this.#caches.run(signal) : Promise.resolve();
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

  /** Reconciles `key` and settles what came of it; never throws. */
  async #process(key: ObjectKey, signal: AbortSignal): Promise<void> {
    const started = this.#clock.now();
    let outcome: Outcome;
    try {
      outcome = await this.#reconcile(key, signal);
    } catch (error) {
      outcome = { kind: "error", error };
    }
    const ms = this.#clock.now() - started;
    this.#retries.settle(key, outcome, ms / 1000);
    this.#log.debug("reconciled {key} in {ms} ms: {outcome}", { key, ms, outcome: outcome.kind });
  }

  async #reconcile(key: ObjectKey, signal: AbortSignal): Promise<Outcome> {
    const object = await this.#primary.store.getOrFetch(key, signal);
    if (!object) return { kind: "gone" };
    const current = revision(object.metadata);
    if (this.#retries.isTerminal(key, current)) return { kind: "skipped" };
    try {
      const action = await this.#reconciler.run(object, key, signal);
      return { kind: "success", action };
    } catch (error) {
      if (error instanceof TerminalError) return { kind: "terminal", error, revision: current };
      return { kind: "error", error, revision: current };
    }
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
