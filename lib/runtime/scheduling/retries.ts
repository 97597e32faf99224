/**
 * What follows a reconcile: the one place that holds a key's failures and
 * maps each {@link Outcome} to a queue operation, in one `switch`, as
 * controller-runtime's `reconcileHandler` does.
 *
 * A key's failure state lives here and nowhere else: its failures in a row
 * (counted by the error policy, or without one by the rate limiter, each a
 * {@link FailureRateLimiter}) and the revision at which it failed
 * terminally. What each outcome does:
 *
 * | outcome    | failures  | queue                                                   |
 * | ---------- | --------- | ------------------------------------------------------- |
 * | `success`  | forgotten | `addAfter` the requested requeue or resync, jittered     |
 * | `gone`     | forgotten | nothing                                                 |
 * | `skipped`  | forgotten | nothing (still terminal at this revision)               |
 * | `terminal` | forgotten | nothing until the object changes                        |
 * | `error`    | counted   | `addAfter` Retry-After, or the policy's delay, jittered |
 *
 * Every retry after an error also takes a token of the retry bucket
 * (client-go's 10 qps, burst 100), so keys that failed in one outage come
 * back at the bucket's pace, not together. A manager gives all its
 * controllers one bucket, so that three controllers failing together retry
 * at one bucket's rate, not three.
 *
 * @example
 * ```ts
 * import { Retries } from "./retries.ts";
 * import { Pacing } from "./pacing.ts";
 * import { WorkQueue } from "../queue/queue.ts";
 * import { FakeClock } from "../../async/clock.ts";
 * const clock = new FakeClock();
 * const queue = new WorkQueue<string>({ clock });
 * const retries = new Retries({}, {
 *   name: "test",
 *   queue,
 *   clock,
 *   pacing: new Pacing({ requeueJitter: 0 }, { name: "test", clock }),
 * });
 * retries.settle("ns/a", { kind: "error", error: new Error("boom") }, 0.01);
 * retries.failures("ns/a"); // 1
 * retries.settle("ns/a", { kind: "success", action: {} }, 0.01);
 * retries.failures("ns/a"); // 0
 * queue.shutDown();
 * ```
 *
 * @module
 */
import { ApiError, describeError } from "../../kube/errors.ts";
import type { ObjectKey } from "../../kube/types.ts";
import type { Clock } from "../../async/clock.ts";
import { logger } from "../../log.ts";
import type { ControllerMetrics } from "../metrics/metrics.ts";
import type { WorkQueue } from "../queue/queue.ts";
import {
  ExponentialRateLimiter,
  type RateLimiter,
  TokenBucketRateLimiter,
} from "./rate_limiter.ts";
import { ErrorPolicyRateLimiter, type FailureRateLimiter } from "./error_policy.ts";
import type { Pacing, PacingOptions } from "./pacing.ts";

/**
 * What must move for an object to count as changed: its generation, or its
 * resourceVersion for kinds without one (see `revision` in
 * lib/runtime/controller/relations.ts).
 */
export type Revision = number | string | undefined;

/** How a reconcile of one key ended. */
export type Outcome =
  /** `action` is what the reconcile returned: its `requeueAfterMs`, if any. */
  | { kind: "success"; action: { requeueAfterMs?: number } }
  /** `revision` is the object's, when the failure came after reading it. */
  | { kind: "error"; error: unknown; revision?: Revision }
  /** A `TerminalError` thrown at `revision`. */
  | { kind: "terminal"; error: unknown; revision: Revision }
  /** The object failed terminally at this revision already; its reconcile was not called. */
  | { kind: "skipped" }
  | { kind: "gone" };

/** What {@link Retries} works with. */
export interface RetriesDeps {
  /** Names the controller in logs. */
  name: string;
  /** Where keys go back; only `addAfter` is used. */
  queue: Pick<WorkQueue<ObjectKey>, "addAfter">;
  /** Paces the retry bucket. */
  clock: Clock;
  /** The delays' jitter and the resync. */
  pacing: Pacing;
  /**
   * Counts failures without an error policy. Defaults to client-go's
   * per-key exponential (5 ms doubling to 1000 s).
   */
  rateLimiter?: RateLimiter<ObjectKey>;
  /**
   * The bucket every retry takes a token of, shared with the other
   * controllers of a manager. Defaults to one of this controller's own
   * (client-go's 10 qps, burst 100).
   */
  retryBucket?: RateLimiter<ObjectKey>;
  /** Where each outcome is counted; defaults to none. */
  metrics?: ControllerMetrics;
}

