/**
 * One watch request as the watcher consumes it: events pulled one at a time
 * against a stall deadline, and a way to cancel the request alone.
 *
 * A busy watch carries thousands of events a minute, so a pull costs no
 * timer, signal or listener of its own: one watchdog per stream wakes every
 * stall period, and reports a stall only when the pull then waiting has
 * waited the whole period.
 *
 * @module
 */
import type { KubeObject, WatchEvent } from "../../kube/types.ts";
import type { Clock } from "../../async/clock.ts";

/** What one pull from a {@link WatchStream} gave. */
export type Pull<T extends KubeObject> =
  | { kind: "event"; event: WatchEvent<T> }
  | { kind: "end" }
  | { kind: "error"; error: unknown }
  | { kind: "stall" };

/** An open watch request. */
export class WatchStream<T extends KubeObject> {
  readonly #iterator: AsyncIterator<WatchEvent<T>>;
  /** Cancels this request only; the signal given to the constructor cancels it too. */
  readonly #abort = new AbortController();
  /** Aborted by {@link close} or the constructor's signal: ends the request and the watchdog. */
  readonly #bounded: AbortSignal;
  readonly #clock: Clock;
  /** `clock.now()` when the request was made. */
  readonly openedAt: number;
  /** Whether any event has arrived. */
  delivered = false;
  /** How long a pull waits for an event before it reports a stall. */
  readonly stallMs: number;
  /** When the pull now waiting began; `undefined` while none waits. */
  #waitingSince: number | undefined;
  /**
   * Settles the waiting pull early: resolved with a stall by the watchdog,
   * rejected with the constructor signal's reason when it aborts. One per
   * pull, never a long-lived promise that every pull races (each race would
   * leave a reaction on it for the stream's life).
   */
  #interrupt: PromiseWithResolvers<Pull<T>> | undefined;
  #watchdog = false;

  /**
   * Makes the request by calling `open` with a signal that {@link close} and
   * `signal` both abort. A synchronous throw of `open` is what the first
   * pull reports.
   */
  constructor(
    open: (signal: AbortSignal) => AsyncIterable<WatchEvent<T>>,
    signal: AbortSignal,
    clock: Clock,
    stallMs: number,
  ) {
    this.#clock = clock;
    this.stallMs = stallMs;
    this.openedAt = clock.now();
    this.#bounded = AbortSignal.any([signal, this.#abort.signal]);
    signal.addEventListener("abort", () => this.#interrupt?.reject(signal.reason), { once: true });
    let iterator: AsyncIterator<WatchEvent<T>>;
    try {
      iterator = open(this.#bounded)[Symbol.asyncIterator]();
    } catch (error) {
      iterator = { next: () => Promise.reject(error) };
    }
    this.#iterator = iterator;
  }

  /**
   * The next event, the end or error of the stream, or a stall when nothing
   * arrives within {@link stallMs}. A stalled stream is not closed: call
   * {@link close}.
   *
   * @throws the signal's reason when `signal` aborts first.
   */
  async pull(signal: AbortSignal): Promise<Pull<T>> {
    signal.throwIfAborted();
    this.#waitingSince = this.#clock.now();
    if (!this.#watchdog) this.#arm(this.stallMs);
    const next = this.#iterator.next().then(
      (r): Pull<T> => (r.done ? { kind: "end" } : { kind: "event", event: r.value }),
      (error): Pull<T> => ({ kind: "error", error }),
    );
    const interrupt = this.#interrupt = Promise.withResolvers<Pull<T>>();
    try {
      const pull = await Promise.race([next, interrupt.promise]);
      signal.throwIfAborted();
      if (pull.kind === "event") this.delivered = true;
      return pull;
    } finally {
      this.#waitingSince = undefined;
      this.#interrupt = undefined;
    }
  }

  /** Cancels the request and lets the stream's own cleanup run. */
  close(): void {
    this.#abort.abort();
    this.#iterator.return?.().catch(() => {});
  }

  /** Wakes after `ms`: reports a stall if the waiting pull has waited `stallMs`, else sleeps on. */
  #arm(ms: number): void {
    this.#watchdog = true;
    this.#clock.sleep(ms, this.#bounded).then(() => {
      const since = this.#waitingSince;
      const waited = since === undefined ? 0 : this.#clock.now() - since;
      if (since !== undefined && waited >= this.stallMs) {
        this.#interrupt?.resolve({ kind: "stall" });
      }
      this.#arm(waited >= this.stallMs ? this.stallMs : this.stallMs - waited);
    }, () => {});
  }
}
