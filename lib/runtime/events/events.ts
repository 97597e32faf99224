/**
 * Records `events.k8s.io/v1` Events about objects, after client-go's events
 * library.
 *
 * What the caller must know:
 *
 * - {@link EventRecorder.publish} never throws and never waits: events go to
 *   a bounded queue written in the background by one worker. When the queue
 *   is full, new events are dropped and counted.
 * - Repeats of an event (same object uid, type, reason, action, note and
 *   related object) within `seriesWindowMs` of the previous one become a
 *   series: the first Event is patched with `series.count` and
 *   `series.lastObservedTime` instead of a new Event being created. Repeats
 *   that arrive while a write of the series is queued are folded into it.
 * - Writes are rate-limited by a token bucket per object (by default a burst
 *   of 25, then one every 5 minutes, as client-go's event spam filter) and a
 *   global one. A new event without a token is dropped and counted; a repeat
 *   without one is still counted in the series, and reaches the API server
 *   with the next write of that series.
 * - Recording is best effort: a write that fails is retried twice when the
 *   error is transient, then dropped with a log line.
 * - Notes longer than 1 KiB are truncated (the API server rejects them).
 *
 * @example
 * ```ts
 * import { EventRecorder } from "./events.ts";
 * // Usually `eventSink(client)`; here, a sink that keeps what it is given.
 * const written: unknown[] = [];
 * const recorder = new EventRecorder({
 *   create: (event) => Promise.resolve(written.push(event)),
 *   patch: (_namespace, _name, patch) => Promise.resolve(written.push(patch)),
 * }, { reportingInstance: "node-a" });
 * const web = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "web", namespace: "shop", uid: "4b1c" } };
 * const event = { type: "Warning", reason: "InvalidSpec", action: "Reconcile", note: "replicas < 0" } as const;
 * recorder.publish(web, event);
 * await recorder.flush();
 * recorder.publish(web, event);
 * await recorder.flush(AbortSignal.timeout(5_000));
 * written.length; // 2: the Event, then a patch of its series to count 2
 * ```
 *
 * @module
 */
import {
  ApiError,
  describeError,
  isAlreadyExists,
  isNotFound,
  TransportError,
} from "../../kube/errors.ts";
import type { KubeObject } from "../../kube/types.ts";
import { logger } from "../../log.ts";
import { Backoff } from "../../async/backoff.ts";
import { type Clock, systemClock } from "../../async/clock.ts";
import { TokenBucket } from "../../async/token_bucket.ts";
import {
  buildEvent,
  describe,
  type EventInit,
  FIELD_LIMIT,
  type KubeEvent,
  reference,
  utf8Length,
} from "./_event_object.ts";
import type { EventSink } from "./_event_sink.ts";
import { microTime } from "../../kube/micro_time.ts";
import { hostName } from "../_host_name.ts";

export { type EventClient, type EventSink, eventSink } from "./_event_sink.ts";

export type { EventInit, EventSeries, KubeEvent, ObjectReference } from "./_event_object.ts";

const log = logger("events");

/**
 * Where Events about objects go: an {@link EventRecorder}, or a stand-in
 * in a test.
 */
export interface EventPublisher {
  /** Records that something happened to `regarding`; returns at once, never throws. */
  publish(regarding: KubeObject, init: EventInit): void;
}

/** Options of {@link EventRecorder}. */
export interface EventRecorderOptions {
  /**
   * Which instance of the controller reports, e.g. the leader identity or
   * the pod's name; at most 128 bytes. Defaults to the host's name
   * (`Deno.hostname()`, which needs `--allow-sys=hostname`).
   */
  reportingInstance?: string;
  /**
   * Names the reporting controller, e.g. `example.com/backup-operator`; at
   * most 128 bytes.
   *
   * @default "kinglet"
   */
  reportingController?: string;
  /** Repeats closer than this to the previous one join its series. @default 360_000 (client-go) */
  seriesWindowMs?: number;
  /** Events waiting to be written; beyond this, events are dropped. @default 1_000 */
  maxQueued?: number;
  /** Writes about one object that may go at once. @default 25 */
  perObjectBurst?: number;
  /** Time for one more write about an object to become allowed. @default 300_000 */
  perObjectRefillMs?: number;
  /** Writes about all objects that may go at once. @default 100 */
  globalBurst?: number;
  /** Sustained writes per second about all objects. @default 5 */
  globalQps?: number;
  /**
   * Series, and per-object rate limits, remembered at most; the least
   * recently used are forgotten first (a repeat of a forgotten event starts
   * a new Event, a forgotten object a full burst). Each costs about 400 bytes.
   *
   * @default 4_096 (client-go)
   */
  maxTracked?: number;
  /** Times the series, the rate limits and the retries. @default systemClock */
  clock?: Clock;
  /** Ends the recorder: queued events are dropped and the write in flight is cancelled. */
  signal?: AbortSignal;
}

