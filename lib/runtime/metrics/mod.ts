/**
 * Prometheus metrics under controller-runtime's and client-go's names
 * (`workqueue_*`, `controller_runtime_*`, `rest_client_requests_total`,
 * `rest_client_request_duration_seconds`, `controller_runtime_webhook_*`) plus
 * `kinglet_cache_*`, `kinglet_webhook_*` and `process_*`: the {@link RuntimeMetrics} a manager
 * hands out, and the small {@link Registry} of counters, gauges and
 * histograms it is built on.
 *
 * @example
 * ```ts
 * import { Registry } from "./mod.ts";
 * const registry = new Registry();
 * const greetings = registry.counter("greetings_total", "Greetings rendered.", ["namespace"]);
 * greetings.inc({ namespace: "default" });
 * if (!registry.render().includes('greetings_total{namespace="default"} 1')) throw new Error();
 * ```
 *
 * @module
 */
export type { ProcessStats } from "./_process_stats.ts";
export * from "./metrics.ts";
export * from "./prometheus.ts";
export * from "./webhook_metrics.ts";
