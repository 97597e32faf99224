/**
 * Sending requests at a fixed rate: item `i` is sent no earlier than
 * `i / rate` seconds after the start, with a bounded number in flight, and a
 * request the API server answers with 429 or 5xx, or that fails in transit,
 * is retried with backoff. The scenario's load and the background use it.
 *
 * @example
 * ```ts ignore
 * import { paced, retrying } from "./pace.ts";
 * await paced(names, { ratePerSecond: 50 }, signal, (name) =>
 *   retrying(() => client.create(CONFIG_MAPS, configMap(name)), signal));
 * ```
 *
 * @module
 */
import { ApiError, TransportError } from "../../lib/kube/errors.ts";

/** How fast to send. */
export interface Pace {
  /** Requests started per second. */
  ratePerSecond: number;
  /** Requests in flight at most. Defaults to 32. */
  inFlight?: number;
}

/**
 * Calls `send` for each item, paced; items are drawn from `items` only when
 * due, so a generator's objects are built one at a time. Stops sending after
 * the first failure and rethrows it once the requests in flight are done.
 *
 * @throws {RangeError} when `pace.ratePerSecond` is not positive.
 */
export async function paced<T>(
  items: Iterable<T>,
  pace: Pace,
  signal: AbortSignal | undefined,
  send: (item: T, index: number) => Promise<void>,
): Promise<void> {
  if (!(pace.ratePerSecond > 0)) {
    throw new RangeError(
      `Cannot send requests: 'ratePerSecond' must be positive, got ${pace.ratePerSecond}`,
    );
  }
  const limit = pace.inFlight ?? 32;
  const started = performance.now();
  const running = new Set<Promise<void>>();
  let failure: unknown;
  let index = 0;
  for (const item of items) {
    const due = started + (index * 1000) / pace.ratePerSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    while (running.size >= limit) await Promise.race(running);
    signal?.throwIfAborted();
    if (failure !== undefined) break;
    const request: Promise<void> = send(item, index).catch((error) => void (failure ??= error))
      .finally(() => running.delete(request));
    running.add(request);
    index++;
  }
  await Promise.all(running);
  if (failure !== undefined) throw failure;
}

/** Runs `request`, retrying up to 5 times with backoff from 200 ms while a retry can help. */
export async function retrying<T>(request: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  for (let attempt = 0;; attempt++) {
    try {
      return await request();
    } catch (error) {
      const retryable = error instanceof TransportError ||
        (error instanceof ApiError && error.retryable);
      if (!retryable || attempt >= 5 || signal?.aborted) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
    }
  }
}
