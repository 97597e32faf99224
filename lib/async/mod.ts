/**
 * The async primitives under kinglet's client and runtime: an injectable
 * {@link Clock} (with a {@link FakeClock} for tests), exponential
 * {@link Backoff} with jitter, a FIFO {@link Semaphore} with disposable
 * permits, a {@link TokenBucket}, a {@link DelayHeap} of keys by due time and
 * a {@link SingleFlight} that shares one call per key among its callers, and
 * {@link abortable}, a wait its caller may give up on alone.
 *
 * Everything that waits takes an `AbortSignal`, and everything that measures
 * time takes a {@link Clock}, so a test steps time instead of sleeping.
 *
 * @example Retry with backoff on a fake clock
 * ```ts
 * import { Backoff, FakeClock } from "./mod.ts";
 * const clock = new FakeClock();
 * const backoff = new Backoff({ initialMs: 100, jitter: 0 });
 * let attempts = 0;
 * const flaky = () => ++attempts < 3 ? Promise.reject(new Error("busy")) : Promise.resolve("ok");
 * const result = (async () => {
 *   for (;;) {
 *     try {
 *       return await flaky();
 *     } catch {
 *       await clock.sleep(backoff.next());
 *     }
 *   }
 * })();
 * await clock.advance(100); // first retry
 * await clock.advance(200); // second retry
 * if (await result !== "ok" || attempts !== 3) throw new Error("unexpected");
 * ```
 *
 * @module
 */
export * from "./abortable.ts";
export * from "./backoff.ts";
export * from "./clock.ts";
export * from "./delay_heap.ts";
export * from "./semaphore.ts";
export * from "./single_flight.ts";
export * from "./token_bucket.ts";
