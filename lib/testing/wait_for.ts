/**
 * Waiting in a test for what the code under test does in the background:
 * {@link waitFor} checks a condition until it holds, and fails with what it
 * waited for and what the last check saw when it does not in time.
 *
 * It waits in real time, whatever clock the code under test runs on: a
 * pipeline on a `FakeClock` still moves between checks (its promises
 * settle), while its timers fire only when the test advances the clock.
 *
 * @example
 * ```ts
 * import { waitFor } from "./wait_for.ts";
 * let ready = false;
 * setTimeout(() => ready = true, 20);
 * await waitFor("the flag to be set", () => ready);
 * ```
 *
 * @module
 */
import { systemClock } from "../async/clock.ts";
import { describeError } from "../kube/errors.ts";

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /**
   * How long to wait, in real milliseconds, before failing.
   *
   * @default 10_000
   */
  timeoutMs?: number;
  /**
   * Real milliseconds between checks.
   *
   * @default 10
   */
  intervalMs?: number;
  /** Stops waiting: `waitFor` rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Calls `check` until it returns (or resolves to) something other than
 * `undefined`, `null` or `false`, and resolves to that. A check that throws
 * counts as not yet, and its error is reported if time runs out.
 *
 * @throws {Error} `Timed out after 10000 ms waiting for <what>; the last check
 * returned <value>` (or `threw <error>`), when `check` never held in time.
 * @throws {RangeError} when `timeoutMs` or `intervalMs` is not a positive number.
 * @example
 * ```ts
 * import { waitFor } from "./wait_for.ts";
 * const found = await waitFor("an even number", () => [1, 3, 4].find((n) => n % 2 === 0));
 * found; // 4
 * await waitFor("never", () => false, { timeoutMs: 30 }).catch((e) => e.message);
 * // "Timed out after 30 ms waiting for never; the last check returned false"
 * ```
 */
export async function waitFor<T>(
  what: string,
  check: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  options: WaitForOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 10;
  for (const [name, value] of Object.entries({ timeoutMs, intervalMs })) {
    if (!(value > 0) || !Number.isFinite(value)) {
      throw new RangeError(`Cannot wait for ${what}: '${name}' must be positive, got ${value}`);
    }
  }
  const deadline = performance.now() + timeoutMs;
  let last = "returned nothing yet";
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      const value = await check();
      if (value !== undefined && value !== null && value !== false) return value;
      last = `returned ${String(value)}`;
    } catch (error) {
      last = `threw ${describeError(error)}`;
    }
    if (performance.now() >= deadline) {
      throw new Error(
        `Timed out after ${timeoutMs} ms waiting for ${what}; the last check ${last}`,
      );
    }
    await systemClock.sleep(intervalMs, options.signal);
  }
}
