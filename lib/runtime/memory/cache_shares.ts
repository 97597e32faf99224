/**
 * How a memory limit's cache bytes are shared among the caches: at
 * `normal` the primary caches share them and each owned kind's cache may
 * keep as much on its own; under pressure every cache, primary or owned,
 * gets an equal share. A budget the manager was given for each primary
 * (`ManagerOptions.budget`) still caps it: the tighter limit wins. The
 * caches evict down to their new budget at once (cache/budget.ts).
 *
 * @example
 * ```ts
 * import { cacheShares } from "./cache_shares.ts";
 * const shares = cacheShares(8 * 2 ** 20, "normal", { primaries: 2, owned: 3 });
 * shares.primary.maxBytes; // 4194304: the primaries share the 8 MiB
 * shares.owned.maxBytes; // 8388608: each owned cache may keep as much on its own
 * cacheShares(8 * 2 ** 20, "evict", { primaries: 2, owned: 2 }).owned.maxBytes; // 2097152
 * ```
 *
 * @module
 */
import type { StoreBudget } from "../cache/budget.ts";
import type { MemoryLevel } from "./plan.ts";

/** The budget of each primary cache and of each owned kind's cache. */
export interface CacheShares {
  /** Each primary cache's budget. */
  primary: StoreBudget;
  /** Each owned kind's cache's budget. */
  owned: StoreBudget;
}

/** Something whose budget can be set: a cache's reflector. */
export interface Budgeted {
  /** Changes the cache's budget, evicting down to it at once. */
  setBudget(budget: StoreBudget | undefined): void;
}

/**
 * The budgets when the caches may keep `totalBytes` together at `level`,
 * among `counts.primaries` primary and `counts.owned` owned caches; see the
 * module documentation.
 */
export function cacheShares(
  totalBytes: number,
  level: MemoryLevel,
  counts: { primaries: number; owned: number },
  own?: StoreBudget,
): CacheShares {
  const pressure = level !== "normal";
  const share = totalBytes / Math.max(1, counts.primaries + (pressure ? counts.owned : 0));
  return {
    primary: {
      ...(own?.maxObjects !== undefined && { maxObjects: own.maxObjects }),
      maxBytes: Math.max(1, Math.min(own?.maxBytes ?? Infinity, Math.floor(share))),
    },
    owned: { maxBytes: Math.max(1, Math.floor(pressure ? share : totalBytes)) },
  };
}

/** Sets every cache's budget to its share of `totalBytes` at `level`, evicting down to it. */
export function limitCaches(
  caches: { primaries: readonly Budgeted[]; owned: readonly Budgeted[] },
  totalBytes: number,
  level: MemoryLevel,
  own?: StoreBudget,
): void {
  const { primaries, owned } = caches;
  const shares = cacheShares(totalBytes, level, {
    primaries: primaries.length,
    owned: owned.length,
  }, own);
  for (const cache of primaries) cache.setBudget(shares.primary);
  for (const cache of owned) cache.setBudget(shares.owned);
}
