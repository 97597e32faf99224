/**
 * The data behind a {@link Store}: one compact {@link Entry} per known key,
 * the owner and custom indexes, and an LRU list of the entries whose full
 * object is in memory. A relist builds a fresh {@link StoreState} and the
 * store swaps it in whole.
 *
 * @module
 */
import type { ObjectKey } from "../../kube/types.ts";
import { MultiMap } from "./_multimap.ts";

/** A full object in memory, linked into the LRU list (least recently used first). */
export class Cached<T> {
  prev: Cached<T> | undefined = undefined;
  next: Cached<T> | undefined = undefined;
  constructor(readonly key: ObjectKey, readonly object: T, readonly bytes: number) {}
}

/**
 * What the store remembers of every key, evicted or not. Kept to a handful of
 * fields because every key pays for it; owners and index values are stored
 * bare when there is one, since there almost always is.
 */
export class Entry<T> {
  constructor(
    readonly uid: string,
    readonly resourceVersion: string,
    readonly generation: number | undefined,
    readonly deleting: boolean,
    readonly owners: string | readonly string[] | undefined,
    /** Values per custom indexer, in indexer order; undefined without indexers. */
    readonly indexed: readonly (readonly string[])[] | undefined,
    public cached: Cached<T> | undefined,
  ) {}
}

/** `string | string[] | undefined` as an array, for the bare-when-single fields. */
export function many(values: string | readonly string[] | undefined): readonly string[] {
  if (values === undefined) return [];
  return typeof values === "string" ? [values] : values;
}

/** Entries, indexes and the LRU list of one generation of the store. */
export class StoreState<T> {
  readonly entries = new Map<ObjectKey, Entry<T>>();
  readonly owners = new MultiMap<string, ObjectKey>();
  readonly indexes: MultiMap<string, ObjectKey>[];
  /** Least recently used cached object; evicted first. */
  #head: Cached<T> | undefined;
  /** Most recently used cached object. */
  #tail: Cached<T> | undefined;
  /** Number of cached objects (entries with `cached` set). */
  objects = 0;
  /** Sum of `bytes` over cached objects. */
  bytes = 0;

  constructor(indexers: number) {
    this.indexes = Array.from({ length: indexers }, () => new MultiMap<string, ObjectKey>());
  }

  /** The least recently used cached object, next in line for eviction. */
  get oldest(): Cached<T> | undefined {
    return this.#head;
  }

  /** Adds or replaces the entry of `key`, indexing it and caching its object if any. */
  set(key: ObjectKey, entry: Entry<T>): void {
    this.delete(key);
    this.entries.set(key, entry);
    for (const owner of many(entry.owners)) this.owners.add(owner, key);
    entry.indexed?.forEach((values, i) => values.forEach((v) => this.indexes[i]?.add(v, key)));
    if (entry.cached) this.#link(entry.cached);
  }

  /** Removes `key` entirely; returns what was there. */
  delete(key: ObjectKey): Entry<T> | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    for (const owner of many(entry.owners)) this.owners.delete(owner, key);
    entry.indexed?.forEach((values, i) => values.forEach((v) => this.indexes[i]?.delete(v, key)));
    this.uncache(entry);
    return entry;
  }

  /** Puts a full object back on an indexed entry (after a live GET). */
  cache(entry: Entry<T>, cached: Cached<T>): void {
    this.uncache(entry);
    entry.cached = cached;
    this.#link(cached);
  }

  /** Drops the full object of `entry`, keeping the entry. */
  uncache(entry: Entry<T>): void {
    const cached = entry.cached;
    if (!cached) return;
    entry.cached = undefined;
    if (cached.prev) cached.prev.next = cached.next;
    else this.#head = cached.next;
    if (cached.next) cached.next.prev = cached.prev;
    else this.#tail = cached.prev;
    cached.prev = cached.next = undefined;
    this.objects--;
    this.bytes -= cached.bytes;
  }

  /** Marks `cached` as the most recently used. */
  touch(cached: Cached<T>): void {
    if (this.#tail === cached) return;
    if (cached.prev) cached.prev.next = cached.next;
    else this.#head = cached.next;
    if (cached.next) cached.next.prev = cached.prev;
    cached.next = undefined;
    cached.prev = this.#tail;
    if (this.#tail) this.#tail.next = cached;
    this.#tail = cached;
  }

  #link(cached: Cached<T>): void {
    cached.prev = this.#tail;
    cached.next = undefined;
    if (this.#tail) this.#tail.next = cached;
    else this.#head = cached;
    this.#tail = cached;
    this.objects++;
    this.bytes += cached.bytes;
  }
}
