/**
 * What a memory limit buys: the sizes the runtime gives what grows (the
 * caches' budget, list pages, reconciles at once) at each level of
 * memory pressure, and the rule that moves between the levels as resident
 * memory rises and falls. Pure: the {@link MemoryGovernor} samples and acts.
 *
 * The levels, in the order the runtime degrades:
 *
 * | level    | entered at RSS ≥ | left below | caches hold                | reconciles at once |
 * | -------- | ---------------: | ---------: | -------------------------- | ------------------ |
 * | `normal` |                  |            | limit / 8 (estimated)      | the configured max |
 * | `evict`  | 80% of the limit |        70% | limit / 32, then a full GC | the configured max |
 * | `slow`   | 90% of the limit |        80% | limit / 64, then a full GC | a quarter of it    |
 *
 * At `normal` the primary caches share their bytes and each owned kind's
 * cache may keep as much on its own; under pressure every cache shares them.
 * The Event recorder remembers one series (and one object's rate limit) per
 * 64 KiB of the limit, between 256 and client-go's 4,096, at every level.
 *
 * A level is entered and left one step per sample, so the runtime always
 * evicts before it slows down, and the ten-point gap between entering and
 * leaving keeps it from flapping at a threshold.
 *
 * @example
 * ```ts
 * import { memoryPlan, nextLevel } from "./plan.ts";
 * const plan = memoryPlan(64 * 2 ** 20);
 * plan.cacheBytes.evict; // 2097152: 2 MiB of full objects across the caches
 * nextLevel("normal", 0.85); // "evict"
 * nextLevel("evict", 0.75); // "evict": not yet below 70%
 * ```
 *
 * @module
 */

/** How hard the runtime is saving memory, from none to most. */
export type MemoryLevel = "normal" | "evict" | "slow";

/** The levels in the order the runtime degrades through them. */
export const MEMORY_LEVELS: readonly MemoryLevel[] = ["normal", "evict", "slow"];

/** Sizes derived from a memory limit; see the module documentation. */
export interface MemoryPlan {
  /** The limit the plan was made for, in bytes. */
  limitBytes: number;
  /** Estimated bytes of full objects the caches keep, per level (see the module documentation). */
  cacheBytes: Readonly<Record<MemoryLevel, number>>;
  /** Reconciles running at once across all controllers, per level. */
  concurrency: Readonly<Record<MemoryLevel, number>>;
  /** Objects asked for per list page (`limit`) and per streamed batch. */
  pageSize: number;
  /** Event series and per-object rate limits the Event recorder remembers. */
  eventsTracked: number;
  /** Share of the limit at which RSS enters each level. */
  enter: Readonly<Record<MemoryLevel, number>>;
  /** Share of the limit below which RSS leaves each level for the one beneath. */
  leave: Readonly<Record<MemoryLevel, number>>;
}

/** RSS shares at which a level is entered; `normal` is where every process starts. */
const ENTER: Record<MemoryLevel, number> = { normal: 0, evict: 0.8, slow: 0.9 };
/** RSS shares below which a level is left: ten points under entering it. */
const LEAVE: Record<MemoryLevel, number> = { normal: 0, evict: 0.7, slow: 0.8 };

/** The watcher's own page size, which a limit only ever lowers. */
const MAX_PAGE_SIZE = 500;
/** Fewer objects a page would make a relist of thousands a crawl of requests. */
const MIN_PAGE_SIZE = 50;
/** A page of objects of a few KiB each stays around 1% of the limit. */
const LIMIT_BYTES_PER_PAGED_OBJECT = 256 * 2 ** 10;
/** Each reconcile in flight holds responses and the objects it builds. */
const LIMIT_BYTES_PER_RECONCILE = 8 * 2 ** 20;
/** A remembered Event series costs about 400 bytes: 1/160 of the limit at most. */
const LIMIT_BYTES_PER_EVENT_SERIES = 64 * 2 ** 10;
/** client-go's own number of series and spam-filter buckets; a limit only ever lowers it. */
const MAX_EVENTS_TRACKED = 4_096;
/** Fewer would split the series of a few hundred objects reconciled together. */
const MIN_EVENTS_TRACKED = 256;