/** Counters of an {@link EventRecorder}, for metrics. */
export interface EventRecorderStats {
  /** Events created. */
  created: number;
  /** Series updates written. */
  patched: number;
  /** Writes refused by a rate limit: a new event lost, or a series update postponed. */
  rateLimited: number;
  /**
   * Writes refused because the queue was full (a new event lost, or a series
   * update postponed), and events lost because they were invalid or the
   * recorder had ended.
   */
  dropped: number;
  /** Writes given up after errors. */
  failed: number;
}

interface Entry {
  /** The Event as first created; its name addresses the series. */
  event: KubeEvent;
  /** Occurrences so far, including the first. */
  count: number;
  lastObservedAt: number;
  created: boolean;
  /** Waiting in the queue; a repeat then needs no write of its own. */
  queued: boolean;
  bucket: TokenBucket;
}

const MAX_ATTEMPTS = 3;

/**
 * Publishes Events in the background, folding repeats into series and
 * rate-limiting per object; see the module documentation.
 */
export class EventRecorder implements EventPublisher {
  readonly #sink: EventSink;
  readonly #controller: string;
  readonly #instance: string;
  readonly #windowMs: number;
  readonly #maxQueued: number;
  readonly #perObjectBurst: number;
  readonly #perObjectRefillMs: number;
  readonly #maxTracked: number;
  readonly #global: TokenBucket;
  readonly #clock: Clock;
  readonly #lifetime: AbortSignal;
  /** Series by key, least recently observed first. */
  #series = new Map<string, Entry>();
  /** Rate limits by object, least recently used first. */
  #buckets = new Map<string, TokenBucket>();
  /** Entries to write, in order; each at most once (`Entry.queued`). */
  #queue: Entry[] = [];
  #working = false;
  #idle: (() => void)[] = [];
  #sequence = 0;
  #stats: EventRecorderStats = { created: 0, patched: 0, rateLimited: 0, dropped: 0, failed: 0 };

