/**
 * Keys waiting for a point in time, one entry per key: a binary min-heap by
 * due time plus a map from key to its heap slot, so rescheduling a key is
 * O(log n) and the queue needs only one timer, for the head.
 *
 * The heap is three parallel arrays rather than an object per key: with
 * every object requeued (thousands of keys always waiting), a key costs its
 * map entry, whose value is a small integer, and three array slots.
 *
 * @module
 */

/** A min-heap of keys by due time; scheduling a key twice keeps the earlier time. */
export class DelayHeap<K> {
  /** Heap order over slot indexes: slot `i` is key `#keys[i]`, due at `#at[i]`. */
  #keys: K[] = [];
  #at: number[] = [];
  /** Breaks ties so keys due at the same instant come out in scheduling order. */
  #seq: number[] = [];
  /** Slot index of every key in the heap. */
  #slots = new Map<K, number>();
  #nextSeq = 0;

  /** When the earliest key is due, or undefined when empty. */
  get nextAt(): number | undefined {
    return this.#at[0];
  }

  /** Keys waiting. */
  get size(): number {
    return this.#keys.length;
  }

  /** Schedules `key` at `at`, unless it is already scheduled no later than that. */
  schedule(key: K, at: number): void {
    const slot = this.#slots.get(key);
    if (slot !== undefined) {
      if (at < this.#at[slot]!) {
        this.#at[slot] = at;
        this.#up(slot);
      }
      return;
    }
    const added = this.#keys.length;
    this.#keys.push(key);
    this.#at.push(at);
    this.#seq.push(this.#nextSeq++);
    this.#slots.set(key, added);
    this.#up(added);
  }

  /** Removes and returns the keys due at or before `now`, earliest first, at most `max` of them. */
  popDue(now: number, max = Infinity): K[] {
    const due: K[] = [];
    while (due.length < max && this.#keys.length > 0 && this.#at[0]! <= now) {
      const head = this.#keys[0]!;
      due.push(head);
      this.delete(head);
    }
    return due;
  }

  /** Removes `key` if it is waiting; returns whether it was. */
  delete(key: K): boolean {
    const slot = this.#slots.get(key);
    if (slot === undefined) return false;
    const last = this.#keys.length - 1;
    if (slot !== last) this.#swap(slot, last);
    this.#keys.pop();
    this.#at.pop();
    this.#seq.pop();
    this.#slots.delete(key);
    if (slot < last) {
      this.#up(slot);
      this.#down(slot);
    }
    return true;
  }

  /** Removes every key. */
  clear(): void {
    this.#keys = [];
    this.#at = [];
    this.#seq = [];
    this.#slots.clear();
  }

  #less(i: number, j: number): boolean {
    const a = this.#at[i]!;
    const b = this.#at[j]!;
    return a < b || (a === b && this.#seq[i]! < this.#seq[j]!);
  }

  #swap(i: number, j: number): void {
    const key = this.#keys[i]!;
    const at = this.#at[i]!;
    const seq = this.#seq[i]!;
    this.#keys[i] = this.#keys[j]!;
    this.#at[i] = this.#at[j]!;
    this.#seq[i] = this.#seq[j]!;
    this.#keys[j] = key;
    this.#at[j] = at;
    this.#seq[j] = seq;
    this.#slots.set(this.#keys[i]!, i);
    this.#slots.set(key, j);
  }

  #up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(i, parent)) return;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(i: number): void {
    const length = this.#keys.length;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < length && this.#less(left, smallest)) smallest = left;
      if (right < length && this.#less(right, smallest)) smallest = right;
      if (smallest === i) return;
      this.#swap(i, smallest);
      i = smallest;
    }
  }
}
