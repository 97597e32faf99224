/**
 * Keeps a process under its memory limit: samples resident memory on a
 * timer, moves between the levels of {@link MemoryPlan} (`normal` → `evict`
 * → `slow` and back, see plan.ts) and, on each move, tells its
 * {@link MemoryActions} the cache budget and concurrency of the new level.
 *
 * What the caller must know:
 *
 * - Degrading trades latency and API calls for memory, never correctness:
 *   the caches keep every key and read evicted objects back live, and a
 *   smaller concurrency leaves queued keys queued.
 * - Every move is logged once, as it happens, with RSS, the limit and what
 *   changed; samples that change nothing log nothing.
 * - While at `evict` or `slow`, a full garbage collection is asked for on
 *   entering, then whenever V8's heap has grown by `collectGrowthBytes` since
 *   the last one (a burst's garbage, before V8 would collect it itself), and
 *   at least once per `collectIntervalMs`; never more than once a sample. It
 *   gives back the pages that evicted objects and garbage held, and costs a
 *   pause.
 *
 * @example
 * ```ts
 * import { MemoryGovernor } from "./governor.ts";
 * let rss = 40 * 2 ** 20;
 * const budgets: number[] = [];
 * const governor = new MemoryGovernor({
 *   limitBytes: 64 * 2 ** 20,
 *   rss: () => rss,
 *   actions: { cacheBytes: (b) => budgets.push(b), concurrency: () => {}, collect: () => {} },
 * });
 * governor.sample(); // "normal"
 * rss = 55 * 2 ** 20;
 * governor.sample(); // "evict", and budgets is [2097152]
 * ```
 *
 * @module
 */
import { type Clock, every, systemClock } from "../../async/clock.ts";
import { logger } from "../../log.ts";
import { MEMORY_LEVELS, type MemoryLevel, type MemoryPlan, memoryPlan, nextLevel } from "./plan.ts";

/** What the governor changes as it moves between levels. */
export interface MemoryActions {
  /** Caps the estimated bytes of full objects the caches together keep at `level`, the new one. */
  cacheBytes(bytes: number, level: MemoryLevel): void;
  /** Sets how many reconciles may run at once across all controllers. */
  concurrency(permits: number): void;
  /** Runs a full garbage collection that gives emptied pages back. */
  collect(): void;
}

/** Options of {@link MemoryGovernor}. */
export interface MemoryGovernorOptions {
  /** The limit to stay under, in bytes. */
  limitBytes: number;
  /** What changes with the level. */
  actions: MemoryActions;
  /** The sizes per level. Defaults to `memoryPlan(limitBytes)`. */
  plan?: MemoryPlan;
  /** Reads resident memory in bytes. Defaults to `Deno.memoryUsage().rss`. */
  rss?: () => number;
  /** Reads V8's committed heap in bytes. Defaults to `Deno.memoryUsage().heapTotal`. */
  heapBytes?: () => number;
  /** Times the samples and the collections. Defaults to {@link systemClock}. */
  clock?: Clock;
  /**
   * Time between samples, in ms.
   *
   * @default {1000}
   */
  intervalMs?: number;
  /**
   * Least time between two full collections under pressure, in ms.
   *
   * @default {10000}
   */
  collectIntervalMs?: number;
  /**
   * Growth of V8's heap since the last collection that makes the next sample
   * under pressure collect at once, in bytes.
   *
   * @default a thirty-second of the limit
   */
  collectGrowthBytes?: number;
}

/** The governor's state, for metrics. */
export interface MemoryStats {
  /** The limit, in bytes. */
  limitBytes: number;
  /** The current level. */
  level: MemoryLevel;
  /** RSS at the last sample, in bytes; 0 before the first. */
  rssBytes: number;
  /** Moves into each level since the governor was created. */
  transitions: Readonly<Record<MemoryLevel, number>>;
}

/** Samples RSS and degrades or relaxes; see the module documentation. */
export class MemoryGovernor {
  /** The sizes per level. */
  readonly plan: MemoryPlan;
  readonly #actions: MemoryActions;
  readonly #rss: () => number;
  readonly #heapBytes: () => number;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #collectIntervalMs: number;
  readonly #collectGrowthBytes: number;
  readonly #transitions: Record<MemoryLevel, number> = { normal: 0, evict: 0, slow: 0 };
  readonly #log = logger("memory");
  #level: MemoryLevel = "normal";
  #rssBytes = 0;
  /** When the last collection under pressure ran; unset when none has since pressure began. */
  #collectedAt: number | undefined;
  /** V8's heap after the last collection under pressure. */
  #heapAfterCollect = 0;

