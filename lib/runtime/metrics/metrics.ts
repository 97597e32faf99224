/**
 * kinglet's metrics, under controller-runtime's and client-go's names and
 * bucket layouts so existing dashboards work: `workqueue_*`,
 * `controller_runtime_*`, `rest_client_requests_total`,
 * `rest_client_request_duration_seconds`,
 * `rest_client_rate_limiter_duration_seconds`, plus
 * `kinglet_cache_*`, `kinglet_memory_*` (under a memory limit) and
 * `process_*`.
 *
 * The manager creates one {@link RuntimeMetrics} and hands its parts out:
 * {@link RuntimeMetrics.queue} to each work queue,
 * {@link RuntimeMetrics.controller} to each controller,
 * {@link RuntimeMetrics.observeRequest} and
 * {@link RuntimeMetrics.observeRateLimit} to the API client,
 * {@link RuntimeMetrics.trackStore} for each cache,
 * {@link RuntimeMetrics.trackMemory} for a memory limit. Gauges that describe
 * current state (queue depth, cache size, memory) are read on scrape.
 *
 * @example
 * ```ts
 * import { RuntimeMetrics } from "./metrics.ts";
 * import { WorkQueue } from "../queue/queue.ts";
 * const metrics = new RuntimeMetrics();
 * const queue = new WorkQueue<string>({ metrics: metrics.queue("webapp") });
 * queue.add("default/web");
 * metrics.render().includes('workqueue_depth{name="webapp",controller="webapp"} 1'); // true
 * queue.shutDown();
 * ```
 *
 * @module
 */
import type { QueueMetrics, QueueSnapshot } from "../queue/queue.ts";
import type { StoreStats } from "../cache/store.ts";
import type { MemoryStats } from "../memory/governor.ts";
import { MEMORY_LEVELS } from "../memory/plan.ts";
import {
  type Counter,
  exponentialBuckets,
  type Gauge,
  type Histogram,
  Registry,
} from "./prometheus.ts";
import { type ProcessStats, readProcessStats } from "./_process_stats.ts";
import { type WebhookMetrics, WebhookMetricSet } from "./webhook_metrics.ts";

/** How a reconcile ended, as controller-runtime labels it. */
export type ReconcileResult = "success" | "error" | "requeue" | "requeue_after";

const RESULTS: readonly ReconcileResult[] = ["success", "error", "requeue", "requeue_after"];

/** controller-runtime's `controller_runtime_reconcile_time_seconds` buckets. */
const RECONCILE_BUCKETS = [
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.15,
  0.2,
  0.25,
  0.3,
  0.35,
  0.4,
  0.45,
  0.5,
  0.6,
  0.7,
  0.8,
  0.9,
  1,
  1.25,
  1.5,
  1.75,
  2,
  2.5,
  3,
  3.5,
  4,
  4.5,
  5,
  6,
  7,
  8,
  9,
  10,
  15,
  20,
  25,
  30,
  40,
  50,
  60,
];

/** The workqueue's duration buckets: 10 ns to 1000 s, by tens. */
const QUEUE_BUCKETS = exponentialBuckets(10e-9, 10, 12);

/** Recorders one controller calls around each reconcile. */
export interface ControllerMetrics {
  /** A reconcile ended with `result` after `seconds`. */
  reconciled(result: ReconcileResult, seconds: number): void;
  /** A worker started (+1) or finished (-1) a reconcile. */
  activeWorkers(delta: 1 | -1): void;
  /**
   * A `map` or an index function of the spec threw on an object of
   * `resource` (`kinglet_relation_errors_total`). Optional, for recorders
   * written before it.
   */
  relationFailed?(fn: "map" | "index", resource: string): void;
}

/** Something with a store's {@link StoreStats}, read on scrape. */
export interface StatsSource {
  /** The store's current size and counters. */
  stats(): StoreStats;
}

/** One API request, as the client reports it through `onRequest`. */
export interface RequestSample {
  /** `"200"`, `"404"`, ... or `"<error>"` when no response arrived. */
  code: string;
  /** The HTTP method. */
  method: string;
  /** Host and port of the API server. */
  host: string;
  /** Seconds the exchange took, up to the response headers. */
  seconds: number;
}

