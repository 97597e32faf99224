/**
 * A counting semaphore that bounds how many reconciles run at once.
 *
 * Permits are {@link Disposable}, so `using permit = await sem.acquire()`
 * gives the permit back however the block exits, a thrown error included.
 * Waiters are served first come, first served; a waiter whose signal aborts
 * leaves the line without taking a permit.
 *
 * @example
 * ```ts
 * import { Semaphore } from "./semaphore.ts";
 * const sem = new Semaphore(2);
 * {
 *   using _permit = await sem.acquire();
 *   // at most two callers are here at once
 * }
 * ```
 *
 * @module
 */

/** The right to run; give it back with `release()` or by leaving a `using` block. */
export interface Permit extends Disposable {
  /** Gives the permit back. Calling it again does nothing. */
  release(): void;
}

interface Waiter {
  resolve(permit: Permit): void;
}

/**
 * Hands out at most `permits` {@link Permit}s at a time, to waiters in FIFO
 * order.
 *
 * @example
 * ```ts
 * import { Semaphore } from "./semaphore.ts";
 * const sem = new Semaphore(1);
 * const first = sem.tryAcquire();
 * sem.tryAcquire(); // undefined: the only permit is taken
 * first?.release();
 * ```
 */
export class Semaphore {
  /** Permits handed out at most at once. */
  #limit: number;
  /**
   * Free permits; stays 0 while anyone waits, since a release goes straight
   * to the next waiter, and is negative after {@link Semaphore.resize} shrank
   * the limit below the permits held, until that many come back.
   */
  #available: number;
  /** Waiting acquirers in arrival order (a Set keeps insertion order and deletes in O(1) on abort). */
  #waiters = new Set<Waiter>();

  /**
   * Creates a semaphore holding `permits` permits.
   *
   * @throws {RangeError} when `permits` is not a positive integer.
   */
  constructor(permits: number) {
    if (!Number.isSafeInteger(permits) || permits < 1) {
      throw new RangeError(
        `Cannot create the semaphore: 'permits' must be a positive integer, got ${permits}`,
      );
    }
    this.#limit = permits;
    this.#available = permits;
  }

  /** Permits free right now. */
  get available(): number {
    return Math.max(0, this.#available);
  }

  /** Permits handed out at most at once. */
  get limit(): number {
    return this.#limit;
  }

  /**
   * Changes how many permits may be out at once, e.g. to run fewer
   * reconciles while memory is short. Growing serves waiters at once;
   * shrinking takes no permit back: holders keep theirs, and nobody is
   * served again until fewer than `permits` are out.
   *
   * @throws {RangeError} when `permits` is not a positive integer.
   *
   * @example
   * ```ts
   * import { Semaphore } from "./semaphore.ts";
   * const sem = new Semaphore(2);
   * const a = sem.tryAcquire();
   * const b = sem.tryAcquire();
   * sem.resize(1);
   * a?.release();
   * sem.tryAcquire(); // undefined: b alone already fills the new limit
   * ```
   */
  resize(permits: number): void {
    if (!Number.isSafeInteger(permits) || permits < 1) {
      throw new RangeError(
        `Cannot resize the semaphore: 'permits' must be a positive integer, got ${permits}`,
      );
    }
    this.#available += permits - this.#limit;
    this.#limit = permits;
    while (this.#available > 0 && this.#waiters.size > 0) {
      this.#available--;
      this.#grant();
    }
  }

  /** Callers blocked in {@link acquire}. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /**
   * Waits for a permit.
   *
   * @throws the signal's reason when `signal` aborts before a permit is granted.
   */
  acquire(signal?: AbortSignal): Promise<Permit> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const permit = this.tryAcquire();
    if (permit) return Promise.resolve(permit);
    return new Promise<Permit>((resolve, reject) => {
      const onAbort = () => {
        this.#waiters.delete(waiter);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        resolve: (granted) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(granted);
        },
      };
      this.#waiters.add(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Takes a permit if one is free and nobody is queued ahead; never waits. */
  tryAcquire(): Permit | undefined {
    if (this.#available <= 0 || this.#waiters.size > 0) return undefined;
    this.#available--;
    return this.#permit();
  }

  #permit(): Permit {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#release();
    };
    return { release, [Symbol.dispose]: release };
  }

  #release(): void {
    if (this.#available < 0 || this.#waiters.size === 0) {
      this.#available++;
      return;
    }
    this.#grant();
  }

  /** Hands a permit to the first waiter; there must be one. */
  #grant(): void {
    const next = this.#waiters.values().next().value!;
    this.#waiters.delete(next);
    next.resolve(this.#permit());
  }
}
