/**
 * Waiting for what a test expects to happen, without sleeping: a condition
 * checked whenever the code under test reports progress, with a generous
 * real-time guard so that a broken expectation fails instead of hanging.
 *
 * @module
 */

/** A list of things that happened, and promises of the n-th one. */
export class Happenings<T> {
  readonly items: T[] = [];
  #waiters: { n: number; resolve: () => void }[] = [];

  /** Records `item` and wakes whoever waits for this many. */
  push(item: T): void {
    this.items.push(item);
    this.#waiters = this.#waiters.filter((w) => {
      if (this.items.length < w.n) return true;
      w.resolve();
      return false;
    });
  }

  /**
   * Resolves once `n` things happened.
   *
   * @throws {Error} naming `what` when that has not happened after 10 s of real time.
   */
  async count(n: number, what: string): Promise<T[]> {
    if (this.items.length < n) {
      const { promise, resolve } = Promise.withResolvers<void>();
      this.#waiters.push({ n, resolve });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const guard = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what}: ${this.items.length} of ${n} happened`)),
          10_000,
        );
      });
      try {
        await Promise.race([promise, guard]);
      } finally {
        clearTimeout(timer);
      }
    }
    return this.items;
  }
}

/** Waits, happening by happening, until `check` holds. */
export async function until<T>(
  happenings: Happenings<T>,
  what: string,
  check: () => boolean,
): Promise<void> {
  for (let n = happenings.items.length + 1; !check(); n++) await happenings.count(n, what);
}
