/**
 * Rate limiters in client-go's shape: a {@link RateLimiter} says how long a
 * key waits before its next attempt, and forgets the key once it succeeds.
 *
 * Two serve a controller's retries (retries.ts): the per-key
 * {@link ExponentialRateLimiter} (one failing object backs off on its own,
 * 5 ms doubling to 1000 s) counts a key's failures when its spec has no
 * error policy, and the {@link TokenBucketRateLimiter} (10 qps, burst 100)
 * that every retry takes a token of, shared by a manager's controllers
 * (permits.ts), so that a storm of failures cannot hammer the API server.
 * client-go's default controller limiter is the larger of the two; a
 * retry here waits for the larger of the two as well.
 *
 * @example
 * ```ts
 * import { ExponentialRateLimiter } from "./rate_limiter.ts";
 * const limiter = new ExponentialRateLimiter<string>();
 * limiter.when("default/web"); // 5
 * limiter.when("default/web"); // 10
 * limiter.forget("default/web");
 * ```
 *
 * @module
 */
import type { Clock } from "../../async/clock.ts";
import { TokenBucket } from "../../async/token_bucket.ts";

/**
 * Decides how long a key waits before it is retried.
 *
 * Call {@link RateLimiter.forget} when a key succeeds, or its failures are
 * tracked forever and its next failure waits needlessly long.
 */
export interface RateLimiter<K> {
  /** Milliseconds `key` should wait before its next attempt; counts as one requeue. */
  when(key: K): number;
  /** Drops what is tracked for `key`; its next failure starts from scratch. */
  forget(key: K): void;
  /** Requeues of `key` since it was last forgotten. */
  numRequeues(key: K): number;
}

/** Options of {@link ExponentialRateLimiter}. */
export interface ExponentialRateLimiterOptions {
  /** Delay of a key's first retry. Defaults to 5 ms. */
  baseDelayMs?: number;
  /** Upper bound of any delay. Defaults to 1000 s. */
  maxDelayMs?: number;
}

/**
 * Per-key exponential backoff: `baseDelayMs * 2^failures`, capped at
 * `maxDelayMs`.
 *
 * @example
 * ```ts
 * import { ExponentialRateLimiter } from "./rate_limiter.ts";
 * const limiter = new ExponentialRateLimiter<string>({ baseDelayMs: 100 });
 * limiter.when("a"); // 100
 * limiter.when("a"); // 200
 * limiter.when("b"); // 100
 * ```
 */
export class ExponentialRateLimiter<K> implements RateLimiter<K> {
  readonly #base: number;
  readonly #max: number;
  /** Failures per key since it was last forgotten; keys are removed on forget. */
  #failures = new Map<K, number>();

  /**
   * Creates a limiter that has seen no failure.
   *
   * @throws {RangeError} when a delay is not positive or the base exceeds the max.
   */
  constructor(options: ExponentialRateLimiterOptions = {}) {
    this.#base = options.baseDelayMs ?? 5;
    this.#max = options.maxDelayMs ?? 1_000_000;
    if (!(this.#base > 0) || !(this.#max >= this.#base)) {
      throw new RangeError(
        `Cannot create the rate limiter: need 0 < baseDelayMs <= maxDelayMs, got ${this.#base} and ${this.#max}`,
      );
    }
  }

  when(key: K): number {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    return Math.min(this.#max, this.#base * 2 ** failures);
  }

  forget(key: K): void {
    this.#failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.#failures.get(key) ?? 0;
  }
}

/** Options of {@link TokenBucketRateLimiter}. */
export interface TokenBucketRateLimiterOptions {
  /** Tokens added per second. Defaults to 10. */
  qps?: number;
  /** Tokens the bucket holds, and starts with. Defaults to 100. */
  burst?: number;
}

/**
 * A token bucket shared by all keys: `burst` retries go through at once, then
 * `qps` per second. Each call reserves a token, possibly one that only exists
 * in the future, and returns how long until it does.
 *
 * It tracks no per-key state: {@link forget} does nothing and
 * {@link numRequeues} is always 0.
 *
 * @example
 * ```ts
 * import { TokenBucketRateLimiter } from "./rate_limiter.ts";
 * import { FakeClock } from "../../async/clock.ts";
 * const limiter = new TokenBucketRateLimiter(new FakeClock(), { qps: 1, burst: 1 });
 * limiter.when("a"); // 0
 * limiter.when("b"); // 1000
 * ```
 */
export class TokenBucketRateLimiter<K = unknown> implements RateLimiter<K> {
  readonly #clock: Clock;
  /** Its tokens go negative when reserved ahead of time. */
  readonly #bucket: TokenBucket;

  /**
   * Creates a full bucket.
   *
   * @throws {RangeError} when `qps` is not positive or `burst` is not a positive integer.
   */
  constructor(clock: Clock, options: TokenBucketRateLimiterOptions = {}) {
    this.#clock = clock;
    const qps = options.qps ?? 10;
    const burst = options.burst ?? 100;
    if (!(qps > 0) || !Number.isFinite(qps)) {
      throw new RangeError(
        `Cannot create the rate limiter: 'qps' must be a positive number, got ${qps}`,
      );
    }
    if (!Number.isSafeInteger(burst) || burst < 1) {
      throw new RangeError(
        `Cannot create the rate limiter: 'burst' must be a positive integer, got ${burst}`,
      );
    }
    this.#bucket = new TokenBucket(burst, 1000 / qps, clock.now());
  }

  when(_key: K): number {
    return this.#bucket.reserve(this.#clock.now());
  }

  forget(_key: K): void {}

  numRequeues(_key: K): number {
    return 0;
  }
}