  /**
   * Starts the background worker that writes to `sink`; it stops when `options.signal` aborts.
   *
   * @throws {RangeError} when the reporting instance is empty or an option is out of range.
   * @throws {TypeError} when `reportingInstance` is left to its default and
   * the host's name may not be read.
   */
  constructor(sink: EventSink, options: EventRecorderOptions = {}) {
    this.#sink = sink;
    this.#controller = options.reportingController ?? "kinglet";
    this.#instance = options.reportingInstance ??
      hostName("the event recorder", "reportingInstance");
    this.#windowMs = options.seriesWindowMs ?? 360_000;
    this.#maxQueued = options.maxQueued ?? 1_000;
    this.#perObjectBurst = options.perObjectBurst ?? 25;
    this.#perObjectRefillMs = options.perObjectRefillMs ?? 300_000;
    this.#maxTracked = options.maxTracked ?? 4_096;
    this.#clock = options.clock ?? systemClock;
    this.#lifetime = options.signal ?? new AbortController().signal;
    const globalBurst = options.globalBurst ?? 100;
    const globalQps = options.globalQps ?? 5;
    const fail = (what: string) => {
      throw new RangeError(`Cannot create the event recorder: ${what}`);
    };
    for (
      const [key, value] of Object.entries({
        reportingController: this.#controller,
        reportingInstance: this.#instance,
      })
    ) {
      if (!value || utf8Length(value) > FIELD_LIMIT) {
        fail(`'${key}' must be 1 to ${FIELD_LIMIT} bytes, got ${JSON.stringify(value)}`);
      }
    }
    for (
      const [key, value] of Object.entries({
        maxQueued: this.#maxQueued,
        maxTracked: this.#maxTracked,
        perObjectBurst: this.#perObjectBurst,
        globalBurst,
      })
    ) {
      if (!Number.isSafeInteger(value) || value < 1) {
        fail(`'${key}' must be a positive integer, got ${value}`);
      }
    }
    for (
      const [key, value] of Object.entries({
        seriesWindowMs: this.#windowMs,
        perObjectRefillMs: this.#perObjectRefillMs,
        globalQps,
      })
    ) {
      if (!(value > 0)) fail(`'${key}' must be positive, got ${value}`);
    }
    this.#global = new TokenBucket(globalBurst, 1000 / globalQps, this.#clock.now());
    this.#lifetime.addEventListener("abort", () => {
      this.#stats.dropped += this.#queue.length;
      this.#queue = [];
    }, { once: true });
  }

  /** Counters since the recorder was created. */
  get stats(): EventRecorderStats {
    return { ...this.#stats };
  }

  /** Series and per-object rate limits remembered at most (see {@link EventRecorderOptions.maxTracked}). */
  get maxTracked(): number {
    return this.#maxTracked;
  }

  /**
   * Records that something happened to `regarding`. Returns at once; never
   * throws (an unusable event is logged and dropped).
   */
  publish(regarding: KubeObject, init: EventInit): void {
    try {
      this.#publish(regarding, init);
    } catch (error) {
      this.#stats.dropped++;
      log.error("Dropped an event about {object}: {error}", {
        object: describe(reference(regarding)),
        error: describeError(error),
      });
    }
  }

  /**
   * Resolves when every queued event has been written or given up on.
   *
   * @throws the signal's reason when `signal` aborts first; the recorder
   * keeps going.
   */
  flush(signal?: AbortSignal): Promise<void> {
    if (!this.#working) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.#idle = this.#idle.filter((fn) => fn !== onIdle);
        reject(signal?.reason);
      };
      const onIdle = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      this.#idle.push(onIdle);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  #publish(regarding: KubeObject, init: EventInit): void {
    if (this.#lifetime.aborted) {
      this.#stats.dropped++;
      return;
    }
    const now = this.#clock.now();
    const event = buildEvent(regarding, init, {
      reportingController: this.#controller,
      reportingInstance: this.#instance,
      now,
      sequence: this.#sequence++,
    });
    const { uid, kind, namespace, name } = event.regarding;
    const objectKey = uid ?? `${kind}/${namespace}/${name}`;
    const key = JSON.stringify([
      objectKey,
      event.type,
      event.reason,
      event.action,
      event.note,
      event.related?.uid,
    ]);
    this.#expireSeries(now);
    const entry = this.#series.get(key);
    if (entry) {
      entry.count++;
      entry.lastObservedAt = now;
      this.#series.delete(key);
      this.#series.set(key, entry);
      if (!entry.queued && this.#admit(entry.bucket, now)) this.#enqueue(entry);
      return;
    }
    const bucket = this.#bucket(objectKey, now);
    if (!this.#admit(bucket, now)) return;
    const fresh: Entry = {
      event,
      count: 1,
      lastObservedAt: now,
      created: false,
      queued: false,
      bucket,
    };
    this.#series.set(key, fresh);
    if (this.#series.size > this.#maxTracked) {
      this.#series.delete(this.#series.keys().next().value!);
    }
    this.#enqueue(fresh);
  }

  /** Checks the queue and both rate limits, and takes the tokens if the write may go. */
  #admit(bucket: TokenBucket, now: number): boolean {
    if (this.#queue.length >= this.#maxQueued) {
      this.#stats.dropped++;
      return false;
    }
    if (!bucket.has(now) || !this.#global.has(now)) {
      this.#stats.rateLimited++;
      return false;
    }
    bucket.take(now);
    this.#global.take(now);
    return true;
  }

  #enqueue(entry: Entry): void {
    entry.queued = true;
    this.#queue.push(entry);
    if (this.#working) return;
    this.#working = true;
    // Started from a microtask so that no request begins inside the caller's publish().
    queueMicrotask(() => void this.#work());
  }

  async #work(): Promise<void> {
    try {
      for (let entry = this.#queue.shift(); entry; entry = this.#queue.shift()) {
        entry.queued = false;
        await this.#write(entry);
      }
    } finally {
      this.#working = false;
      this.#idle.splice(0).forEach((resolve) => resolve());
    }
  }

  /** Creates the Event, or patches its series; never throws. */
  async #write(entry: Entry): Promise<void> {
    const backoff = new Backoff({ initialMs: 1_000, maxMs: 10_000 });
    const { namespace = "default", name = "" } = entry.event.metadata ?? {};
    for (let attempt = 1;; attempt++) {
      const count = entry.count;
      const series = count > 1
        ? { count, lastObservedTime: microTime(entry.lastObservedAt) }
        : undefined;
      try {
        if (entry.created && series) {
          await this.#sink.patch(namespace, name, { series }, this.#lifetime);
          this.#stats.patched++;
        } else if (!entry.created) {
          await this.#sink.create(
            series ? { ...entry.event, series } : entry.event,
            this.#lifetime,
          );
          entry.created = true;
          this.#stats.created++;
        }
        return;
      } catch (error) {
        if (this.#lifetime.aborted) return;
        // The Event expired (its TTL is an hour) or an earlier attempt did land: switch verbs.
        const switchVerb = (entry.created && isNotFound(error)) ||
          (!entry.created && isAlreadyExists(error));
        if (switchVerb) entry.created = !entry.created;
        const transient = switchVerb || (error instanceof ApiError && error.retryable) ||
          error instanceof TransportError;
        if (!transient || attempt >= MAX_ATTEMPTS) {
          this.#stats.failed++;
          log.warn("Could not record event {reason} about {object}: {error}", {
            reason: entry.event.reason,
            object: describe(entry.event.regarding),
            error: describeError(error),
          });
          return;
        }
        if (switchVerb) continue;
        try {
          await this.#clock.sleep(backoff.next(), this.#lifetime);
        } catch {
          return;
        }
      }
    }
  }

  #bucket(objectKey: string, now: number): TokenBucket {
    let bucket = this.#buckets.get(objectKey);
    if (bucket) {
      this.#buckets.delete(objectKey);
    } else {
      bucket = new TokenBucket(this.#perObjectBurst, this.#perObjectRefillMs, now);
      if (this.#buckets.size >= this.#maxTracked) {
        this.#buckets.delete(this.#buckets.keys().next().value!);
      }
    }
    this.#buckets.set(objectKey, bucket);
    return bucket;
  }

  /** Forgets series whose last repeat is older than the window: the next repeat starts anew. */
  #expireSeries(now: number): void {
    for (const [key, entry] of this.#series) {
      if (now - entry.lastObservedAt <= this.#windowMs) return;
      this.#series.delete(key);
    }
  }
}
