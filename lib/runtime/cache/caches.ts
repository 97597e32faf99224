/**
 * The set of caches a manager shares between its controllers: one reflector
 * (watch + store) per resource and shape, however many controllers read it,
 * so each kind is watched and held in memory once.
 *
 * A cache is identified by its resource and by how it is shaped: its
 * transform (the function itself), metadata-only mode, label selector and
 * budget. Registrations that agree share one cache; one that differs gets a
 * cache of its own, with a watch and memory of its own. To share, pass the
 * same transform function (not an equal closure).
 *
 * @example
 * ```ts
 * import { Caches } from "./caches.ts";
 * import type { CacheClient } from "./caches.ts";
 * import { DEPLOYMENTS } from "../../kube/resources.ts";
 * // Needs a cluster: `client` is usually a `KubeClient`.
 * async function example(client: CacheClient): Promise<void> {
 *   const caches = new Caches({ client });
 *   const deployments = caches.reflector(DEPLOYMENTS);
 *   const stop = new AbortController();
 *   const running = caches.run(stop.signal);
 *   await caches.synced();
 *   deployments.store.size;
 *   stop.abort();
 *   await running;
 * }
 * ```
 *
 * @module
 */
import { isNotFound } from "../../kube/errors.ts";
import { resourceId, resourceName } from "../../kube/resources.ts";
import { splitKey } from "../../kube/object_key.ts";
import type { KubeObject, Resource } from "../../kube/types.ts";
import { Backoff, type BackoffOptions } from "../../async/backoff.ts";
import { type Clock, systemClock } from "../../async/clock.ts";
import { OutageReport } from "../watcher/outage.ts";
import { StreamingLists } from "../watcher/streaming_lists.ts";
import { Reflector } from "./reflector.ts";
import { Store, type StoreBudget } from "./store.ts";
import {
  listerWatcher,
  type ListWatchClient,
  watcher,
  type WatcherOptions,
} from "../watcher/watcher.ts";

/** The part of the client that caches use: list and watch, and GET for evicted reads. */
export interface CacheClient extends ListWatchClient {
  /** The API server's URL, for log lines. */
  readonly server?: string;
  /** Reads one object, for a read of a key evicted under the memory budget. */
  get<T extends KubeObject>(
    resource: Resource,
    name: string,
    options?: { namespace?: string; signal?: AbortSignal },
  ): Promise<T>;
}

/** Options of {@link Caches}. */
export interface CachesOptions {
  /** Lists, watches and reads the resources. */
  client: CacheClient;
  /** Watch only this namespace (namespaced resources). Defaults to all. */
  namespace?: string;
  /** Defaults to {@link systemClock}. */
  clock?: Clock;
  /** Passed to every watcher. */
  watcherOptions?: Omit<WatcherOptions, "backoff" | "outage" | "streamingLists">;
  /** Each watcher gets its own backoff with these options, so one failing watch does not slow the others. */
  backoff?: BackoffOptions;
}

/** How one resource is cached. */
export interface CacheOptions<T extends KubeObject = KubeObject> {
  /** Shapes cached objects. Defaults to the store's strip transform. */
  transform?: (object: KubeObject) => T;
  /** Watch `PartialObjectMetadata` only. Defaults to false. */
  metadataOnly?: boolean;
  /**
   * A number the store keeps beside each key (`StoreEntry.memo`), made of
   * the object as received. Caches share by the function itself, as with
   * `transform`. Defaults to none.
   */
  memo?: (object: KubeObject) => number | undefined;
  /** Cache only objects with these labels, e.g. the children an operator manages. Defaults to all. */
  labelSelector?: string;
  /** Caps on full objects kept. Defaults to none. */
  budget?: StoreBudget;
  /**
   * Named indexes of the store, each a function from an object to the
   * values it is found under by `byIndex`, which sees every key, evicted or
   * not. Defaults to none.
   */
  indexers?: Record<string, (object: T) => readonly string[]>;
}

/** One reflector per resource, created on first use; see the module documentation. */
export class Caches {
  readonly #options: CachesOptions;
  /** One for all watchers: they share the client, so an unreachable server is one fact. */
  readonly #outage = new OutageReport();
  /** One for all watchers too: whether the server streams lists is asked once. */
  readonly #streamingLists: StreamingLists;
  readonly #reflectors = new Map<string, CacheEntry>();
  #running: AbortSignal | undefined;
  readonly #runs: Promise<void>[] = [];
  #fail: (error: unknown) => void = () => {};

