/**
 * When a controller's keys run again: the jitter on requeue-after delays and
 * on retries, the optional periodic resync, the spread of retries the API
 * server asked to delay (Retry-After), and the optional token bucket on
 * reconcile starts. It keeps nothing per key: a key's failures live in
 * retries.ts, which asks this for the delays.
 *
 * What the caller must know:
 *
 * - Jitter spreads requeues, so 5,000 objects reconciled together at start-up
 *   do not all come back in the same second: a 300 s requeue lands anywhere
 *   in 270–330 s with the default ±10 %.
 * - A Retry-After is a floor: the retry waits it out plus up to half of it
 *   again at random, so keys turned away together are not released together.
 *
 * @example
 * ```ts
 * import { Pacing } from "./pacing.ts";
 * import { FakeClock } from "../../async/clock.ts";
 * const pacing = new Pacing({ requeueJitter: 0.1 }, {
 *   name: "webapp",
 *   clock: new FakeClock(),
 *   random: () => 0.75,
 * });
 * pacing.requeueDelay(300_000); // 315000
 * ```
 *
 * @module
 */
import type { Clock } from "../../async/clock.ts";
import type { ErrorPolicy } from "./error_policy.ts";
import { TokenBucketRateLimiter } from "./rate_limiter.ts";

/** How a controller paces its keys; every field is optional. */
export interface PacingOptions {
  /**
   * Fraction of a delay moved at random, in [0, 1): a requeue-after or
   * resync lands within ± that fraction, a retry after a failure up to that
   * fraction sooner (never later than its policy says). Defaults to 0.1.
   */
  requeueJitter?: number;
  /**
   * Reconciles every object again this long (jittered) after a success that
   * asked for no requeue of its own: a safety net for drift no watch
   * reports. Defaults to 0, off: kinglet's operators say when to come back
   * (`requeueAfterMs`), and a resync on top would double their work at rest.
   */
  resyncPeriodMs?: number;
  /**
   * What a thrown error costs; see error_policy.ts. Defaults to client-go's
   * per-key exponential (5 ms doubling to 1000 s); either way a retry also
   * waits for the retry bucket (10 qps, burst 100). A Retry-After from the
   * API server takes precedence over the delay.
   */
  errorPolicy?: ErrorPolicy;
  /**
   * A token bucket on reconcile starts of this controller, beside the
   * manager's concurrency limit: `qps` tokens per second, up to `burst`
   * at once (and to start with). Defaults to none.
   */
  reconcileRateLimit?: { qps: number; burst: number };
}

/** How far past a Retry-After a retry may land, as a fraction of it. */
const RETRY_AFTER_SPREAD = 0.5;

/** Applies {@link PacingOptions} for one controller. */
export class Pacing {
  readonly #jitter: number;
  readonly #resyncMs: number;
  readonly #bucket: TokenBucketRateLimiter | undefined;
  readonly #clock: Clock;
  readonly #random: () => number;

  /**
   * Checks `options` and keeps them for the controller named in `deps`.
   *
   * @throws {RangeError} when `requeueJitter` is outside [0, 1), `resyncPeriodMs`
   * is negative, or the rate limit's `qps` or `burst` is not positive.
   */
  constructor(
    options: PacingOptions,
    deps: { name: string; clock: Clock; random?: () => number },
  ) {
    const refuse = (what: string) =>
      new RangeError(`Cannot create controller '${deps.name}': ${what}`);
    this.#jitter = options.requeueJitter ?? 0.1;
    this.#resyncMs = options.resyncPeriodMs ?? 0;
    if (!(this.#jitter >= 0 && this.#jitter < 1)) {
      throw refuse(`'requeueJitter' must be in [0, 1), got ${this.#jitter}`);
    }
    if (!(this.#resyncMs >= 0) || !Number.isFinite(this.#resyncMs)) {
      throw refuse(`'resyncPeriodMs' must be a finite number >= 0, got ${this.#resyncMs}`);
    }
    const limit = options.reconcileRateLimit;
    if (
      limit && (!(limit.qps > 0) || !Number.isFinite(limit.qps) ||
        !Number.isSafeInteger(limit.burst) || limit.burst < 1)
    ) {
      throw refuse(
        `'reconcileRateLimit' needs qps > 0 and a whole burst >= 1, got ${limit.qps} and ${limit.burst}`,
      );
    }
    this.#clock = deps.clock;
    this.#random = deps.random ?? Math.random;
    this.#bucket = limit && new TokenBucketRateLimiter(deps.clock, limit);
  }

  /**
   * The delay before a key that succeeded runs again: `requestedMs` (what the
   * reconcile asked) or else the resync period, jittered; `undefined` when
   * neither applies.
   */
  requeueDelay(requestedMs: number | undefined): number | undefined {
    const base = requestedMs ?? (this.#resyncMs > 0 ? this.#resyncMs : undefined);
    if (base === undefined || base <= 0) return base;
    return base * (1 + this.#jitter * (2 * this.#random() - 1));
  }

  /**
   * The delay before a failed key's retry: `ms` shortened at random by up to
   * `requeueJitter` of it, so that keys failed in the same outage do not all
   * come back in the same instant, and none later than its policy said.
   */
  retryDelay(ms: number): number {
    if (ms <= 0) return ms;
    return ms * (1 - this.#jitter * this.#random());
  }

  /** The delay before a retry the API server asked to wait `seconds` for. */
  retryAfterDelay(seconds: number): number {
    return seconds * 1000 * (1 + RETRY_AFTER_SPREAD * this.#random());
  }

  /**
   * Waits until the reconcile rate limit lets one more reconcile start;
   * at once without a limit.
   *
   * @throws the signal's reason when `signal` aborts first.
   */
  async admit(signal: AbortSignal): Promise<void> {
    const wait = this.#bucket?.when(undefined) ?? 0;
    if (wait > 0) await this.#clock.sleep(wait, signal);
  }
}
