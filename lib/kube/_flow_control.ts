/**
 * Client-side flow control, client-go's `QPS` and `Burst`: every request
 * (watches included) takes a token from one bucket per client before it is
 * sent, so a storm of reconciles cannot flood a small API server, and
 * requests turned away together (a 429) come back through the bucket one
 * by one instead of all at once.
 *
 * @module
 */
import type { Clock } from "../async/clock.ts";
import { TokenBucket } from "../async/token_bucket.ts";

/** Limits of {@link FlowControl}. */
export interface FlowControlOptions {
  /** Requests per second, sustained; 0 turns flow control off. */
  qps: number;
  /** Requests sent at once before the rate applies; at least 1 when `qps` > 0. */
  burst: number;
}

/** One bucket of request tokens; see the module documentation. */
export class FlowControl {
  readonly #clock: Clock;
  readonly #bucket: TokenBucket | undefined;

  /** @throws {RangeError} when `qps` is negative or `burst` is not a positive integer. */
  constructor(clock: Clock, options: FlowControlOptions) {
    const { qps, burst } = options;
    if (!(qps >= 0) || !Number.isFinite(qps)) {
      throw new RangeError(`Cannot create the client: 'qps' must be a number >= 0, got ${qps}`);
    }
    if (qps > 0 && (!Number.isSafeInteger(burst) || burst < 1)) {
      throw new RangeError(
        `Cannot create the client: 'burst' must be a positive integer, got ${burst}`,
      );
    }
    this.#clock = clock;
    this.#bucket = qps > 0 ? new TokenBucket(burst, 1000 / qps, clock.now()) : undefined;
  }

  /**
   * Waits for this request's token and resolves to the seconds waited
   * (0 when flow control is off or a token was there).
   *
   * @throws the signal's reason when `signal` aborts first.
   */
  async wait(signal?: AbortSignal): Promise<number> {
    const ms = this.#bucket?.reserve(this.#clock.now()) ?? 0;
    if (ms > 0) await this.#clock.sleep(ms, signal);
    return ms / 1000;
  }
}
