/**
 * A memory limit kept: the {@link MemoryGovernor} samples resident memory and
 * degrades in a fixed order as it nears the limit (first the caches, owned
 * kinds' too, evict down to a tighter budget, with full garbage collections;
 * then fewer reconciles run at once), relaxing again with hysteresis as it falls;
 * {@link memoryPlan} sizes what grows from the limit; {@link cacheShares}
 * divides the caches' bytes among them (each store keeps its budget with
 * cache/budget.ts: limits, eviction, read-back); and
 * {@link cgroupMemoryLimit} reads the container's limit, the usual default;
 * {@link parseMemoryLimit} reads one as a person writes it (`64Mi`, `none`).
 * A manager given `memoryLimit` wires all of it through a {@link MemoryKeeper};
 * the reconcile permits the governor resizes live with the rest of the pace,
 * in lib/runtime/scheduling/permits.ts.
 *
 * No key is lost on the way: evicted objects stay indexed and are read back
 * live, and queued keys stay queued.
 *
 * @example
 * ```ts
 * import { MemoryGovernor } from "./mod.ts";
 * const permits: number[] = [];
 * const governor = new MemoryGovernor({
 *   limitBytes: 64 * 2 ** 20,
 *   rss: () => 60 * 2 ** 20, // 94% of the limit
 *   actions: { cacheBytes: () => {}, concurrency: (n) => permits.push(n), collect: () => {} },
 * });
 * governor.sample(); // "evict": evicting comes first
 * governor.sample(); // "slow"
 * if (permits.at(-1) !== 2) throw new Error("not slowed");
 * ```
 *
 * @module
 */
export { type Budgeted, type CacheShares, cacheShares, limitCaches } from "./cache_shares.ts";
export { type CgroupMemoryLimit, cgroupMemoryLimit, type CgroupReadOptions } from "./cgroup.ts";
export * from "./governor.ts";
export * from "./keeper.ts";
export { MEMORY_LIMIT_FORMS, MIN_MEMORY_LIMIT, parseMemoryLimit } from "./limit.ts";
export { type MemoryLevel, type MemoryPlan, memoryPlan } from "./plan.ts";
