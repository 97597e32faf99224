/**
 * One watch request as the watcher consumes it: events pulled one at a time
 * against a stall deadline, and a way to cancel the request alone.
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

/**
 * The reason the stall timer is cancelled with once a pull settles: a plain
 * value, because aborting without one builds a `DOMException` and its stack
 * trace for every event.
 */
const PULLED = "pulled";

/** An open watch request. */
export class WatchStream<T extends KubeObject> {
  readonly #iterator: AsyncIterator<WatchEvent<T>>;
  /** Cancels this request only; the signal given to the constructor cancels it too. */
  readonly #abort = new AbortController();
  readonly #clock: Clock;
  /** `clock.now()` when the request was made. */
  readonly openedAt: number;
  /** Whether any event has arrived. */
  delivered = false;
  /** How long a pull waits for an event before it reports a stall. */
  readonly stallMs: number;

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
    let iterator: AsyncIterator<WatchEvent<T>>;
    try {
      iterator = open(AbortSignal.any([signal, this.#abort.signal]))[Symbol.asyncIterator]();
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
    const timer = new AbortController();
    const stall = this.#clock.sleep(this.stallMs, AbortSignal.any([signal, timer.signal]))
      .then((): Pull<T> => ({ kind: "stall" }));
    const next = this.#iterator.next().then(
      (r): Pull<T> => (r.done ? { kind: "end" } : { kind: "event", event: r.value }),
      (error): Pull<T> => ({ kind: "error", error }),
    );
    try {
      const pull = await Promise.race([next, stall]);
      signal.throwIfAborted();
      if (pull.kind === "event") this.delivered = true;
      return pull;
    } finally {
      timer.abort(PULLED);
    }
  }

  /** Cancels the request and lets the stream's own cleanup run. */
  close(): void {
    this.#abort.abort();
    this.#iterator.return?.().catch(() => {});
  }
}
