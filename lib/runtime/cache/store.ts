/**
 * The cache a watcher fills and reconcilers read: objects keyed
 * `namespace/name`, indexed by owner and by custom indexers, with an optional
 * memory budget.
 *
 * This is a cache and may be stale: it holds what the watch has delivered so
 * far. Reads are synchronous except {@link Store.getOrFetch}.
 *
 * Under a budget (budget.ts: limits, eviction, read-back) the store evicts
 * full objects, least recently read first,
 * but keeps a compact entry for every key (uid, resourceVersion, generation,
 * owner uids, deletion flag, a fingerprint of labels and annotations, index
 * values), so no object is ever forgotten:
 * {@link Store.keys}, {@link Store.has}, {@link Store.byOwner} and
 * {@link Store.byIndex} still see evicted keys, {@link Store.get} returns
 * `undefined` for them, and {@link Store.getOrFetch} reads them back with a
 * live GET.
 *
 * @example
 * ```ts
 * import { Store } from "./store.ts";
 * const store = new Store();
 * store.apply({
 *   type: "applied",
 *   object: { metadata: { namespace: "default", name: "web", uid: "u1", resourceVersion: "7" } },
 * });
 * store.get("default/web")?.metadata?.uid; // "u1"
 * store.resourceVersion; // "7"
 * ```
 *
 * @module
 */
import type { KubeObject, ObjectKey } from "../../kube/types.ts";
import { describeError } from "../../kube/errors.ts";
import { objectKey } from "../../kube/object_key.ts";
import type { WatcherEvent } from "../watcher/watcher.ts";
import { logger } from "../../log.ts";
import { Entry, LinkedEntry, many, StoreState } from "./_store_state.ts";
import { estimateBytes } from "./estimate_bytes.ts";
import { metadataFingerprint } from "./fingerprint.ts";
import { Budget, type EvictionReason, type StoreBudget } from "./budget.ts";

export type { EvictionReason, StoreBudget } from "./budget.ts";

/** What the store knows of a key even when its object is evicted. */
export interface StoreEntry {
  /** `namespace/name` of the object. */
  key: ObjectKey;
  /** The object's uid. */
  uid: string;
  /** The object's resourceVersion. */
  resourceVersion: string;
  /** `metadata.generation`, absent for kinds without one. */
  generation: number | undefined;
  /** Uids of every owner reference, controller or not. */
  ownerUids: readonly string[];
  /** Whether `metadata.deletionTimestamp` is set. */
  deleting: boolean;
  /**
   * A hash of the object's labels and annotations (those under a
   * `kubernetes.io` domain left out), taken before the transform: it moves
   * when someone relabels the object, which its generation does not, even
   * when the cache keeps neither labels nor annotations.
   */
  fingerprint: number;
  /**
   * What the store's `memo` made of the object as received, before the
   * transform; `undefined` without a `memo`. The child applier keeps here
   * what its field manager's last apply left on a child.
   */
  memo: number | undefined;
  /** Whether the full object is in memory. */
  cached: boolean;
}

/**
 * A change the store made, told to listeners after the store has made it.
 * A relist, once complete, is told as an `upsert` per listed key (unchanged
 * when `previous.resourceVersion` is the object's own) and a `delete` per key
 * that vanished, whose `object` is the last one cached, if any, then
 * `replace`.
 */
export type StoreChange<T> =
  | {
    type: "upsert";
    key: ObjectKey;
    object: T;
    previous: StoreEntry | undefined;
    /**
     * The object cached under `key` before this change, shaped by the same
     * transform as `object`: absent for a new key, and for one whose object
     * a budget had evicted (its {@link StoreEntry} in `previous` remains).
     */
    previousObject?: T;
    /** True when told by a relist rather than by a watch event. */
    relist?: boolean;
  }
  | {
    type: "delete";
    key: ObjectKey;
    object: T | undefined;
    previous: StoreEntry;
    /** True when told by a relist rather than by a watch event. */
    relist?: boolean;
  }
  | { type: "replace"; resourceVersion: string; keys: number };

/**
 * A read-only view of a {@link Store}: what a reconcile may do with a cache.
 * Writing is the watcher's job alone, through {@link Store.apply}.
 */
