/**
 * An index from a value (an owner uid, a custom index value) to the object
 * keys that carry it. Most values map to exactly one key (one owner, one
 * child), so a single key is stored bare and only promoted to a Set on the
 * second: a Set costs about a hundred bytes even when it holds one string.
 *
 * @module
 */

/** value → keys, with single-key buckets stored without a Set. */
export class MultiMap<V, K> {
  #buckets = new Map<V, K | Set<K>>();

  add(value: V, key: K): void {
    const bucket = this.#buckets.get(value);
    if (bucket === undefined) this.#buckets.set(value, key);
    else if (bucket instanceof Set) bucket.add(key);
    else if (bucket !== key) this.#buckets.set(value, new Set([bucket, key]));
  }

  delete(value: V, key: K): void {
    const bucket = this.#buckets.get(value);
    if (bucket instanceof Set) {
      bucket.delete(key);
      if (bucket.size === 1) this.#buckets.set(value, bucket.values().next().value as K);
    } else if (bucket === key) {
      this.#buckets.delete(value);
    }
  }

  get(value: V): K[] {
    const bucket = this.#buckets.get(value);
    if (bucket === undefined) return [];
    return bucket instanceof Set ? [...bucket] : [bucket];
  }
}
