/**
 * The data behind a {@link Store}: one compact {@link Entry} per known key,
 * holding the full object while it is in memory, the owner and custom
 * indexes, and, under a memory budget, an LRU list of the entries whose
 * object is in memory. A relist builds a fresh {@link StoreState} and the
 * store swaps it in whole.
 *
 * @module
 */
import type { ObjectKey } from "../../kube/types.ts";
import { MultiMap } from "./_multimap.ts";

/**
 * What the store remembers of every key, evicted or not, and the full object
 * while it is in memory. Kept to a handful of fields because every key pays
 * for each (8 bytes a field): owners and index values are stored bare when
 * there is one, since there almost always is, and a store without a budget,
 * which never evicts, keeps no LRU links (see {@link LinkedEntry}).
 */
export class Entry<T> {
  constructor(
    readonly uid: string,
    readonly resourceVersion: string,
    readonly generation: number | undefined,
    /**
     * Two facts in one small integer: the object's metadata fingerprint
     * (see `metadataFingerprint`) times two, plus one while it is being
     * deleted.
     */
    readonly metadataState: number,
    /** See `StoreEntry.memo`. */
    readonly memo: number | undefined,
    readonly owners: string | readonly string[] | undefined,
    /** Values per custom indexer, in indexer order; undefined without indexers. */
    readonly indexed: readonly (readonly string[])[] | undefined,
    /** The full object, or `undefined` once evicted. */
    public object: T | undefined,
    /** Estimated bytes of `object`, as counted against the budget; 0 once evicted. */
    public bytes: number,
  ) {}

  /** Whether `metadata.deletionTimestamp` is set. */
  get deleting(): boolean {
    return (this.metadataState & 1) === 1;
  }

  /** The hash of the object's labels and annotations. */
  get fingerprint(): number {
    return this.metadataState >>> 1;
  }
}

/** An {@link Entry} of a budgeted store, linked into its LRU list (least recently used first). */
export class LinkedEntry<T> extends Entry<T> {
  prev: LinkedEntry<T> | undefined = undefined;
  next: LinkedEntry<T> | undefined = undefined;
  constructor(
    /** The entry's own key, for evicting it from the head of the list. */
    readonly key: ObjectKey,
    ...fields: ConstructorParameters<typeof Entry<T>>
  ) {
    super(...fields);
  }
}

/** `string | string[] | undefined` as an array, for the bare-when-single fields. */
export function many(values: string | readonly string[] | undefined): readonly string[] {
  if (values === undefined) return [];
  return typeof values === "string" ? [values] : values;
}

/** Entries, indexes and (under a budget) the LRU list of one generation of the store. */
export class StoreState<T> {
  readonly entries = new Map<ObjectKey, Entry<T>>();
  /**
   * The owner index, built on its first read: a cache nobody asks by owner
   * (the controller maps children to owners from the object itself) pays
   * nothing for it, where it costs a map entry per owned key.
   */
  #owners: MultiMap<string, ObjectKey> | undefined;
  readonly indexes: MultiMap<string, ObjectKey>[];
  /** Least recently used entry with its object in memory; evicted first. */
  #head: LinkedEntry<T> | undefined;
  /** Most recently used entry with its object in memory. */
  #tail: LinkedEntry<T> | undefined;
  /** Number of entries with their object in memory. */
  objects = 0;
  /** Sum of `bytes` over entries with their object in memory. */
  bytes = 0;

  /** A state for a store with `indexers` custom indexers. */
  constructor(indexers: number) {
    this.indexes = Array.from({ length: indexers }, () => new MultiMap<string, ObjectKey>());
  }

  /** Owner uid → keys of the entries with an owner reference to it. */
  get owners(): MultiMap<string, ObjectKey> {
    if (this.#owners) return this.#owners;
    this.#owners = new MultiMap();
    for (const [key, entry] of this.entries) {
      for (const owner of many(entry.owners)) this.#owners.add(owner, key);
    }
    return this.#owners;
  }

  /** The least recently used entry with its object in memory, next in line for eviction. */
  get oldest(): LinkedEntry<T> | undefined {
    return this.#head;
  }

  /** Adds or replaces the entry of `key`, indexing it and counting its object if any. */
  set(key: ObjectKey, entry: Entry<T>): void {
    this.delete(key);
    this.entries.set(key, entry);
    if (this.#owners) {
      for (const owner of many(entry.owners)) this.#owners.add(owner, key);
    }
    entry.indexed?.forEach((values, i) => values.forEach((v) => this.indexes[i]?.add(v, key)));
    if (entry.object !== undefined) this.#count(entry);
  }

  /** Removes `key` entirely; returns what was there. */
  delete(key: ObjectKey): Entry<T> | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (this.#owners) {
      for (const owner of many(entry.owners)) this.#owners.delete(owner, key);
    }
    entry.indexed?.forEach((values, i) => values.forEach((v) => this.indexes[i]?.delete(v, key)));
    this.uncache(entry);
    return entry;
  }

  /** Puts a full object back on an indexed entry (after a live GET). */
  cache(entry: Entry<T>, object: T, bytes: number): void {
    this.uncache(entry);
    entry.object = object;
    entry.bytes = bytes;
    this.#count(entry);
  }

  /** Drops the full object of `entry`, keeping the entry. */
  uncache(entry: Entry<T>): void {
    if (entry.object === undefined) return;
    if (entry instanceof LinkedEntry) this.#unlink(entry);
    this.objects--;
    this.bytes -= entry.bytes;
    entry.object = undefined;
    entry.bytes = 0;
  }

  /** Marks `entry` as the most recently used; a no-op without LRU links. */
  touch(entry: Entry<T>): void {
    if (!(entry instanceof LinkedEntry) || this.#tail === entry) return;
    this.#unlink(entry);
    this.#append(entry);
  }

  #count(entry: Entry<T>): void {
    if (entry instanceof LinkedEntry) this.#append(entry);
    this.objects++;
    this.bytes += entry.bytes;
  }

  #append(entry: LinkedEntry<T>): void {
    entry.prev = this.#tail;
    entry.next = undefined;
    if (this.#tail) this.#tail.next = entry;
    else this.#head = entry;
    this.#tail = entry;
  }

  #unlink(entry: LinkedEntry<T>): void {
    if (entry.prev) entry.prev.next = entry.next;
    else this.#head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else this.#tail = entry.prev;
    entry.prev = entry.next = undefined;
  }
}
