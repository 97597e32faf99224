/**
 * Gives back the memory a finished burst took. V8 starts a full collection
 * when its old generation grows, not when objects are dropped: once a burst
 * of large objects has been deleted and kinglet falls idle, nothing allocates
 * enough to start one, so their garbage, and the pages it holds, can stay for
 * good. {@link HeapRelease} asks V8 for one full collection when its heap has
 * grown by `minGrowthBytes` since the last one (or since it was smallest) and
 * no reconcile is queued or running, and once when it first finds kinglet
 * idle: what start-up left (the kubeconfig, the first lists, the CRD check)
 * is garbage by then, and an idle operator starts no collection of its own
 * (about 0.4 MiB of resident memory at idle). {@link HeapRelease.run} checks
 * every `intervalMs` (5 s) while the controllers run.
 *
 * @example
 * ```ts
 * import { HeapRelease } from "./heap_release.ts";
 * let heap = 14_000_000;
 * let collections = 0;
 * const release = new HeapRelease({
 *   heapBytes: () => heap,
 *   idle: () => true,
 *   collect: () => {
 *     collections++;
 *     heap = 15_000_000;
 *   },
 * });
 * release.check(); // true: the first idle check collects start-up's garbage
 * release.check(); // false: the heap has not grown since
 * heap = 28_000_000;
 * release.check(); // true, and collections is 2
 * ```
 *
 * @module
 */
import { type Clock, every, systemClock } from "../../async/clock.ts";
import { v8Collect } from "../memory/governor.ts";

/** Options of {@link HeapRelease}. */
export interface HeapReleaseOptions {
  /** V8's committed heap, e.g. `Deno.memoryUsage().heapTotal`. */
  heapBytes: () => number;
  /** True when no reconcile is queued or running. */
  idle: () => boolean;
  /**
   * Runs a full collection. Defaults to V8's `gc`, which exists only under
   * `--expose-gc` (in kinglet's V8 flags); without it nothing is collected.
   */
  collect?: () => void;
  /** How far the heap must have grown to be worth a collection. Defaults to 2 MiB. */
  minGrowthBytes?: number;
  /** Time between two checks of {@link HeapRelease.run}, in ms. Defaults to 5 000. */
  intervalMs?: number;
  /** Times the checks. Defaults to {@link systemClock}. */
  clock?: Clock;
}

/** Decides when the heap is worth a full collection; see the module documentation. */
export class HeapRelease {
  readonly #heapBytes: () => number;
  readonly #idle: () => boolean;
  readonly #collect: (() => void) | undefined;
  readonly #minGrowthBytes: number;
  readonly #intervalMs: number;
  readonly #clock: Clock;
  /** The heap after the last collection, or its smallest size since; unset before the first check. */
  #level?: number;
  /** Whether the collection after start-up happened. */
  #collected = false;

  /** @throws {RangeError} when `minGrowthBytes` or `intervalMs` is not a positive number. */
  constructor(options: HeapReleaseOptions) {
    const minGrowthBytes = options.minGrowthBytes ?? 2 * 2 ** 20;
    const intervalMs = options.intervalMs ?? 5_000;
    for (const [name, value] of [["minGrowthBytes", minGrowthBytes], ["intervalMs", intervalMs]]) {
      if (!(Number(value) > 0)) {
        throw new RangeError(
          `Cannot create the heap release: '${name}' must be positive, got ${value}`,
        );
      }
    }
    this.#heapBytes = options.heapBytes;
    this.#idle = options.idle;
    this.#collect = options.collect ?? v8Collect();
    this.#minGrowthBytes = minGrowthBytes;
    this.#intervalMs = intervalMs;
    this.#clock = options.clock ?? systemClock;
  }

  /** Checks every `intervalMs` until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await every(this.#clock, this.#intervalMs, signal, () => void this.check());
  }

  /**
   * Samples the heap; collects when kinglet is idle and the heap is
   * `minGrowthBytes` above its level or was never collected, then takes the
   * size after the collection as the level.
   *
   * @returns whether it collected.
   */
  check(): boolean {
    const heap = this.#heapBytes();
    if (this.#level === undefined || heap < this.#level) this.#level = heap;
    if (!this.#collect || !this.#idle()) return false;
    if (this.#collected && heap - this.#level < this.#minGrowthBytes) return false;
    this.#collect();
    this.#collected = true;
    this.#level = this.#heapBytes();
    return true;
  }
}