/**
 * The sizes for `limitBytes`, with at most `maxConcurrentReconciles` at
 * once (the manager's own limit): see the table in the module documentation.
 * A page holds one object per 256 KiB of the limit, between 50 and 500; the
 * configured concurrency is kept up to one reconcile per 8 MiB of the limit;
 * the Event recorder remembers one series per 64 KiB, between 256 and 4,096.
 *
 * @throws {RangeError} when `limitBytes` or `maxConcurrentReconciles` is not
 * a positive integer.
 *
 * @example
 * ```ts
 * import { memoryPlan } from "./plan.ts";
 * const plan = memoryPlan(2 ** 30, 8);
 * [plan.concurrency.normal, plan.concurrency.slow, plan.pageSize]; // [8, 2, 500]
 * memoryPlan(64 * 2 ** 20).eventsTracked; // 1024
 * ```
 */
export function memoryPlan(limitBytes: number, maxConcurrentReconciles = 8): MemoryPlan {
  const refuse = (name: string, value: number) =>
    new RangeError(
      `Cannot plan for a memory limit: '${name}' must be a positive integer, got ${value}`,
    );
  if (!Number.isSafeInteger(limitBytes) || limitBytes < 1) throw refuse("limitBytes", limitBytes);
  if (!Number.isSafeInteger(maxConcurrentReconciles) || maxConcurrentReconciles < 1) {
    throw refuse("maxConcurrentReconciles", maxConcurrentReconciles);
  }
  const normal = Math.max(
    1,
    Math.min(maxConcurrentReconciles, Math.floor(limitBytes / LIMIT_BYTES_PER_RECONCILE)),
  );
  const pageSize = Math.floor(limitBytes / LIMIT_BYTES_PER_PAGED_OBJECT);
  const eventsTracked = Math.floor(limitBytes / LIMIT_BYTES_PER_EVENT_SERIES);
  return {
    limitBytes,
    cacheBytes: {
      normal: Math.max(1, Math.floor(limitBytes / 8)),
      evict: Math.max(1, Math.floor(limitBytes / 32)),
      slow: Math.max(1, Math.floor(limitBytes / 64)),
    },
    concurrency: { normal, evict: normal, slow: Math.max(1, Math.ceil(normal / 4)) },
    pageSize: Math.min(MAX_PAGE_SIZE, Math.max(MIN_PAGE_SIZE, pageSize)),
    eventsTracked: Math.min(MAX_EVENTS_TRACKED, Math.max(MIN_EVENTS_TRACKED, eventsTracked)),
    enter: ENTER,
    leave: LEAVE,
  };
}

/**
 * The level after a sample of `rssShare` (resident memory over the limit)
 * taken at `level`: one step up when the share reached the next level's
 * entry, one step down when it fell below the current level's exit, else the
 * same level.
 *
 * @example
 * ```ts
 * import { nextLevel } from "./plan.ts";
 * nextLevel("normal", 0.95); // "evict": eviction comes first, even in a jump
 * nextLevel("evict", 0.95); // "slow"
 * nextLevel("slow", 0.5); // "evict": one step a sample on the way down too
 * ```
 */
export function nextLevel(
  level: MemoryLevel,
  rssShare: number,
  plan: Pick<MemoryPlan, "enter" | "leave"> = { enter: ENTER, leave: LEAVE },
): MemoryLevel {
  const i = MEMORY_LEVELS.indexOf(level);
  const up = MEMORY_LEVELS[i + 1];
  if (up !== undefined && rssShare >= plan.enter[up]) return up;
  if (i > 0 && rssShare < plan.leave[level]) return MEMORY_LEVELS[i - 1]!;
  return level;
}
