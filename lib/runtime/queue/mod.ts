/**
 * The deduplicating, rate-limited work queue between the caches and the
 * reconcilers, and its rate limiters, after client-go's `workqueue`.
 *
 * A key is never handed to two workers at once; a key added while it is
 * being worked on runs once more afterwards. Retries wait for the
 * {@link RateLimiter}: by default the larger of a per-key exponential delay
 * (5 ms doubling to 1000 s) and a token bucket (10 qps, burst 100).
 *
 * @example
 * ```ts
 * import { defaultControllerRateLimiter, WorkQueue } from "./mod.ts";
 * import { FakeClock } from "../../async/mod.ts";
 * const clock = new FakeClock();
 * const queue = new WorkQueue<string>({ clock, rateLimiter: defaultControllerRateLimiter(clock) });
 * queue.add("default/web");
 * queue.add("default/web"); // deduplicated
 * const key = await queue.get();
 * queue.addRateLimited(key!); // a failure: back in 5 ms
 * queue.done(key!);
 * await clock.advance(5);
 * if (await queue.get() !== "default/web") throw new Error("not requeued");
 * queue.shutDown();
 * ```
 *
 * @module
 */
export * from "./queue.ts";
export * from "./rate_limiter.ts";
