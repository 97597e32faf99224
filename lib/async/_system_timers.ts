/**
 * The timers behind {@link systemClock}, kept off the global `setTimeout`.
 *
 * Deno's global `setTimeout` is Node's: its first call loads `node:timers`
 * and with it Node's errors, `util.inspect` and async hooks, some 4.5 MiB of
 * resident memory in an otherwise idle process (2.2 MiB of heap and native
 * allocations, 2.3 MiB of the executable's code pages), which an operator that
 * needs only "wake me at t" never gets back. `AbortSignal.timeout` runs on
 * Deno's own timers instead, and Deno keeps the process alive for it while it
 * has an `abort` listener, as `setTimeout` does for a pending timer.
 *
 * A timeout signal cannot be cancelled, so not one per timer: the timers wait
 * in a {@link DelayHeap} and a single signal is armed for the earliest. A
 * deadline disposed of before it passes (every API request has one) costs a
 * heap entry removed, not a signal left to run out. A signal armed for a
 * later time than a newly earliest timer is let go (its listener removed, so
 * it no longer holds the process) and a new one armed; one armed earlier than
 * the head wakes, finds nothing due, and arms for the head.
 *
 * @module
 */
import { DelayHeap } from "./delay_heap.ts";

/** A function to run once, and what cancels it. */
interface Entry {
  fn: () => void;
}

/** One wake-up signal for a heap of timers. */
export class SystemTimers {
  #heap = new DelayHeap<Entry>();
  /**
   * The pending wake-up, listened to while timers wait. When the last one is
   * cancelled it is kept, not listened to (so it holds the process no longer),
   * for the next timer due no earlier: a request's deadline is scheduled and
   * cancelled around every call, and each would otherwise leave a signal
   * pending until its time.
   */
  #wake: AbortSignal | undefined;
  #wakeAt = Infinity;
  #listening = false;
  readonly #timeout: (ms: number) => AbortSignal;
  readonly #onAbort = () => this.#fire();

  /** `timeout` makes a wake-up signal; tests pass one that counts them. */
  constructor(timeout: (ms: number) => AbortSignal = (ms) => AbortSignal.timeout(ms)) {
    this.#timeout = timeout;
  }

  /** Timers waiting. */
  get pending(): number {
    return this.#heap.size;
  }

  /**
   * Runs `fn` once, `ms` milliseconds from now or a little later, never
   * earlier by `performance.now()` (at once for 0 or less, on a later turn of
   * the event loop);
   * timers due together run in the order they were scheduled. `fn` must not
   * throw. Returns what cancels it.
   */
  schedule(fn: () => void, ms: number): () => void {
    const entry: Entry = { fn };
    this.#heap.schedule(entry, performance.now() + Math.max(0, ms));
    this.#arm();
    return () => {
      if (this.#heap.delete(entry)) this.#arm();
    };
  }

  /** Makes a listened-to signal wake at or before the earliest timer, or stops listening. */
  #arm(): void {
    const next = this.#heap.nextAt;
    if (this.#wake?.aborted) this.#drop();
    if (next === undefined) {
      this.#listen(false);
      return;
    }
    // An earlier wake-up finds nothing due and arms again for the head.
    if (this.#wake === undefined || this.#wakeAt > next) {
      this.#listen(false);
      // Whole milliseconds, as setTimeout counts them, rounded up: a wake-up that still comes
      // early (the runtime's own clock is coarser) finds nothing due and arms again.
      this.#wake = this.#timeout(Math.max(0, Math.ceil(next - performance.now())));
      this.#wakeAt = next;
    }
    this.#listen(true);
  }

  #listen(on: boolean): void {
    if (this.#wake === undefined || this.#listening === on) return;
    if (on) this.#wake.addEventListener("abort", this.#onAbort);
    else this.#wake.removeEventListener("abort", this.#onAbort);
    this.#listening = on;
  }

  #drop(): void {
    this.#wake = undefined;
    this.#wakeAt = Infinity;
    this.#listening = false;
  }

  #fire(): void {
    this.#drop();
    const due = this.#heap.popDue(performance.now());
    this.#arm();
    for (const entry of due) entry.fn();
  }
}
