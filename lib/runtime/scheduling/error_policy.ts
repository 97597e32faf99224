/**
 * What a controller does when a reconcile throws: an {@link ErrorPolicy}
 * maps the error and the key's attempt number to a delay before the next
 * try, or to `"terminal"` (not retried until the object changes).
 *
 * A controller without a policy backs off as client-go's controllers do:
 * per key, exponentially from 5 ms to 1000 s (rate_limiter.ts), beside the
 * retry bucket of 10 a second that every retry waits for either way. The ready-made policies here are the shapes operators ask for
 * most: {@link fixedErrorPolicy} (always the same pause) and
 * {@link tieredErrorPolicy} (a short list of growing pauses). Either way a
 * success resets the attempt count.
 *
 * Inside a controller a policy is a rate limiter ({@link ErrorPolicyRateLimiter}):
 * it counts a key's failures and forgets them on success, as client-go's
 * rate limiters do, and sees the error besides.
 *
 * @example
 * ```ts
 * import { tieredErrorPolicy } from "./error_policy.ts";
 * const policy = tieredErrorPolicy();
 * policy(new Error("boom"), 1); // 30000
 * policy(new Error("boom"), 9); // 600000
 * ```
 *
 * @module
 */

/**
 * Decides how long a key waits after its `attempt`-th failure in a row
 * (counted from 1, reset by a success), in milliseconds; or `"terminal"`
 * to stop retrying until the object changes, as a `TerminalError` does.
 */
export type ErrorPolicy = (error: unknown, attempt: number) => number | "terminal";

/**
 * Waits `ms` after every failure, however many came before.
 *
 * @example
 * ```ts
 * import { fixedErrorPolicy } from "./error_policy.ts";
 * fixedErrorPolicy(10_000)(new Error("boom"), 3); // 10000
 * ```
 *
 * @throws {RangeError} when `ms` is negative or not finite.
 */
export function fixedErrorPolicy(ms: number): ErrorPolicy {
  if (!(ms >= 0) || !Number.isFinite(ms)) {
    throw new RangeError(
      `Cannot create the error policy: 'ms' must be a finite number >= 0, got ${ms}`,
    );
  }
  return () => ms;
}

/** The tiers of {@link tieredErrorPolicy}: 30 s, 2 min, 5 min, then 10 min. */
export const DEFAULT_TIERS_MS: readonly number[] = [30_000, 120_000, 300_000, 600_000];

/**
 * Waits `tiersMs[attempt - 1]`, staying on the last tier once past it: a
 * failing object is looked at again soon, then less and less often, and a
 * success starts it over from the first tier.
 *
 * @example
 * ```ts
 * import { tieredErrorPolicy } from "./error_policy.ts";
 * const policy = tieredErrorPolicy([1_000, 5_000]);
 * policy(new Error("boom"), 1); // 1000
 * policy(new Error("boom"), 2); // 5000
 * policy(new Error("boom"), 3); // 5000
 * ```
 *
 * @throws {RangeError} when `tiersMs` is empty or holds a negative or non-finite delay.
 */
export function tieredErrorPolicy(tiersMs: readonly number[] = DEFAULT_TIERS_MS): ErrorPolicy {
  if (tiersMs.length === 0 || tiersMs.some((ms) => !(ms >= 0) || !Number.isFinite(ms))) {
    throw new RangeError(
      `Cannot create the error policy: 'tiersMs' must hold finite delays >= 0, got [${tiersMs}]`,
    );
  }
  const tiers = [...tiersMs];
  return (_error, attempt) => tiers[Math.min(Math.max(attempt, 1), tiers.length) - 1]!;
}

/**
 * How long a failed key waits, in a rate limiter's shape (client-go's
 * `when`, `forget`, `numRequeues`) with the error besides the key. A plain
 * `RateLimiter` is one that ignores the error.
 *
 * Call {@link FailureRateLimiter.forget} when a key succeeds, or its failures
 * are counted forever and its next failure waits needlessly long.
 */
export interface FailureRateLimiter<K> {
  /**
   * Counts a failure of `key` with `error`; resolves to the milliseconds
   * before its retry, or `"terminal"` to retry only once the object changes.
   */
  when(key: K, error: unknown): number | "terminal";
  /** Drops `key`'s failures; its next failure counts from 1. */
  forget(key: K): void;
  /** Failures of `key` since it was last forgotten. */
  numRequeues(key: K): number;
}

/**
 * An {@link ErrorPolicy} as a {@link FailureRateLimiter}: it keeps each
 * failing key's attempt count (one number, dropped by `forget`) and asks the
 * policy with the error and that count.
 *
 * @example
 * ```ts
 * import { ErrorPolicyRateLimiter, tieredErrorPolicy } from "./error_policy.ts";
 * const limiter = new ErrorPolicyRateLimiter<string>(tieredErrorPolicy([1_000, 5_000]));
 * limiter.when("ns/a", new Error("boom")); // 1000
 * limiter.when("ns/a", new Error("boom")); // 5000
 * limiter.forget("ns/a");
 * limiter.when("ns/a", new Error("boom")); // 1000
 * ```
 */
export class ErrorPolicyRateLimiter<K> implements FailureRateLimiter<K> {
  readonly #policy: ErrorPolicy;
  /** Failures in a row per key; a key leaves on forget. */
  readonly #failures = new Map<K, number>();

  /** Wraps `policy`. */
  constructor(policy: ErrorPolicy) {
    this.#policy = policy;
  }

  when(key: K, error: unknown): number | "terminal" {
    const attempt = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, attempt);
    return this.#policy(error, attempt);
  }

  forget(key: K): void {
    this.#failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.#failures.get(key) ?? 0;
  }
}
