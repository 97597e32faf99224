/**
 * Exponential backoff with jitter, for retrying watches, lists and Lease
 * renewals.
 *
 * @example
 * ```ts
 * import { Backoff } from "./backoff.ts";
 * const backoff = new Backoff({ initialMs: 100, maxMs: 1000, jitter: 0 });
 * backoff.next(); // 100
 * backoff.next(); // 200
 * backoff.reset();
 * ```
 *
 * @module
 */

/** Options of {@link Backoff}. */
export interface BackoffOptions {
  /** First delay. Defaults to 800 ms (client-go's reflector). */
  initialMs?: number;
  /** Upper bound of a delay before jitter. Defaults to 30 s. */
  maxMs?: number;
  /** Growth per step. Defaults to 2. */
  factor?: number;
  /** Fraction of the delay added at random, in [0, 1]. Defaults to 0.2. */
  jitter?: number;
  /** Source of randomness in [0, 1). Defaults to `Math.random`. */
  random?: () => number;
}

/** Delays that grow by `factor` from `initialMs` up to `maxMs`, plus jitter. */
export class Backoff {
  readonly #initial: number;
  readonly #max: number;
  readonly #factor: number;
  readonly #jitter: number;
  readonly #random: () => number;
  #attempt = 0;

  /**
   * Creates a backoff at its first step.
   *
   * @throws {RangeError} when a delay or factor is not positive, or jitter is outside [0, 1].
   */
  constructor(options: BackoffOptions = {}) {
    this.#initial = options.initialMs ?? 800;
    this.#max = options.maxMs ?? 30_000;
    this.#factor = options.factor ?? 2;
    this.#jitter = options.jitter ?? 0.2;
    this.#random = options.random ?? Math.random;
    if (!(this.#initial > 0) || !(this.#max >= this.#initial)) {
      throw new RangeError(
        `Cannot create backoff: need 0 < initialMs <= maxMs, got ${this.#initial} and ${this.#max}`,
      );
    }
    if (!(this.#factor >= 1)) {
      throw new RangeError(`Cannot create backoff: 'factor' must be >= 1, got ${this.#factor}`);
    }
    if (!(this.#jitter >= 0 && this.#jitter <= 1)) {
      throw new RangeError(
        `Cannot create backoff: 'jitter' must be in [0, 1], got ${this.#jitter}`,
      );
    }
  }

  /** Number of delays handed out since the last reset. */
  get attempts(): number {
    return this.#attempt;
  }

  /** The next delay in milliseconds. */
  next(): number {
    const base = Math.min(this.#max, this.#initial * this.#factor ** this.#attempt);
    this.#attempt++;
    return base + base * this.#jitter * this.#random();
  }

  /** Starts again from `initialMs`; call after a success. */
  reset(): void {
    this.#attempt = 0;
  }
}
