/**
 * Waiting for a promise that the waiter may give up on, while the work behind
 * it goes on for whoever else shares it.
 *
 * @module
 */

/**
 * `promise`, or a rejection with the signal's reason as soon as `signal`
 * aborts, whichever comes first. Aborting stops only this wait: the work
 * behind `promise` is not cancelled, so callers that share one promise
 * (a single flight, a cached token) each give up on their own.
 *
 * @throws the signal's reason when it aborts first, or is already aborted.
 *
 * @example
 * ```ts
 * import { abortable } from "./abortable.ts";
 * const stop = new AbortController();
 * const waiting = abortable(new Promise(() => {}), stop.signal);
 * stop.abort(new Error("gave up"));
 * const reason = await waiting.catch((error: Error) => error.message);
 * if (reason !== "gave up") throw new Error("the wait outlived its signal");
 * ```
 */
export function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
