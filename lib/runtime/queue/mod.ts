/**
 * The deduplicating, delaying work queue between the caches and the
 * reconcilers, after client-go's `workqueue`.
 *
 * A key is never handed to two workers at once; a key added while it is
 * being worked on runs once more afterwards. The queue keeps no failures:
 * when a key runs again after a reconcile (its retries, requeues and
 * resyncs) is decided in lib/runtime/scheduling/.
 *
 * @example
 * ```ts
 * import { WorkQueue } from "./mod.ts";
 * import { FakeClock } from "../../async/mod.ts";
 * const clock = new FakeClock();
 * const queue = new WorkQueue<string>({ clock });
 * queue.add("default/web");
 * queue.add("default/web"); // deduplicated
 * const key = await queue.get();
 * queue.addAfter(key!, 5); // a retry: back in 5 ms
 * queue.done(key!);
 * await clock.advance(5);
 * if (await queue.get() !== "default/web") throw new Error("not requeued");
 * queue.shutDown();
 * ```
 *
 * @module
 */
export * from "./queue.ts";