export interface CacheReader<T extends KubeObject = KubeObject> {
  /** Keys known, evicted or not. */
  readonly size: number;
  /** Whether `key` is known, evicted or not. */
  has(key: ObjectKey): boolean;
  /** Every known key, evicted or not. */
  keys(): ObjectKey[];
  /** The full objects in memory; evicted ones are not listed. */
  list(): T[];
  /** The object under `key`, or `undefined` when unknown or evicted. */
  get(key: ObjectKey): T | undefined;
  /** The object under `key`, read back with a live GET when it was evicted. */
  getOrFetch(key: ObjectKey, signal?: AbortSignal): Promise<T | undefined>;
  /** What the store knows of `key`, evicted or not. */
  entry(key: ObjectKey): StoreEntry | undefined;
  /**
   * What the store knows of `key` with its object when in memory: one read
   * that counts as {@link CacheReader.get} does (a hit, or a miss when evicted).
   */
  read(key: ObjectKey): { entry: StoreEntry; object: T | undefined } | undefined;
  /** Keys of objects with an owner reference to `uid`. */
  byOwner(uid: string): ObjectKey[];
  /** Keys whose indexer `name` returned `value`. */
  byIndex(name: string, value: string): ObjectKey[];
}

/**
 * What everyone but its reflector holds of a {@link Store}: the reads, the
 * changes and the figures, and no way to write (kube-rs' `Store` beside the
 * reflector's `Writer`). The reflector alone applies watch events and sets
 * the budget (`Reflector.setBudget`).
 */
export type StoreView<T extends KubeObject = KubeObject> = Omit<Store<T>, "apply" | "setBudget">;

/** Counters and sizes for metrics and `/debug/cache`. */
export interface StoreStats {
  /** Full objects in memory. */
  objects: number;
  /** Keys known, evicted or not. */
  keys: number;
  /** Estimated bytes of the full objects in memory. */
  bytes: number;
  /** Reads that found the full object in memory. */
  hits: number;
  /** Reads of a known key whose object was evicted. */
  misses: number;
  /** Full objects dropped to stay within the budget. */
  evictions: number;
}

/** Options of {@link Store}. */
export interface StoreOptions<T extends KubeObject> {
  /**
   * Shapes each object before it is cached (and before indexers see it).
   * Keys, uids, owners and the rest of a {@link StoreEntry} come from the
   * object as received, so a projection may drop any field.
   * Defaults to {@link stripTransform}.
   */
  transform?: (object: KubeObject) => T;
  /** Named functions from an object to the values it is found under by {@link Store.byIndex}. */
  indexers?: Record<string, (object: T) => readonly string[]>;
  /** Caps on full objects kept. Defaults to none. Needs `fetch`. */
  budget?: StoreBudget;
  /**
   * A number to keep beside each key ({@link StoreEntry.memo}), made of the
   * object as received, before the transform, and kept when the object is
   * evicted: a way to remember a fact about fields the transform drops.
   * It runs on every object the store receives, so keep it cheap. Defaults
   * to none.
   */
  memo?: (object: KubeObject) => number | undefined;
  /**
   * Reads an object live (a GET), for {@link Store.getOrFetch}; resolves to
   * `undefined` when the object is gone (404).
   */
  fetch?: (key: ObjectKey, signal?: AbortSignal) => Promise<KubeObject | undefined>;
  /** Told each time a full object is evicted, and why. */
  onEvict?: (key: ObjectKey, reason: EvictionReason) => void;
}

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * The default transform: drops `metadata.managedFields` and the
 * `kubectl.kubernetes.io/last-applied-configuration` annotation, which are
 * often most of an object's bytes and which no reconciler reads. Returns the
 * object itself when there is nothing to drop; never mutates it.
 *
 * @example
 * ```ts
 * import { stripTransform } from "./store.ts";
 * const slim = stripTransform({ metadata: { name: "a", managedFields: [] } });
 * "managedFields" in slim.metadata!; // false
 * ```
 */
export function stripTransform<T extends KubeObject>(object: T): T {
  const metadata = object.metadata;
  const annotations = metadata?.annotations;
  const hasLastApplied = annotations !== undefined && LAST_APPLIED in annotations;
  if (!metadata || (metadata.managedFields === undefined && !hasLastApplied)) return object;
  // Copies instead of `delete`, which would turn the objects into slower, larger dictionaries.
  const { managedFields: _managedFields, ...stripped } = metadata;
  if (hasLastApplied) {
    const { [LAST_APPLIED]: _lastApplied, ...others } = annotations;
    stripped.annotations = others;
  }
  return { ...object, metadata: stripped };
}

