/**
 * The work queue between the store and the reconcilers, after client-go's
 * `workqueue`.
 *
 * Its contract:
 *
 * - Keys are deduplicated: adding a key that is already waiting does nothing.
 * - A key is never handed to two workers at once. A key added while a worker
 *   holds it is not handed out again until that worker calls
 *   {@link WorkQueue.done}; then it runs exactly once more, however many
 *   times it was added meanwhile.
 * - Waiting keys wait in one of three lanes, each first in, first out:
 *   fresh (changes seen as they happen, the default of {@link WorkQueue.add}),
 *   missed (`{ missed: true }`: changes made while no controller watched,
 *   found by an initial list or a relist) and backlog (`{ backlog: true }`:
 *   the rest of initial lists and relists; every delayed add, so requeues,
 *   retries and resyncs). A fresh key is handed out before any other, as in
 *   controller-runtime's priority queue, and a missed key before any
 *   backlog key, with one rule against starvation: while fresh keys and
 *   others wait, every eighth key handed out comes from the lanes behind
 *   fresh, so a stream of fresh changes slows them but never stops them. A
 *   waiting key added to a lane ahead of its own moves there; a key never
 *   moves back.
 * - {@link WorkQueue.addAfter} delays an add; when a key is delayed twice, the
 *   earlier time wins. Delayed keys cost one heap slot each and share one
 *   timer, so thousands of them are cheap.
 * - The queue keeps no failures: what a key's reconcile came to, and so how
 *   long it waits, is decided by the controller's retries
 *   (lib/runtime/scheduling/retries.ts), which call {@link WorkQueue.addAfter}.
 * - After {@link WorkQueue.shutDown}, adds are ignored, waiting and delayed
 *   keys are dropped and {@link WorkQueue.get} returns `undefined`. (Unlike
 *   client-go, queued keys are not handed out after shutdown: a manager that
 *   stops has lost its lease or is exiting, and the next one relists.)
 *
 * @example
 * ```ts
 * import { WorkQueue } from "./queue.ts";
 * import { FakeClock } from "../../async/clock.ts";
 * const queue = new WorkQueue<string>({ clock: new FakeClock() });
 * queue.add("default/web");
 * queue.add("default/web"); // deduplicated
 * const key = await queue.get();
 * try {
 *   // reconcile key
 * } finally {
 *   queue.done(key!);
 * }
 * queue.shutDown();
 * ```
 *
 * @module
 */
import type { ObjectKey } from "../../kube/types.ts";
import { type Clock, systemClock } from "../../async/clock.ts";
import { DelayHeap } from "../../async/delay_heap.ts";

/** What a queue reports when its metrics are read. */
export interface QueueSnapshot {
  /** Keys waiting to be handed out, including ones re-added while in flight. */
  depth: number;
  /** Seconds that in-flight keys have been held so far, summed. */
  unfinishedSeconds: number;
  /** Seconds the longest-held in-flight key has been held; 0 when none is. */
  longestRunningSeconds: number;
}

/**
 * Hooks a queue calls so its owner can publish controller-runtime's
 * `workqueue_*` metrics; see `RuntimeMetrics.queue` in metrics.ts.
 */
export interface QueueMetrics {
  /** A key became waiting (a deduplicated add does not count). */
  added(): void;
  /** A worker took a key that had waited `queuedSeconds` since it was added. */
  taken(queuedSeconds: number): void;
  /** A worker finished a key it had held for `workSeconds`. */
  finished(workSeconds: number): void;
  /** A delayed add was scheduled (a retry or a requeue-after). */
  retried(): void;
  /** Called once by the queue's constructor with a probe to read on scrape. */
  track(snapshot: () => QueueSnapshot): void;
}

/** Options of {@link WorkQueue}. */
export interface WorkQueueOptions {
  /** Time source for delays and durations. Defaults to {@link systemClock}. */
  clock?: Clock;
  /** Receives the queue's metric events. Defaults to none. */
  metrics?: QueueMetrics;
}

/**
 * While fresh keys and others wait, one key in this many comes from the
 * lanes behind fresh: their share of the workers when fresh changes never stop.
 */
const BACKLOG_SHARE = 8;

/** How a key is added; see the module documentation. */
export interface AddOptions {
  /**
   * Queue the key behind every fresh and missed key, e.g. because it comes
   * from an initial list or a relist rather than a change. Defaults to false.
   */
  backlog?: boolean;
  /**
   * Queue the key behind every fresh key but ahead of the backlog: a change
   * made while no controller watched (an initial list or a relist found it
   * unobserved). Wins over `backlog`. Defaults to false.
   */
  missed?: boolean;
}

/** The lanes by precedence: fresh, missed, backlog. */
type LaneIndex = 0 | 1 | 2;
const FRESH_LANE = 0;
const BACKLOG_LANE = 2;

function laneIndex(options: AddOptions): LaneIndex {
  return options.missed ? 1 : options.backlog ? BACKLOG_LANE : FRESH_LANE;
}

