/**
 * The webhook server's metrics, under controller-runtime's names so its
 * dashboards work: `controller_runtime_webhook_requests_total{webhook,code}`,
 * `controller_runtime_webhook_latency_seconds{webhook}` and
 * `controller_runtime_webhook_requests_in_flight{webhook}`, where `webhook`
 * is the path served; plus `kinglet_webhook_handler_failures_total{webhook,reason}`,
 * the handlers that threw (`error`) or ran late (`timeout`) and were answered
 * by their failure policy. They are registered by the first
 * {@link RuntimeMetrics.webhook} call, so an operator without webhooks does
 * not export them.
 *
 * @example
 * ```ts
 * import { RuntimeMetrics } from "./metrics.ts";
 * const metrics = new RuntimeMetrics();
 * const recorder = metrics.webhook("/validate/example.com/webapps");
 * recorder.inFlight(1);
 * recorder.answered(200, 0.003);
 * recorder.inFlight(-1);
 * metrics.render().includes(
 *   'controller_runtime_webhook_requests_total{webhook="/validate/example.com/webapps",code="200"} 1',
 * ); // true
 * ```
 *
 * @module
 */
import type { Counter, Gauge, Histogram, Registry } from "./prometheus.ts";

/** Recorders the webhook server calls around each request to one path. */
export interface WebhookMetrics {
  /** A request started (+1) or was answered (-1). */
  inFlight(delta: 1 | -1): void;
  /** A request was answered with HTTP `code` after `seconds`. */
  answered(code: number, seconds: number): void;
  /** A handler threw (`error`) or ran past its time (`timeout`). */
  handlerFailed(reason: "error" | "timeout"): void;
}

/** Prometheus' default buckets, which controller-runtime's webhook latency uses. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The four webhook metrics in `registry`, and a recorder per path. */
export class WebhookMetricSet {
  readonly #requests: Counter<"webhook" | "code">;
  readonly #latency: Histogram<"webhook">;
  readonly #inFlight: Gauge<"webhook">;
  readonly #failures: Counter<"webhook" | "reason">;

  /**
   * Registers the metrics.
   *
   * @throws {TypeError} when `registry` holds them already.
   */
  constructor(registry: Registry) {
    this.#requests = registry.counter(
      "controller_runtime_webhook_requests_total",
      "Total number of admission requests by HTTP status code.",
      ["webhook", "code"],
    );
    this.#latency = registry.histogram(
      "controller_runtime_webhook_latency_seconds",
      "Histogram of the latency of processing admission requests",
      LATENCY_BUCKETS,
      ["webhook"],
    );
    this.#inFlight = registry.gauge(
      "controller_runtime_webhook_requests_in_flight",
      "Current number of admission requests being served.",
      ["webhook"],
    );
    this.#failures = registry.counter(
      "kinglet_webhook_handler_failures_total",
      "Webhook handlers that threw (error) or ran past their time (timeout), answered by their failure policy.",
      ["webhook", "reason"],
    );
  }

  /** The recorders of the webhook served at `path`; its series start at zero. */
  webhook(path: string): WebhookMetrics {
    const labels = { webhook: path };
    this.#inFlight.set(labels, 0);
    this.#latency.ensure(labels);
    for (const reason of ["error", "timeout"]) this.#failures.ensure({ webhook: path, reason });
    return {
      inFlight: (delta) => this.#inFlight.inc(labels, delta),
      answered: (code, seconds) => {
        this.#requests.inc({ webhook: path, code: String(code) });
        this.#latency.observe(labels, seconds);
      },
      handlerFailed: (reason) => this.#failures.inc({ webhook: path, reason }),
    };
  }
}
