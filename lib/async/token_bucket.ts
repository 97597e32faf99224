/**
 * A token bucket: {@link TokenBucket.take} refuses when no token is there
 * (what event recording needs, since an event that cannot go now is not
 * worth delaying); {@link TokenBucket.reserve} takes one ahead of time and
 * says how long to wait for it (what a rate limiter and client-side flow
 * control need).
 *
 * @module
 */

/** Holds up to `burst` tokens, refilled at one per `refillMs`. */
export class TokenBucket {
  readonly #burst: number;
  readonly #refillMs: number;
  #tokens: number;
  #last: number;

  /** Creates a full bucket of `burst` tokens, refilled one per `refillMs` from `now`. */
  constructor(burst: number, refillMs: number, now: number) {
    this.#burst = burst;
    this.#refillMs = refillMs;
    this.#tokens = burst;
    this.#last = now;
  }

  /** Whether a token is there at `now`, without taking it. */
  has(now: number): boolean {
    this.#refill(now);
    return this.#tokens >= 1;
  }

  /** Takes a token if there is one; says whether it did. */
  take(now: number): boolean {
    if (!this.has(now)) return false;
    this.#tokens--;
    return true;
  }

  /**
   * Takes a token now or, when there is none, reserves the next one; returns
   * the milliseconds until the reserved token is due (0 when one was there).
   */
  reserve(now: number): number {
    this.#refill(now);
    this.#tokens--;
    return this.#tokens >= 0 ? 0 : -this.#tokens * this.#refillMs;
  }

  #refill(now: number): void {
    const elapsed = Math.max(0, now - this.#last);
    this.#tokens = Math.min(this.#burst, this.#tokens + elapsed / this.#refillMs);
    this.#last = now;
  }
}
