/**
 * A manager's memory limit kept: the budget each cache starts with, and the
 * {@link MemoryGovernor} that moves every cache's share (cache_shares.ts)
 * and the reconcile permits with the pressure, as the {@link MemoryPlan}
 * says.
 *
 * What the caller must know:
 *
 * - A cache starts budgeted as if its primary were the only one
 *   ({@link MemoryKeeper.startBudgets}): the shares among all of them are
 *   known only once every controller is added, and are set when
 *   {@link MemoryKeeper.run} starts.
 * - The permits move through the `concurrency` callback, so that the
 *   runtime's one home of the pace (lib/runtime/scheduling/permits.ts) holds
 *   them; this module only says how many.
 *
 * @example
 * ```ts
 * import { MemoryKeeper } from "./keeper.ts";
 * import { memoryPlan } from "./plan.ts";
 * const keeper = new MemoryKeeper(memoryPlan(64 * 2 ** 20), {
 *   concurrency: () => {},
 *   caches: () => ({ entries: () => [] }),
 *   primaries: () => [],
 * });
 * keeper.startBudgets().primary.maxBytes; // 8388608: an eighth of the limit
 * ```
 *
 * @module
 */
import type { Clock } from "../../async/clock.ts";
import type { StoreBudget } from "../cache/budget.ts";
import { type Budgeted, type CacheShares, cacheShares, limitCaches } from "./cache_shares.ts";
import { MemoryGovernor, type MemoryStats, v8Collect } from "./governor.ts";
import type { MemoryLevel, MemoryPlan } from "./plan.ts";

/** A cache whose budget the keeper sets: a reflector. */
export interface BudgetedCache extends Budgeted {
  /** Whether the cache was given a budget, which only an owned kind's may lack. */
  readonly store: { readonly budgeted: boolean };
}

/** What a {@link MemoryKeeper} acts on. */
export interface MemoryKeeperOptions {
  /** Sets how many reconciles may run at once across all controllers. */
  concurrency(permits: number): void;
  /** Every cache; those budgeted that are no primary are the owned kinds'. */
  caches(): { entries(): readonly { reflector: BudgetedCache }[] };
  /** The primary caches, one per controller. */
  primaries(): readonly BudgetedCache[];
  /** The budget of each primary cache a level only ever narrows. Defaults to none. */
  budget?: StoreBudget | undefined;
  /** Times the governor's samples. Defaults to the governor's. */
  clock?: Clock;
}

/** Keeps a manager under its memory limit; see the module documentation. */
export class MemoryKeeper {
  /** The sizes per level. */
  readonly plan: MemoryPlan;
  readonly #options: MemoryKeeperOptions;
  readonly #governor: MemoryGovernor;

  /** Plans for `plan`; nothing is sampled before {@link MemoryKeeper.run}. */
  constructor(plan: MemoryPlan, options: MemoryKeeperOptions) {
    this.plan = plan;
    this.#options = options;
    this.#governor = new MemoryGovernor({
      limitBytes: plan.limitBytes,
      plan,
      ...(options.clock && { clock: options.clock }),
      actions: {
        cacheBytes: (bytes, level) => this.#limit(bytes, level),
        concurrency: options.concurrency,
        collect: v8Collect() ?? (() => {}),
      },
    });
  }

  /** The budgets a controller's primary and owned caches start with. */
  startBudgets(): CacheShares {
    const counts = { primaries: 1, owned: 0 };
    return cacheShares(this.plan.cacheBytes.normal, "normal", counts, this.#options.budget);
  }

  /** The limit, level, last RSS and moves so far. */
  stats(): MemoryStats {
    return this.#governor.stats();
  }

  /** Shares the current level's bytes among every cache, then samples RSS until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const level = this.#governor.level;
    this.#limit(this.plan.cacheBytes[level], level);
    await this.#governor.run(signal);
  }

  #limit(totalBytes: number, level: MemoryLevel): void {
    const primaries = new Set(this.#options.primaries());
    const owned = this.#options.caches().entries().map((e) => e.reflector)
      .filter((cache) => cache.store.budgeted && !primaries.has(cache));
    limitCaches({ primaries: [...primaries], owned }, totalBytes, level, this.#options.budget);
  }
}