/** A controller's keys after their reconciles; see the module documentation. */
export class Retries {
  /** A key's failures in a row: the error policy, else the rate limiter. */
  readonly #failures: FailureRateLimiter<ObjectKey>;
  /** Revision at which a key failed terminally; cleared when the revision moves or the object goes. */
  readonly #terminal = new Map<ObjectKey, Revision>();
  readonly #bucket: RateLimiter<ObjectKey>;
  readonly #deps: RetriesDeps;
  readonly #log;

  /** Takes the controller's `errorPolicy` from `options`. */
  constructor(options: Pick<PacingOptions, "errorPolicy">, deps: RetriesDeps) {
    this.#deps = deps;
    this.#failures = options.errorPolicy
      ? new ErrorPolicyRateLimiter(options.errorPolicy)
      : deps.rateLimiter ?? new ExponentialRateLimiter();
    this.#bucket = deps.retryBucket ?? new TokenBucketRateLimiter(deps.clock);
    this.#log = logger("controller", deps.name);
  }

  /** Failures of `key` in a row since its last success. */
  failures(key: ObjectKey): number {
    return this.#failures.numRequeues(key);
  }

  /** Whether `key` failed terminally at `revision`, so its reconcile is skipped. */
  isTerminal(key: ObjectKey, revision: Revision): boolean {
    return this.#terminal.has(key) && this.#terminal.get(key) === revision;
  }

  /**
   * Forgets a deleted object's terminal failure, so that one created again
   * under its name is reconciled at its first generation.
   */
  deleted(key: ObjectKey): void {
    this.#terminal.delete(key);
  }

  /**
   * Maps `outcome` to what happens to `key` next, and counts it in the
   * metrics as a reconcile of `seconds`.
   */
  settle(key: ObjectKey, outcome: Outcome, seconds: number): void {
    const metrics = this.#deps.metrics;
    switch (outcome.kind) {
      case "gone":
        this.#terminal.delete(key);
        this.#failures.forget(key);
        metrics?.reconciled("success", seconds);
        return;
      case "success": {
        this.#terminal.delete(key);
        this.#failures.forget(key);
        const asked = outcome.action.requeueAfterMs;
        const after = this.#deps.pacing.requeueDelay(asked);
        if (after !== undefined) this.#deps.queue.addAfter(key, after);
        metrics?.reconciled(asked === undefined ? "success" : "requeue_after", seconds);
        return;
      }
      case "skipped":
        this.#failures.forget(key);
        return;
      case "terminal":
        this.#failTerminally(key, outcome.revision, outcome.error);
        metrics?.reconciled("error", seconds);
        return;
      case "error":
        this.#retry(key, outcome.error, outcome.revision);
        metrics?.reconciled("error", seconds);
        return;
    }
  }

  #failTerminally(key: ObjectKey, revision: Revision, error: unknown): void {
    this.#terminal.set(key, revision);
    this.#failures.forget(key);
    this.#log.warn("reconcile of {key} failed terminally, not retried until it changes: {error}", {
      key,
      error: describeError(error),
    });
  }

  #retry(key: ObjectKey, error: unknown, revision: Revision): void {
    const pacing = this.#deps.pacing;
    const retryAfter = error instanceof ApiError ? error.retryAfterSeconds : undefined;
    if (retryAfter !== undefined) {
      // The server is shedding load (a 429 or a 503): it said when to come back.
      this.#retryLater(key, pacing.retryAfterDelay(retryAfter));
      this.#log.warn(
        "reconcile of {key} failed, retried in {seconds} s as the API server asked: {error}",
        { key, seconds: retryAfter, error: describeError(error) },
      );
      return;
    }
    const delay = this.#failures.when(key, error);
    if (delay === "terminal") return this.#failTerminally(key, revision, error);
    this.#retryLater(key, pacing.retryDelay(delay));
    this.#log.error("reconcile of {key} failed, retry {retries}: {error}", {
      key,
      retries: this.#failures.numRequeues(key),
      error: describeError(error),
    });
  }

  #retryLater(key: ObjectKey, ms: number): void {
    this.#deps.queue.addAfter(key, Math.max(ms, this.#bucket.when(key)));
  }
}