/** One request's wait for a client-side flow-control token, as the client reports it. */
export interface RateLimiterSample {
  /** HTTP method of the request. */
  method: string;
  /** Host and port of the API server. */
  host: string;
  /** Seconds the request waited; 0 when a token was there. */
  seconds: number;
}

/**
 * client-go's buckets for `rest_client_request_duration_seconds` and
 * `rest_client_rate_limiter_duration_seconds`.
 */
const REST_CLIENT_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** Options of {@link RuntimeMetrics}. */
export interface RuntimeMetricsOptions {
  /** Reads this process's memory and CPU on scrape. Defaults to /proc, else `Deno.memoryUsage()`. */
  processStats?: () => ProcessStats;
}

/** Every metric kinglet exposes, in one registry. */
export class RuntimeMetrics {
  /** Every metric, rendered by `/metrics`. */
  readonly registry: Registry = new Registry();
  readonly #queueDepth: Gauge<"name" | "controller">;
  readonly #queueAdds: Counter<"name" | "controller">;
  readonly #queueRetries: Counter<"name" | "controller">;
  readonly #queueLatency: Histogram<"name" | "controller">;
  readonly #workDuration: Histogram<"name" | "controller">;
  readonly #unfinished: Gauge<"name" | "controller">;
  readonly #longestRunning: Gauge<"name" | "controller">;
  readonly #reconciles: Counter<"controller" | "result">;
  readonly #reconcileErrors: Counter<"controller">;
  readonly #reconcileTime: Histogram<"controller">;
  readonly #maxConcurrent: Gauge<"controller">;
  readonly #activeWorkers: Gauge<"controller">;
  readonly #relationErrors: Counter<"controller" | "resource" | "function">;
  readonly #requests: Counter<"code" | "method" | "host">;
  readonly #requestDuration: Histogram<"verb" | "host">;
  readonly #rateLimiterWait: Histogram<"verb" | "host">;
  /** The latest queue probe per controller; a restarted controller's queue replaces its old one. */
  readonly #queues = new Map<string, () => QueueSnapshot>();
  /** The latest store per kind, likewise. */
  readonly #stores = new Map<string, StatsSource>();
  /** The memory governor's state, once one is tracked; its metrics exist only then. */
  #memory: (() => MemoryStats) | undefined;
  /** The webhook metrics, once a webhook is served; they exist only then. */
  #webhooks: WebhookMetricSet | undefined;