  /**
   * Checks the options; nothing is sampled before {@link MemoryGovernor.sample}
   * or {@link MemoryGovernor.run}.
   *
   * @throws {RangeError} when `limitBytes` is not a positive integer, or
   * `intervalMs`, `collectIntervalMs` or `collectGrowthBytes` is not positive.
   */
  constructor(options: MemoryGovernorOptions) {
    for (const name of ["intervalMs", "collectIntervalMs", "collectGrowthBytes"] as const) {
      const value = options[name];
      if (value !== undefined && !(value > 0)) {
        throw new RangeError(
          `Cannot create the memory governor: '${name}' must be positive, got ${value}`,
        );
      }
    }
    this.plan = options.plan ?? memoryPlan(options.limitBytes);
    this.#actions = options.actions;
    this.#rss = options.rss ?? (() => Deno.memoryUsage().rss);
    this.#heapBytes = options.heapBytes ?? (() => Deno.memoryUsage().heapTotal);
    this.#clock = options.clock ?? systemClock;
    this.#intervalMs = options.intervalMs ?? 1000;
    this.#collectIntervalMs = options.collectIntervalMs ?? 10_000;
    this.#collectGrowthBytes = options.collectGrowthBytes ?? this.plan.limitBytes / 32;
  }

  /** The current level. */
  get level(): MemoryLevel {
    return this.#level;
  }

  /** The limit, level, last RSS and moves so far. */
  stats(): MemoryStats {
    return {
      limitBytes: this.plan.limitBytes,
      level: this.#level,
      rssBytes: this.#rssBytes,
      transitions: { ...this.#transitions },
    };
  }

  /** Samples RSS every `intervalMs` until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await every(this.#clock, this.#intervalMs, signal, () => void this.sample());
  }

  /**
   * Reads RSS once, moves at most one level, acts on a move, and collects
   * when under pressure and the heap has grown or the last collection is old
   * enough.
   *
   * @returns the level after the sample.
   */
  sample(): MemoryLevel {
    const rss = this.#rss();
    this.#rssBytes = rss;
    const from = this.#level;
    const to = nextLevel(from, rss / this.plan.limitBytes, this.plan);
    if (to !== from) this.#move(from, to, rss);
    if (to === "normal") {
      this.#collectedAt = undefined;
    } else {
      const now = this.#clock.now();
      if (
        this.#collectedAt === undefined ||
        now - this.#collectedAt >= this.#collectIntervalMs ||
        this.#heapBytes() - this.#heapAfterCollect >= this.#collectGrowthBytes
      ) {
        this.#collectedAt = now;
        this.#actions.collect();
        this.#heapAfterCollect = this.#heapBytes();
      }
    }
    return to;
  }

  #move(from: MemoryLevel, to: MemoryLevel, rss: number): void {
    this.#level = to;
    this.#transitions[to]++;
    const rising = MEMORY_LEVELS.indexOf(to) > MEMORY_LEVELS.indexOf(from);
    // A step up collects at once, whenever the last collection ran.
    if (rising) this.#collectedAt = undefined;
    const cacheBytes = this.plan.cacheBytes[to];
    const concurrency = this.plan.concurrency[to];
    this.#actions.cacheBytes(cacheBytes, to);
    this.#actions.concurrency(concurrency);
    const log = rising ? this.#log.warn : this.#log.info;
    log(
      "memory pressure {from} → {to}: RSS {rssMiB} MiB of the {limitMiB} MiB limit " +
        "({percent}%); caches now keep {cacheMiB} MiB of full objects together, " +
        "{concurrency} reconciles at once",
      {
        from,
        to,
        rssMiB: mebibytes(rss),
        limitMiB: mebibytes(this.plan.limitBytes),
        percent: Math.round((rss / this.plan.limitBytes) * 100),
        cacheMiB: mebibytes(cacheBytes),
        concurrency,
      },
    );
  }
}

/** Mebibytes to one decimal, for log lines. */
function mebibytes(bytes: number): number {
  return Math.round(bytes / 2 ** 20 * 10) / 10;
}

/**
 * V8's full collection that gives emptied pages back, or `undefined` when
 * `gc` is not exposed (kinglet's V8 flags expose it).
 */
export function v8Collect(): (() => void) | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== "function") return undefined;
  // "last-resort" collects until nothing more is freed and gives emptied
  // pages back; a plain gc() keeps them committed for the next allocations.
  return () => gc({ type: "major", execution: "sync", flavor: "last-resort" });
}
