/**
 * What a manager's controllers share of the pace: the reconcile permits
 * every controller draws from, how many there are at each level of memory
 * pressure, and the bucket every retry takes a token of.
 *
 * What the caller must know:
 *
 * - Every reconcile of every controller holds one of the
 *   {@link SharedPermits.semaphore}'s permits while it runs; a controller
 *   with a limit of its own takes its own slot first (runner.ts).
 * - Under a memory limit there are as many permits as the limit allows:
 *   its {@link SharedPermits.plan} (lib/runtime/memory/plan.ts) keeps the
 *   configured number up to one per 8 MiB, and the memory governor
 *   {@link SharedPermits.resize}s them as the level of memory pressure
 *   moves, to a quarter of them at `slow`. Permits held when they shrink
 *   are kept until their reconciles end.
 * - One {@link SharedPermits.retryBucket} (client-go's 10 qps, burst 100)
 *   serves every controller, so that three controllers failing together in
 *   one outage retry at one bucket's pace, not three.
 *
 * @example
 * ```ts
 * import { SharedPermits } from "./permits.ts";
 * import { FakeClock } from "../../async/clock.ts";
 * const permits = new SharedPermits({
 *   maxConcurrentReconciles: 8,
 *   memoryLimit: 32 * 2 ** 20,
 *   clock: new FakeClock(),
 * });
 * permits.semaphore.limit; // 4: one reconcile per 8 MiB of the limit
 * permits.resize(1); // what the governor does at `slow`
 * permits.limitOf(2); // 1
 * ```
 *
 * @module
 */
import type { Clock } from "../../async/clock.ts";
import { Semaphore } from "../../async/semaphore.ts";
import type { ObjectKey } from "../../kube/types.ts";
import { type MemoryPlan, memoryPlan } from "../memory/plan.ts";
import { TokenBucketRateLimiter } from "./rate_limiter.ts";

/** Options of {@link SharedPermits}. */
export interface SharedPermitsOptions {
  /** Reconciles running at once across all controllers, at most. Defaults to 8. */
  maxConcurrentReconciles?: number;
  /** Bytes of resident memory to stay under, when there is a limit. Defaults to none. */
  memoryLimit?: number;
  /** Paces the retry bucket. */
  clock: Clock;
}

/** The permits and the retry bucket a manager's controllers share; see the module documentation. */
export class SharedPermits {
  /** The permits every reconcile holds while it runs. */
  readonly semaphore: Semaphore;
  /** Every retry of every controller waits for a token of it. */
  readonly retryBucket: TokenBucketRateLimiter<ObjectKey>;
  /** What the memory limit allows at each level; absent without a limit. */
  readonly plan: MemoryPlan | undefined;

  /**
   * Sizes the permits for the `normal` level.
   *
   * @throws {RangeError} when `maxConcurrentReconciles` or `memoryLimit` is
   * not a positive integer.
   */
  constructor(options: SharedPermitsOptions) {
    const max = options.maxConcurrentReconciles ?? 8;
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(
        `Cannot create the manager: 'maxConcurrentReconciles' must be a positive integer, got ${max}`,
      );
    }
    const limit = options.memoryLimit;
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) {
      throw new RangeError(
        `Cannot create the manager: 'memoryLimit' must be a positive integer of bytes, got ${limit}`,
      );
    }
    this.plan = limit === undefined ? undefined : memoryPlan(limit, max);
    this.semaphore = new Semaphore(this.plan?.concurrency.normal ?? max);
    this.retryBucket = new TokenBucketRateLimiter(options.clock);
  }

  /** What a controller whose own limit is `own` may really run at once: the smaller limit. */
  limitOf(own: number | undefined): number {
    const shared = this.semaphore.limit;
    return Math.min(own ?? shared, shared);
  }

  /** Sets how many permits there are, as a memory limit's level allows. */
  resize(permits: number): void {
    this.semaphore.resize(permits);
  }
}