/** One first-in, first-out lane of waiting keys. */
class Lane<K> {
  /** Keys in arrival order; slots before `#head` are spent. A key may be stale (see `shift`). */
  #keys: (K | undefined)[] = [];
  #head = 0;
  /** Live keys in the lane: those `shift` will hand out. */
  size = 0;

  push(key: K): void {
    this.#keys.push(key);
    this.size++;
  }

  /** The next key that `live` accepts, dropping stale ones before it. */
  shift(live: (key: K) => boolean): K | undefined {
    while (this.#head < this.#keys.length) {
      const key = this.#keys[this.#head] as K;
      this.#keys[this.#head++] = undefined;
      // Compacts once the spent prefix is most of the array, keeping shifts O(1) amortized.
      if (this.#head > 64 && this.#head * 2 > this.#keys.length) {
        this.#keys = this.#keys.slice(this.#head);
        this.#head = 0;
      }
      if (live(key)) {
        this.size--;
        return key;
      }
    }
    return undefined;
  }

  clear(): void {
    this.#keys = [];
    this.#head = 0;
    this.size = 0;
  }
}

interface Getter<K> {
  resolve(key: K | undefined): void;
}

const BACKLOG: AddOptions = { backlog: true };

/** A deduplicating, per-key exclusive and delaying work queue with three lanes. */
export class WorkQueue<K = ObjectKey> {
  readonly #clock: Clock;
  readonly #metrics: QueueMetrics | undefined;
  /**
   * Keys that need a run, each with when it became dirty. A key leaves when a
   * worker takes it. Invariant: a key is live in exactly one lane exactly
   * when it is dirty and not processing: in `#lanes[#laneOf.get(key)]`.
   */
  #dirty = new Map<K, number>();
  /** The lane of each dirty key. */
  #laneOf = new Map<K, LaneIndex>();
  /**
   * Keys a worker holds, each with when it was taken. A key here is never
   * handed out again before `done(key)`; if it is also dirty, `done` puts it
   * back in its lane.
   */
  #processing = new Map<K, number>();
  /**
   * Waiting keys by lane: fresh, missed, backlog. An entry is stale, and
   * skipped, once its key was taken or moved to a lane ahead.
   */
  readonly #lanes = [new Lane<K>(), new Lane<K>(), new Lane<K>()] as const;
  /** Fresh keys handed out in a row while other lanes waited. */
  #freshStreak = 0;
  #delayed = new DelayHeap<K>();
  /** The one pending timer, for the earliest delayed key. */
  #timer: { at: number; cancel: AbortController } | undefined;
  /** Workers blocked in `get`, in arrival order. */
  #getters = new Set<Getter<K>>();
  #shuttingDown = false;

  /** Creates an empty queue. */
  constructor(options: WorkQueueOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#metrics = options.metrics;
    this.#metrics?.track(() => this.#snapshot());
  }

  /** Keys ready to be handed out now (not delayed ones, not in-flight ones). */
  get len(): number {
    return this.#lanes[0].size + this.#lanes[1].size + this.#lanes[2].size;
  }