  /** Creates an empty set; register resources with {@link Caches.reflector}. */
  constructor(options: CachesOptions) {
    this.#options = options;
    this.#streamingLists = new StreamingLists(
      options.client.server !== undefined ? { server: options.client.server } : {},
    );
  }

  /**
   * The reflector of `resource` shaped by `options`, created (and started, if
   * running) on first use.
   */
  reflector<T extends KubeObject = KubeObject>(
    resource: Resource,
    options: CacheOptions<T> = {},
  ): Reflector<T> {
    const id = cacheId(resource, options);
    const known = this.#reflectors.get(id);
    if (known) return known.reflector as unknown as Reflector<T>;
    const { client, namespace } = this.#options;
    const scope = namespace !== undefined && resource.namespaced ? { namespace } : {};
    const store = new Store<KubeObject>({
      ...(options.transform && { transform: options.transform }),
      ...(options.budget && { budget: options.budget }),
      ...(options.memo && { memo: options.memo }),
      ...(options.indexers &&
        { indexers: options.indexers as Record<string, (o: KubeObject) => readonly string[]> }),
      fetch: async (key, signal) => {
        const { namespace, name } = splitKey(key);
        try {
          return await client.get(resource, name, {
            ...(namespace !== undefined && { namespace }),
            ...(signal && { signal }),
          });
        } catch (error) {
          if (isNotFound(error)) return undefined;
          throw error;
        }
      },
    });
    const lw = listerWatcher(client, resource, {
      ...scope,
      ...(options.metadataOnly && { metadataOnly: true }),
      ...(options.labelSelector && { labelSelector: options.labelSelector }),
    });
    const reflector = new Reflector(
      store,
      watcher(lw, {
        ...this.#options.watcherOptions,
        backoff: new Backoff(this.#options.backoff),
        clock: this.#options.clock ?? systemClock,
        outage: this.#outage,
        streamingLists: this.#streamingLists,
      }),
    );
    const same = [...this.#reflectors.values()].filter((e) =>
      e.resource === resource ||
      resourceId(e.resource) === resourceId(resource)
    );
    const suffix = same.length === 0 ? "" : `#${same.length + 1}`;
    this.#reflectors.set(id, {
      resource,
      reflector,
      name: `${resourceName(resource)}${suffix}`,
      kind: `${resource.kind}${suffix}`,
    });
    if (this.#running) this.#start(reflector);
    return reflector as unknown as Reflector<T>;
  }

  /** The reflector of `resource` shaped by `options`, if one was registered. */
  get(resource: Resource, options: CacheOptions = {}): Reflector | undefined {
    return this.#reflectors.get(cacheId(resource, options))?.reflector;
  }

  /** Every cache, in registration order. */
  entries(): CacheEntry[] {
    return [...this.#reflectors.values()];
  }

  /** Resolves when every registered cache has its first complete list. */
  synced(): Promise<void> {
    return Promise.all([...this.#reflectors.values()].map((r) => r.reflector.synced)).then(
      () => {},
    );
  }

  /**
   * Runs every reflector (and any registered later) until `signal` aborts.
   *
   * @throws {TypeError} when already running.
   * @throws the error of a watcher that gave up (a Deno permission denial); the others are
   * stopped first.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) throw new TypeError("Cannot run caches: they are already running");
    const stop = new AbortController();
    this.#running = AbortSignal.any([signal, stop.signal]);
    const failure = Promise.withResolvers<never>();
    this.#fail = (error) => {
      stop.abort();
      failure.reject(error);
    };
    for (const { reflector } of this.#reflectors.values()) this.#start(reflector);
    try {
      await Promise.race([
        failure.promise,
        new Promise<void>((resolve) => {
          if (signal.aborted) resolve();
          signal.addEventListener("abort", () => resolve(), { once: true });
        }),
      ]);
    } finally {
      stop.abort();
      while (this.#runs.length) await Promise.allSettled(this.#runs.splice(0));
    }
  }

  #start(reflector: Reflector): void {
    this.#runs.push(reflector.run(this.#running!).catch((error) => this.#fail(error)));
  }
}

/** One cache of a {@link Caches}. */
export interface CacheEntry {
  /** What is cached. */
  resource: Resource;
  /** Its watch and store. */
  reflector: Reflector;
  /**
   * What `/debug/cache` calls it: the resource's name (`deployments.apps`), with `#2`, `#3`... for
   * further caches of the same resource shaped differently.
   */
  name: string;
  /** The `kind` label of its metrics, suffixed like {@link CacheEntry.name}. */
  kind: string;
}

/** Numbers the transforms and memos, so that the same function always gives the same cache. */
const functionIds = new WeakMap<(object: KubeObject) => unknown, number>();
let functionsSeen = 0;

function functionId(fn: (object: KubeObject) => unknown): number {
  let n = functionIds.get(fn);
  if (n === undefined) functionIds.set(fn, n = ++functionsSeen);
  return n;
}

/** The identity of a cache: its resource and everything that shapes what it holds. */
function cacheId<T extends KubeObject>(resource: Resource, options: CacheOptions<T>): string {
  let id = resourceId(resource);
  if (options.metadataOnly) id += " metadata-only";
  if (options.labelSelector) id += ` labels=${options.labelSelector}`;
  if (options.transform) id += ` transform#${functionId(options.transform)}`;
  if (options.memo) id += ` memo#${functionId(options.memo)}`;
  if (options.budget) id += ` budget=${options.budget.maxObjects}/${options.budget.maxBytes}`;
  if (options.indexers) id += ` indexes=${Object.keys(options.indexers).join(",")}`;
  return id;
}
