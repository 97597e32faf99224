/**
 * Time, injectable: everything in the runtime that waits or measures takes a
 * {@link Clock}, so tests step a {@link FakeClock} instead of sleeping.
 *
 * @example
 * ```ts
 * import { FakeClock } from "./clock.ts";
 * const clock = new FakeClock();
 * const slept = clock.sleep(1000);
 * await clock.advance(1000);
 * await slept;
 * ```
 *
 * @module
 */
import { DelayHeap } from "./delay_heap.ts";
import { SystemTimers } from "./_system_timers.ts";

/** A source of time and delays. */
export interface Clock {
  /** Milliseconds since an arbitrary epoch; only differences are meaningful. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds.
   *
   * @throws {DOMException} the signal's reason (an `AbortError` by default) when aborted.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Runs `fn` once after `ms` milliseconds and returns what cancels it: a
   * sleep without the promise and the abort listener, for timers set and
   * cancelled around every request. Clocks without it get `sleep`.
   */
  schedule?(fn: () => void, ms: number): () => void;
}

const timers = new SystemTimers();

/**
 * The real clock: `Date.now()`, and sleeps on Deno's own timers rather than
 * the global `setTimeout`, which would load Node's timers (why:
 * lib/async/_system_timers.ts). A pending sleep keeps the process alive.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => abortableDelay(ms, signal, (fn, delay) => timers.schedule(fn, delay)),
  schedule: (fn, ms) => timers.schedule(fn, Math.max(0, ms)),
};

/** A signal that aborts at a deadline; dispose of it once the work is done, so no timer lingers. */
export interface Deadline extends Disposable {
  /**
   * Aborts with a `TimeoutError` once the deadline passes, or with the
   * reason of the signal the deadline was set `within`, whichever is first.
   */
  readonly signal: AbortSignal;
}

/** Why a deadline's timer was stopped: a plain value, since a DOMException costs a stack trace. */
const DEADLINE_DISPOSED = "deadline disposed";

/**
 * A {@link Deadline} `ms` from now on `clock`: `AbortSignal.timeout` on an
 * injectable clock, so a test steps to the deadline instead of waiting for it.
 * Given `within`, its signal also aborts when `within` does: what
 * `AbortSignal.any([within, timeout])` gives, for every API request and every
 * reconcile, with one controller, one cancellable timer and one listener.
 *
 * @example
 * ```ts
 * import { deadline, FakeClock } from "./clock.ts";
 * const clock = new FakeClock();
 * using limit = deadline(clock, 1000);
 * await clock.advance(1000);
 * limit.signal.aborted; // true
 * ```
 */
export function deadline(clock: Clock, ms: number, within?: AbortSignal): Deadline {
  const timeout = new AbortController();
  const passed = () =>
    timeout.abort(new DOMException(`The deadline of ${ms} ms passed`, "TimeoutError"));
  const onAbort = () => timeout.abort(within?.reason);
  if (within?.aborted) onAbort();
  else within?.addEventListener("abort", onAbort);
  let cancel: () => void;
  if (clock.schedule) cancel = clock.schedule(passed, ms);
  else {
    const stop = new AbortController();
    clock.sleep(ms, stop.signal).then(passed, () => {});
    cancel = () => stop.abort(DEADLINE_DISPOSED);
  }
  return {
    signal: timeout.signal,
    [Symbol.dispose]: () => {
      cancel();
      within?.removeEventListener("abort", onAbort);
    },
  };
}

/**
 * Calls `tick` every `intervalMs` on `clock`, the first time one interval
 * after the call, until `signal` aborts; a tick that returns a promise is
 * awaited before the next interval starts. Resolves once stopped, never
 * rejects on the abort.
 *
 * @example
 * ```ts
 * import { every, FakeClock } from "./clock.ts";
 * const clock = new FakeClock();
 * const stop = new AbortController();
 * let ticks = 0;
 * const ticking = every(clock, 1000, stop.signal, () => void ticks++);
 * await clock.advance(3000);
 * stop.abort();
 * await ticking;
 * ticks; // 3
 * ```
 */
export async function every(
  clock: Clock,
  intervalMs: number,
  signal: AbortSignal,
  tick: () => void | Promise<void>,
): Promise<void> {
  while (!signal.aborted) {
    try {
      await clock.sleep(intervalMs, signal);
    } catch {
      return;
    }
    await tick();
  }
}

type Schedule = (fn: () => void, ms: number) => () => void;

function abortableDelay(ms: number, signal: AbortSignal | undefined, schedule: Schedule) {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      cancel();
      reject(signal?.reason);
    };
    const cancel = schedule(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A clock that moves only when told to. Timers due at the same instant fire in
 * the order they were scheduled.
 */
export class FakeClock implements Clock {
  #now: number;
  /** Pending timers, each a fresh wrapper so one `fn` scheduled twice fires twice. */
  #timers = new DelayHeap<() => void>();

  /** Creates a fake clock reading `start` milliseconds. */
  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return abortableDelay(ms, signal, (fn, delay) => this.schedule(fn, delay));
  }

  schedule(fn: () => void, ms: number): () => void {
    const timer = () => fn();
    this.#timers.schedule(timer, this.#now + Math.max(0, ms));
    return () => void this.#timers.delete(timer);
  }

  /** Number of sleeps not yet due. */
  get pending(): number {
    return this.#timers.size;
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way
   * and letting promise continuations run between them.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      await flushMicrotasks();
      const at = this.#timers.nextAt;
      if (at === undefined || at > target) break;
      // One timer fires per turn, so one may cancel another due at the same instant.
      const [next] = this.#timers.popDue(at, 1);
      this.#now = Math.max(this.#now, at);
      next!();
    }
    this.#now = target;
    await flushMicrotasks();
  }
}

/** Lets pending promise continuations run (a few macrotask turns). */
export async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setTimeout(r, 0));
}