  /** Whether {@link shutDown} was called. */
  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * Marks `key` as needing a run, in the fresh lane unless `options` name
   * another. A key already waiting moves to the lane named when that lane is
   * ahead of its own; otherwise it stays where it is.
   */
  add(key: K, options: AddOptions = {}): void {
    if (this.#shuttingDown) return;
    const lane = laneIndex(options);
    const current = this.#laneOf.get(key);
    if (current !== undefined) {
      if (lane < current) this.#promote(key, current, lane);
      return;
    }
    this.#dirty.set(key, this.#clock.now());
    this.#laneOf.set(key, lane);
    this.#metrics?.added();
    if (!this.#processing.has(key)) this.#enqueue(key);
  }

  /**
   * Adds `key` to the backlog after `ms` milliseconds; at once when
   * `ms <= 0`. A key already delayed keeps the earlier of its two times.
   *
   * @throws {RangeError} when `ms` is NaN.
   */
  addAfter(key: K, ms: number): void {
    if (Number.isNaN(ms)) {
      throw new RangeError(`Cannot delay ${String(key)}: 'ms' must be a number, got NaN`);
    }
    if (this.#shuttingDown) return;
    this.#metrics?.retried();
    if (ms <= 0) return this.add(key, BACKLOG);
    this.#delayed.schedule(key, this.#clock.now() + ms);
    this.#arm();
  }

  /**
   * Waits for a key and marks it in flight; pass it to {@link done} when
   * finished. Resolves to `undefined` once the queue shuts down.
   *
   * @throws the signal's reason when `signal` aborts first.
   */
  get(signal?: AbortSignal): Promise<K | undefined> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#shuttingDown) return Promise.resolve(undefined);
    if (this.len > 0) return Promise.resolve(this.#take(this.#next()));
    return new Promise<K | undefined>((resolve, reject) => {
      const onAbort = () => {
        this.#getters.delete(getter);
        reject(signal?.reason);
      };
      const getter: Getter<K> = {
        resolve: (key) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(key);
        },
      };
      this.#getters.add(getter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * Ends the worker's hold on `key`. If the key was added meanwhile, it is
   * queued again now.
   *
   * @throws {RangeError} when `key` is not in flight (never taken, or done twice).
   */
  done(key: K): void {
    const takenAt = this.#processing.get(key);
    if (takenAt === undefined) {
      throw new RangeError(
        `Cannot mark ${String(key)} done: it is not in flight (call done once per key from get)`,
      );
    }
    this.#processing.delete(key);
    this.#metrics?.finished((this.#clock.now() - takenAt) / 1000);
    if (this.#dirty.has(key) && !this.#shuttingDown) this.#enqueue(key);
  }

  /**
   * Sorts every waiting key into a lane again, missed where `missed` says
   * so and backlog otherwise, each lane in the order its keys became dirty:
   * for a controller that starts with keys queued while it stood by, most
   * of them changes its predecessor already served. Keys in flight keep
   * their lane.
   */
  relane(missed: (key: K) => boolean): void {
    const waiting = [...this.#dirty].filter(([key]) => !this.#processing.has(key))
      .sort((a, b) => a[1] - b[1]);
    for (const lane of this.#lanes) lane.clear();
    for (const [key] of waiting) {
      const lane = missed(key) ? 1 : BACKLOG_LANE;
      this.#laneOf.set(key, lane);
      this.#lanes[lane].push(key);
    }
  }

  /**
   * Stops the queue: later adds are ignored, waiting and delayed keys are
   * dropped, and every blocked or later {@link get} returns `undefined`.
   * Workers still call {@link done} for keys they hold.
   */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    this.#timer?.cancel.abort();
    this.#timer = undefined;
    this.#delayed.clear();
    this.#dirty.clear();
    this.#laneOf.clear();
    for (const lane of this.#lanes) lane.clear();
    for (const getter of this.#getters) getter.resolve(undefined);
    this.#getters.clear();
  }

  /** Puts a dirty, not-processing `key` in its lane, or hands it to a waiting worker. */
  #enqueue(key: K): void {
    const getter = this.#getters.values().next();
    if (getter.done) {
      this.#lanes[this.#laneOf.get(key) ?? FRESH_LANE].push(key);
      return;
    }
    this.#getters.delete(getter.value);
    getter.value.resolve(this.#take(key));
  }

  /** Moves a dirty key from lane `from` to the lane `to` ahead of it; its old entry goes stale. */
  #promote(key: K, from: LaneIndex, to: LaneIndex): void {
    this.#laneOf.set(key, to);
    if (this.#processing.has(key)) return;
    this.#lanes[from].size--;
    this.#lanes[to].push(key);
  }

  /** The next waiting key by the lanes' rule; call only when `len > 0`. */
  #next(): K {
    const [fresh, missed, backlog] = this.#lanes;
    const behind = missed.size > 0 ? 1 : backlog.size > 0 ? BACKLOG_LANE : undefined;
    if (behind !== undefined && (fresh.size === 0 || this.#freshStreak >= BACKLOG_SHARE - 1)) {
      this.#freshStreak = 0;
      return this.#lanes[behind].shift((key) =>
        this.#laneOf.get(key) === behind && !this.#processing.has(key)
      ) as K;
    }
    if (behind !== undefined) this.#freshStreak++;
    return fresh.shift(() => true) as K;
  }

  #take(key: K): K {
    const now = this.#clock.now();
    const addedAt = this.#dirty.get(key) ?? now;
    this.#dirty.delete(key);
    this.#laneOf.delete(key);
    this.#processing.set(key, now);
    this.#metrics?.taken((now - addedAt) / 1000);
    return key;
  }

  /** Keeps exactly one timer pending, due when the earliest delayed key is. */
  #arm(): void {
    const at = this.#delayed.nextAt;
    if (at === undefined || (this.#timer && this.#timer.at <= at)) return;
    this.#timer?.cancel.abort();
    const timer = { at, cancel: new AbortController() };
    this.#timer = timer;
    this.#clock.sleep(at - this.#clock.now(), timer.cancel.signal).then(() => {
      if (this.#timer !== timer) return;
      this.#timer = undefined;
      for (const key of this.#delayed.popDue(this.#clock.now())) this.add(key, BACKLOG);
      this.#arm();
    }, () => {});
  }

  #snapshot(): QueueSnapshot {
    const now = this.#clock.now();
    let unfinished = 0;
    let longest = 0;
    for (const takenAt of this.#processing.values()) {
      unfinished += now - takenAt;
      longest = Math.max(longest, now - takenAt);
    }
    return {
      depth: this.#dirty.size,
      unfinishedSeconds: unfinished / 1000,
      longestRunningSeconds: longest / 1000,
    };
  }
}
