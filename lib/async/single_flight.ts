/**
 * One call per key at a time, shared by every concurrent caller, like Go's
 * `singleflight`, with cancellation counted per caller: a caller whose signal
 * aborts stops waiting, and the call itself is aborted only when its last
 * caller has given up.
 *
 * @module
 */
import { abortable } from "./abortable.ts";

interface Flight<V> {
  promise: Promise<V>;
  abort: AbortController;
  callers: number;
}

/** Deduplicates concurrent calls of `run` by key. */
export class SingleFlight<K, V> {
  readonly #run: (key: K, signal: AbortSignal) => Promise<V>;
  /** Calls under way; a call leaves when it settles or when its last caller gives up. */
  readonly #flights = new Map<K, Flight<V>>();

  /** Deduplicates calls of `run`; it gets a signal that aborts when its last caller gives up. */
  constructor(run: (key: K, signal: AbortSignal) => Promise<V>) {
    this.#run = run;
  }

  /**
   * Joins the call for `key`, starting it if none is under way.
   *
   * @throws what the call throws, or the signal's reason when `signal` aborts first.
   */
  async do(key: K, signal?: AbortSignal): Promise<V> {
    signal?.throwIfAborted();
    const flight = this.#flights.get(key) ?? this.#start(key);
    flight.callers++;
    try {
      return await abortable(flight.promise, signal);
    } finally {
      if (--flight.callers === 0 && this.#flights.get(key) === flight) {
        this.#flights.delete(key);
        flight.abort.abort();
      }
    }
  }

  #start(key: K): Flight<V> {
    const abort = new AbortController();
    const flight: Flight<V> = { promise: this.#run(key, abort.signal), abort, callers: 0 };
    this.#flights.set(key, flight);
    const settle = () => {
      if (this.#flights.get(key) === flight) this.#flights.delete(key);
    };
    flight.promise.then(settle, settle);
    return flight;
  }
}
