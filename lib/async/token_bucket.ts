/**
 * A token bucket that refuses rather than reserves: what event recording
 * needs, since an event that cannot go now is not worth delaying.
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

  #refill(now: number): void {
    const elapsed = Math.max(0, now - this.#last);
    this.#tokens = Math.min(this.#burst, this.#tokens + elapsed / this.#refillMs);
    this.#last = now;
  }
}
