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
  /** Free permits; stays 0 while anyone waits, since a release goes straight to the next waiter. */
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
    this.#available = permits;
  }

  /** Permits free right now. */
  get available(): number {
    return this.#available;
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
    if (this.#available === 0 || this.#waiters.size > 0) return undefined;
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
    const next = this.#waiters.values().next();
    if (next.done) {
      this.#available++;
      return;
    }
    this.#waiters.delete(next.value);
    next.value.resolve(this.#permit());
  }
}