/** An indexed, optionally budgeted cache of one kind of object. */
export class Store<T extends KubeObject = KubeObject> implements CacheReader<T> {
  readonly #transform: (object: KubeObject) => T;
  readonly #indexers: [string, (object: T) => readonly string[]][];
  readonly #budget: Budget<T>;
  readonly #memo: ((object: KubeObject) => number | undefined) | undefined;
  #state: StoreState<T>;
  /** The list under way, between `init` and `initDone`; readers never see it. */
  #pending: PendingList<T> | undefined;
  #resourceVersion = "";
  #listeners = new Set<(change: StoreChange<T>) => void>();
  #hits = 0;
  #misses = 0;

  /**
   * Creates an empty store.
   *
   * @throws {RangeError} when a budget limit is not a positive integer.
   * @throws {TypeError} when a budget is set without `fetch`.
   */
  constructor(options: StoreOptions<T> = {}) {
    this.#transform = options.transform ?? (stripTransform as (object: KubeObject) => T);
    this.#indexers = Object.entries(options.indexers ?? {});
    this.#memo = options.memo;
    this.#budget = new Budget<T>(options.budget, {
      ...(options.fetch && { fetch: options.fetch }),
      recache: (key, raw) => this.#recache(key, raw as KubeObject),
      ...(options.onEvict && { onEvict: options.onEvict }),
    });
    this.#state = new StoreState(this.#indexers.length);
  }

  /** The resourceVersion of the last list, event or bookmark applied; "" before any. */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  /** Keys known, evicted or not. */
  get size(): number {
    return this.#state.entries.size;
  }

  /** Whether `key` is known, evicted or not. */
  has(key: ObjectKey): boolean {
    return this.#state.entries.has(key);
  }

  /** Every known key, evicted or not. */
  keys(): ObjectKey[] {
    return [...this.#state.entries.keys()];
  }

  /** The full objects in memory; evicted ones are not listed. Does not count as a read. */
  list(): T[] {
    const objects: T[] = [];
    for (const entry of this.#state.entries.values()) {
      if (entry.object !== undefined) objects.push(entry.object);
    }
    return objects;
  }

  /** The object under `key`, or `undefined` when unknown or evicted (see {@link getOrFetch}). */
  get(key: ObjectKey): T | undefined {
    const entry = this.#state.entries.get(key);
    if (!entry) return undefined;
    if (entry.object === undefined) {
      this.#misses++;
      return undefined;
    }
    this.#hits++;
    this.#state.touch(entry);
    return entry.object;
  }

  /**
   * The object under `key`, read back with `fetch` when it was evicted.
   * Concurrent reads of one key share one GET; the answer is cached again
   * when it is the version the store has indexed. Unknown keys resolve to
   * `undefined` without a GET.
   *
   * @throws whatever `fetch` throws, or the signal's reason when `signal` aborts first.
   */
  async getOrFetch(key: ObjectKey, signal?: AbortSignal): Promise<T | undefined> {
    signal?.throwIfAborted();
    const cached = this.get(key);
    if (cached || !this.has(key) || !this.#budget.canReadBack) return cached;
    return await this.#budget.readBack(key, signal);
  }

  /** What the store knows of `key`, evicted or not. */
  entry(key: ObjectKey): StoreEntry | undefined {
    const entry = this.#state.entries.get(key);
    return entry && view(key, entry);
  }

  /**
   * What the store knows of `key` with its object when in memory: one read
   * that counts as {@link Store.get} does (a hit, or a miss when evicted).
   */
  read(key: ObjectKey): { entry: StoreEntry; object: T | undefined } | undefined {
    const entry = this.#state.entries.get(key);
    if (!entry) return undefined;
    return { entry: view(key, entry), object: this.get(key) };
  }

  /**
   * Estimated bytes of the full object under `key` (as counted against the
   * budget), or `undefined` when it is unknown or evicted. Not a read.
   */
  residentBytes(key: ObjectKey): number | undefined {
    const entry = this.#state.entries.get(key);
    return entry?.object === undefined ? undefined : entry.bytes;
  }

  /** Keys of objects with an owner reference (controller or not) to `uid`. */
  byOwner(uid: string): ObjectKey[] {
    return this.#state.owners.get(uid);
  }

  /**
   * Keys whose indexer `name` returned `value`.
   *
   * @throws {RangeError} when no indexer is called `name`.
   */
  byIndex(name: string, value: string): ObjectKey[] {
    const i = this.#indexers.findIndex(([indexer]) => indexer === name);
    const index = this.#state.indexes[i];
    if (!index) {
      const known = this.#indexers.map(([indexer]) => `'${indexer}'`).join(", ") || "none";
      throw new RangeError(`Cannot look up index '${name}': no such indexer (known: ${known})`);
    }
    return index.get(value);
  }

  /**
   * Replaces the budget while the store runs, e.g. to tighten it under memory
   * pressure: a smaller one evicts at once, least recently read first, down
   * to it (every key stays indexed); a larger one, or none, evicts no more
   * and lets objects read back live be cached again.
   *
   * @throws {TypeError} when the store was created without a budget: only a
   * budgeted store keeps the LRU order and the `fetch` that eviction needs.
   * @throws {RangeError} when a limit is not a positive integer.
   *
   * @example
   * ```ts
   * import { Store } from "./store.ts";
   * const store = new Store({ budget: { maxObjects: 10 }, fetch: () => Promise.resolve(undefined) });
   * for (const name of ["a", "b", "c"]) {
   *   store.apply({ type: "applied", object: { metadata: { name, resourceVersion: "1" } } });
   * }
   * store.setBudget({ maxObjects: 1 });
   * store.stats().objects; // 1
   * store.size; // 3: evicted keys stay known
   * ```
   */
  setBudget(budget: StoreBudget | undefined): void {
    this.#budget.set(budget);
    this.#enforceBudget(this.#state);
    if (this.#pending) this.#enforceBudget(this.#pending.state);
  }

  /** Whether the store was created with a budget, so {@link Store.setBudget} may change it. */
  get budgeted(): boolean {
    return this.#budget.linked;
  }

  /** Counters and sizes, for metrics. */
  stats(): StoreStats {
    return {
      objects: this.#state.objects,
      keys: this.#state.entries.size,
      bytes: this.#state.bytes,
      hits: this.#hits,
      misses: this.#misses,
      evictions: this.#budget.evictions,
    };
  }

  /** Calls `listener` after each change; returns a function that unsubscribes. */
  subscribe(listener: (change: StoreChange<T>) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Applies one event of a watcher, in the watcher's own vocabulary (after
   * kube-runtime's `apply_watcher_event`):
   *
   * - `init` begins a new list aside, dropping any unfinished one; `initPage`
   *   transforms and indexes its objects into that list at once, so the raw
   *   objects can go page by page (the budget applies there too, but the
   *   objects it evicts are held until `initDone` so that listeners get
   *   every listed object); `initDone` swaps the list in whole and only then
   *   tells listeners. Readers and listeners never see a mix of old and new,
   *   and keys missing from the list are gone afterwards.
   * - `applied` and `deleted` change one key; `bookmark` only moves the
   *   resourceVersion. A watcher sends none of them during a list; if they
   *   come anyway, they change what readers see at once and the list, when
   *   done, replaces it all.
   *
   * @throws {TypeError} on an unknown event type, an object without a name,
   * or an `initPage` or `initDone` with no list begun. A page with a nameless
   * object abandons its list, so the store stays as it was and the rest of
   * that list is refused up to the next `init`.
   *
   * @example
   * ```ts
   * import { Store } from "./store.ts";
   * const store = new Store();
   * store.apply({ type: "init" });
   * store.apply({ type: "initPage", objects: [{ metadata: { name: "a", resourceVersion: "3" } }] });
   * store.has("a"); // false: readers see the old contents until the list is done
   * store.apply({ type: "initDone", resourceVersion: "5" });
   * store.has("a"); // true
   * ```
   */
  apply(event: WatcherEvent): void {
    switch (event.type) {
      case "init":
        this.#pending = new PendingList(new StoreState<T>(this.#indexers.length));
        return;
      case "initPage":
        this.#addPage(event.objects);
        return;
      case "initDone":
        this.#replace(event.resourceVersion);
        return;
      case "bookmark":
        this.#resourceVersion = event.resourceVersion;
        return;
      case "applied": {
        const key = objectKey(event.object);
        const known = this.#state.entries.get(key);
        const previous = known && view(key, known);
        const previousObject = known?.object;
        const object = this.#put(this.#state, key, event.object);
        this.#emit({
          type: "upsert",
          key,
          object,
          previous,
          ...(previousObject && { previousObject }),
        });
        break;
      }
      case "deleted": {
        const key = objectKey(event.object);
        const known = this.#state.entries.get(key);
        if (known) {
          const previous = view(key, known);
          this.#state.delete(key);
          const object = this.#transform(event.object);
          this.#emit({ type: "delete", key, object, previous });
        }
        break;
      }
      default:
        throw new TypeError(
          `Cannot apply a watcher event of type '${
            (event as { type: unknown }).type
          }': expected init, initPage, initDone, applied, deleted or bookmark`,
        );
    }
    const rv = event.object.metadata?.resourceVersion;
    if (rv) this.#resourceVersion = rv;
  }

  /** Adds one page to the list under way; see {@link Store.apply}. */
  #addPage(objects: readonly KubeObject[]): void {
    const pending = this.#listUnderWay("initPage");
    for (const raw of objects) {
      let key: ObjectKey;
      try {
        key = objectKey(raw);
      } catch (error) {
        this.#pending = undefined;
        throw error;
      }
      this.#put(pending.state, key, raw);
    }
  }

  /** Swaps in the list under way and tells listeners; see {@link Store.apply}. */
  #replace(resourceVersion: string): void {
    const { state: next, evicted } = this.#listUnderWay("initDone");
    this.#pending = undefined;
    const old = this.#state;
    this.#state = next;
    this.#resourceVersion = resourceVersion;
    for (const [key, entry] of next.entries) {
      const object = entry.object ?? evicted.get(key)!;
      const previous = old.entries.get(key);
      const before = previous && view(key, previous);
      const previousObject = previous?.object;
      this.#emit({
        type: "upsert",
        key,
        object,
        previous: before,
        ...(previousObject && { previousObject }),
        relist: true,
      });
    }
    for (const [key, previous] of old.entries) {
      if (next.entries.has(key)) continue;
      const object = previous.object;
      this.#emit({ type: "delete", key, object, previous: view(key, previous), relist: true });
    }
    this.#emit({ type: "replace", resourceVersion, keys: next.entries.size });
  }

  /** Indexes and caches `raw` under `key` in `state`; returns the transformed object. */
  #put(state: StoreState<T>, key: ObjectKey, raw: KubeObject): T {
    const object = this.#transform(raw);
    const meta = raw.metadata ?? {};
    const refs = meta.ownerReferences ?? [];
    const owners = refs.length <= 1 ? refs[0]?.uid : refs.map((ref) => ref.uid);
    const indexed = this.#indexers.length === 0
      ? undefined
      : this.#indexers.map(([, indexer]) => indexer(object));
    const fields = [
      meta.uid ?? "",
      meta.resourceVersion ?? "",
      meta.generation,
      metadataFingerprint(raw) * 2 + (meta.deletionTimestamp !== undefined ? 1 : 0),
      this.#memo?.(raw),
      owners,
      indexed,
      object,
      estimateBytes(object),
    ] as const;
    state.set(key, this.#budget.linked ? new LinkedEntry(key, ...fields) : new Entry(...fields));
    this.#enforceBudget(state);
    return object;
  }

  /** Evicts down to the budget; a list under way keeps what it evicts for its listeners. */
  #enforceBudget(state: StoreState<T>): void {
    const pending = this.#pending;
    if (state === pending?.state) {
      this.#budget.enforce(state, (key, object) => pending.evicted.set(key, object));
    } else this.#budget.enforce(state);
  }

  #listUnderWay(type: string): PendingList<T> {
    if (this.#pending) return this.#pending;
    throw new TypeError(
      `Cannot apply a watcher event of type '${type}': no list is under way; ` +
        "a list begins with 'init', and a page with a nameless object abandons it",
    );
  }

  /** Caches a fetched object if it is the version indexed and still evicted; returns it transformed. */
  #recache(key: ObjectKey, raw: KubeObject): T {
    const object = this.#transform(raw);
    const entry = this.#state.entries.get(key);
    if (
      entry && entry.object === undefined && raw.metadata?.resourceVersion === entry.resourceVersion
    ) {
      this.#state.cache(entry, object, estimateBytes(object));
      this.#enforceBudget(this.#state);
    }
    return object;
  }

  #emit(change: StoreChange<T>): void {
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch (error) {
        logger("store").error("store listener failed on {type} {key}: {error}", {
          type: change.type,
          key: "key" in change ? change.key : "",
          error: describeError(error),
        });
      }
    }
  }
}

/** A list between `init` and `initDone`. */
class PendingList<T> {
  /** Objects the budget evicted from `state`, kept for the listeners told at `initDone`. */
  readonly evicted = new Map<ObjectKey, T>();
  constructor(readonly state: StoreState<T>) {}
}

function view<T>(key: ObjectKey, entry: Entry<T>): StoreEntry {
  return {
    key,
    uid: entry.uid,
    resourceVersion: entry.resourceVersion,
    generation: entry.generation,
    ownerUids: many(entry.owners),
    deleting: entry.deleting,
    fingerprint: entry.fingerprint,
    memo: entry.memo,
    cached: entry.object !== undefined,
  };
}
