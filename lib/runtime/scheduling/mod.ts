/**
 * When and how many reconciles run: the one home of the pace, as kube-rs'
 * `scheduler` is. Every decision of the kind is made in one file here:
 *
 * - permits.ts: how many reconciles run at once across all controllers,
 *   resized as the memory limit's level moves (its plan is in
 *   lib/runtime/memory/), and the bucket every retry takes a token of
 *   (10 qps, burst 100); one per manager.
 * - retries.ts: what a reconcile's outcome does to its key (requeue, retry,
 *   terminal), in one `switch`; it alone holds a key's failures.
 * - error_policy.ts: how long a failed key waits, as an author declares it;
 *   rate_limiter.ts: client-go's per-key exponential backoff (5 ms to
 *   1000 s) when no policy is declared, and the token bucket.
 * - pacing.ts: the jitter of requeues and retries, the resync, the spread
 *   after a Retry-After, and the reconcile rate limit.
 * - runner.ts: takes keys off the queue under the permits, with a timeout,
 *   and drains them at shutdown.
 * - heap_release.ts: the check, every few seconds while the controllers
 *   run, that gives back the memory a finished burst left.
 *
 * The work queue (lib/runtime/queue/) only deduplicates, orders and delays
 * keys: it holds no failures. A manager owns one {@link SharedPermits}; each
 * controller owns its {@link Retries}, {@link Pacing} and {@link Runner}.
 *
 * @example An author's error policy and pacing, declared on the controller spec
 * ```ts
 * import { type PacingOptions, tieredErrorPolicy } from "./mod.ts";
 * const pacing: PacingOptions = {
 *   errorPolicy: tieredErrorPolicy([5_000, 60_000]),
 *   requeueJitter: 0.2,
 *   reconcileRateLimit: { qps: 5, burst: 20 },
 * };
 * ```
 *
 * @module
 */
export * from "./error_policy.ts";
export * from "./heap_release.ts";
export * from "./pacing.ts";
export * from "./permits.ts";
export * from "./rate_limiter.ts";
export * from "./retries.ts";
export * from "./runner.ts";