  /** Registers every metric; process figures are read on scrape. */
  constructor(options: RuntimeMetricsOptions = {}) {
    const r = this.registry;
    const q = ["name", "controller"] as const;
    this.#queueDepth = r.gauge("workqueue_depth", "Current depth of workqueue", q);
    this.#queueAdds = r.counter(
      "workqueue_adds_total",
      "Total number of adds handled by workqueue",
      q,
    );
    this.#queueRetries = r.counter(
      "workqueue_retries_total",
      "Total number of retries handled by workqueue",
      q,
    );
    this.#queueLatency = r.histogram(
      "workqueue_queue_duration_seconds",
      "How long in seconds an item stays in workqueue before being requested",
      QUEUE_BUCKETS,
      q,
    );
    this.#workDuration = r.histogram(
      "workqueue_work_duration_seconds",
      "How long in seconds processing an item from workqueue takes.",
      QUEUE_BUCKETS,
      q,
    );
    this.#unfinished = r.gauge(
      "workqueue_unfinished_work_seconds",
      "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      q,
    );
    this.#longestRunning = r.gauge(
      "workqueue_longest_running_processor_seconds",
      "How many seconds has the longest running processor for workqueue been running.",
      q,
    );
    const c = ["controller"] as const;
    this.#reconciles = r.counter(
      "controller_runtime_reconcile_total",
      "Total number of reconciliations per controller",
      ["controller", "result"],
    );
    this.#reconcileErrors = r.counter(
      "controller_runtime_reconcile_errors_total",
      "Total number of reconciliation errors per controller",
      c,
    );
    this.#reconcileTime = r.histogram(
      "controller_runtime_reconcile_time_seconds",
      "Length of time per reconciliation per controller",
      RECONCILE_BUCKETS,
      c,
    );
    this.#maxConcurrent = r.gauge(
      "controller_runtime_max_concurrent_reconciles",
      "Maximum number of concurrent reconciles per controller",
      c,
    );
    this.#activeWorkers = r.gauge(
      "controller_runtime_active_workers",
      "Number of currently used workers per controller",
      c,
    );
    this.#relationErrors = r.counter(
      "kinglet_relation_errors_total",
      "Failures of a controller's map or index functions, per controller, resource and function",
      ["controller", "resource", "function"],
    );
    this.#requests = r.counter(
      "rest_client_requests_total",
      "Number of HTTP requests, partitioned by status code, method, and host.",
      ["code", "method", "host"],
    );
    this.#requestDuration = r.histogram(
      "rest_client_request_duration_seconds",
      "Request latency in seconds. Broken down by verb, and host.",
      REST_CLIENT_BUCKETS,
      ["verb", "host"],
    );
    this.#rateLimiterWait = r.histogram(
      "rest_client_rate_limiter_duration_seconds",
      "Client side rate limiter latency in seconds. Broken down by verb, and host.",
      REST_CLIENT_BUCKETS,
      ["verb", "host"],
    );
    this.#registerCacheMetrics();
    this.#registerProcessMetrics(options.processStats ?? (() => readProcessStats()));
    r.onCollect(() => {
      for (const [name, snapshot] of this.#queues) {
        const labels = { name, controller: name };
        const now = snapshot();
        this.#queueDepth.set(labels, now.depth);
        this.#unfinished.set(labels, now.unfinishedSeconds);
        this.#longestRunning.set(labels, now.longestRunningSeconds);
      }
    });
  }

  /** The hooks for the work queue of `controller`. */
  queue(controller: string): QueueMetrics {
    const labels = { name: controller, controller };
    for (
      const metric of [this.#queueAdds, this.#queueRetries, this.#queueLatency, this.#workDuration]
    ) {
      metric.ensure(labels);
    }
    return {
      added: () => this.#queueAdds.inc(labels),
      taken: (seconds) => this.#queueLatency.observe(labels, seconds),
      finished: (seconds) => this.#workDuration.observe(labels, seconds),
      retried: () => this.#queueRetries.inc(labels),
      track: (snapshot) => void this.#queues.set(controller, snapshot),
    };
  }

  /**
   * The recorders of `controller`, which runs at most `maxConcurrent`
   * reconciles at once: a number, or a function read on every scrape when
   * the limit moves (a memory limit shrinks it under pressure). Every result
   * starts at 0, as in controller-runtime, so rates work from the first scrape.
   */
  controller(controller: string, maxConcurrent: number | (() => number)): ControllerMetrics {
    const labels = { controller };
    for (const result of RESULTS) this.#reconciles.ensure({ controller, result });
    this.#reconcileErrors.ensure(labels);
    this.#reconcileTime.ensure(labels);
    if (typeof maxConcurrent === "number") this.#maxConcurrent.set(labels, maxConcurrent);
    else {
      this.#maxConcurrent.set(labels, maxConcurrent());
      this.registry.onCollect(() => this.#maxConcurrent.set(labels, maxConcurrent()));
    }
    this.#activeWorkers.set(labels, 0);
    return {
      reconciled: (result, seconds) => {
        this.#reconciles.inc({ controller, result });
        if (result === "error") this.#reconcileErrors.inc(labels);
        this.#reconcileTime.observe(labels, seconds);
      },
      activeWorkers: (delta) => this.#activeWorkers.inc(labels, delta),
      relationFailed: (fn, resource) =>
        this.#relationErrors.inc({ controller, resource, function: fn }),
    };
  }

  /**
   * Counts and times one API request; pass it as the client's `onRequest`.
   * As in client-go, the duration's `verb` is the HTTP method.
   */
  readonly observeRequest = (sample: RequestSample): void => {
    this.#requests.inc({ code: sample.code, method: sample.method, host: sample.host });
    this.#requestDuration.observe({ verb: sample.method, host: sample.host }, sample.seconds);
  };

  /** Observes one request's flow-control wait; pass it as the client's `onRateLimited`. */
  readonly observeRateLimit = (sample: RateLimiterSample): void => {
    this.#rateLimiterWait.observe({ verb: sample.method, host: sample.host }, sample.seconds);
  };

  /** Reports `store` as the cache of `kind` on every scrape, replacing an earlier one of that kind. */
  trackStore(kind: string, store: StatsSource): void {
    this.#stores.set(kind, store);
  }

  /**
   * Reports a memory limit's state on every scrape, replacing an earlier
   * source: `kinglet_memory_limit_bytes`, `kinglet_memory_pressure` (0
   * normal, 1 evicting, 2 slowed) and
   * `kinglet_memory_pressure_transitions_total{level}`, the moves into each
   * level. Without a limit these series are not exported.
   */
  trackMemory(stats: () => MemoryStats): void {
    if (!this.#memory) this.#registerMemoryMetrics();
    this.#memory = stats;
  }

  /**
   * The recorders of the webhook served at `path` (webhook_metrics.ts): the
   * first call registers `controller_runtime_webhook_*` and
   * `kinglet_webhook_handler_failures_total`.
   */
  webhook(path: string): WebhookMetrics {
    this.#webhooks ??= new WebhookMetricSet(this.registry);
    return this.#webhooks.webhook(path);
  }

  /** Everything, in the Prometheus text format; serve with `CONTENT_TYPE` from prometheus.ts. */
  render(): string {
    return this.registry.render();
  }

  #registerCacheMetrics(): void {
    const r = this.registry;
    const k = ["kind"] as const;
    const objects = r.gauge("kinglet_cache_objects", "Full objects held in the cache per kind", k);
    const keys = r.gauge(
      "kinglet_cache_keys",
      "Keys indexed in the cache per kind, including those whose object was evicted",
      k,
    );
    const bytes = r.gauge("kinglet_cache_bytes", "Estimated bytes of cached objects per kind", k);
    const hits = r.counter("kinglet_cache_hits_total", "Cache reads served from memory", k);
    const misses = r.counter(
      "kinglet_cache_misses_total",
      "Cache reads of evicted objects, served by a live GET",
      k,
    );
    const evictions = r.counter(
      "kinglet_cache_evictions_total",
      "Objects evicted from the cache to stay within its memory budget",
      k,
    );
    r.onCollect(() => {
      for (const [kind, store] of this.#stores) {
        const stats = store.stats();
        objects.set({ kind }, stats.objects);
        keys.set({ kind }, stats.keys);
        bytes.set({ kind }, stats.bytes);
        hits.set({ kind }, stats.hits);
        misses.set({ kind }, stats.misses);
        evictions.set({ kind }, stats.evictions);
      }
    });
  }

  #registerMemoryMetrics(): void {
    const r = this.registry;
    const limit = r.gauge("kinglet_memory_limit_bytes", "The memory limit kinglet keeps under.");
    const pressure = r.gauge(
      "kinglet_memory_pressure",
      "Memory pressure level: 0 normal, 1 evicting cached objects, 2 also running fewer reconciles.",
    );
    const transitions = r.counter(
      "kinglet_memory_pressure_transitions_total",
      "Moves into each memory pressure level.",
      ["level"],
    );
    for (const level of MEMORY_LEVELS) transitions.ensure({ level });
    r.onCollect(() => {
      const stats = this.#memory!();
      limit.set({}, stats.limitBytes);
      pressure.set({}, MEMORY_LEVELS.indexOf(stats.level));
      for (const level of MEMORY_LEVELS) transitions.set({ level }, stats.transitions[level]);
    });
  }

  #registerProcessMetrics(read: () => ProcessStats): void {
    const rss = this.registry.gauge(
      "process_resident_memory_bytes",
      "Resident memory size in bytes.",
    );
    const cpu = this.registry.counter(
      "process_cpu_seconds_total",
      "Total user and system CPU time spent in seconds.",
    );
    this.registry.onCollect(() => {
      const stats = read();
      rss.set({}, stats.residentBytes);
      if (stats.cpuSeconds !== undefined) cpu.set({}, stats.cpuSeconds);
    });
  }
}
