/**
 * Keys waiting for a point in time, one entry per key: a binary min-heap by
 * due time plus a map from key to its heap slot, so rescheduling a key is
 * O(log n) and the queue needs only one timer, for the head.
 *
 * @module
 */

interface Slot<K> {
  key: K;
  at: number;
  /** Breaks ties so keys due at the same instant come out in scheduling order. */
  seq: number;
  index: number;
}

/** A min-heap of keys by due time; scheduling a key twice keeps the earlier time. */
export class DelayHeap<K> {
  #heap: Slot<K>[] = [];
  #slots = new Map<K, Slot<K>>();
  #seq = 0;

  /** When the earliest key is due, or undefined when empty. */
  get nextAt(): number | undefined {
    return this.#heap[0]?.at;
  }

  /** Schedules `key` at `at`, unless it is already scheduled no later than that. */
  schedule(key: K, at: number): void {
    const slot = this.#slots.get(key);
    if (slot) {
      if (at < slot.at) {
        slot.at = at;
        this.#up(slot.index);
      }
      return;
    }
    const added = { key, at, seq: this.#seq++, index: this.#heap.length };
    this.#heap.push(added);
    this.#slots.set(key, added);
    this.#up(added.index);
  }

  /** Removes and returns every key due at or before `now`, earliest first. */
  popDue(now: number): K[] {
    const due: K[] = [];
    for (let head = this.#heap[0]; head && head.at <= now; head = this.#heap[0]) {
      due.push(head.key);
      this.#slots.delete(head.key);
      const last = this.#heap.pop();
      if (last && last !== head) {
        last.index = 0;
        this.#heap[0] = last;
        this.#down(0);
      }
    }
    return due;
  }

  /** Removes every key. */
  clear(): void {
    this.#heap = [];
    this.#slots.clear();
  }

  #less(a: Slot<K>, b: Slot<K>): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  #swap(i: number, j: number): void {
    const a = this.#heap[i]!;
    const b = this.#heap[j]!;
    this.#heap[i] = b;
    this.#heap[j] = a;
    a.index = j;
    b.index = i;
  }

  #up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(this.#heap[i]!, this.#heap[parent]!)) return;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(i: number): void {
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < this.#heap.length && this.#less(this.#heap[left]!, this.#heap[smallest]!)) {
        smallest = left;
      }
      if (right < this.#heap.length && this.#less(this.#heap[right]!, this.#heap[smallest]!)) {
        smallest = right;
      }
      if (smallest === i) return;
      this.#swap(i, smallest);
      i = smallest;
    }
  }
}
