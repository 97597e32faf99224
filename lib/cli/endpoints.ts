/**
 * Where kinglet's HTTP endpoints listen and who may read them, when the
 * flags leave it open: on a node (the systemd unit) everything stays on
 * loopback, since the node's interfaces face the network; in a pod the
 * kubelet must reach the probes and Prometheus the metrics, so they listen
 * on the pod's network, and metrics are protected as controller-runtime's
 * scaffold protects them. An address off loopback is always protected
 * unless `--metrics-auth=none` says otherwise. The webhook server follows
 * the same rule: on a node the API server beside it calls it on loopback,
 * in a pod it comes through the Service in front of the pod.
 *
 * @example
 * ```ts
 * import { endpointPlan } from "./endpoints.ts";
 * endpointPlan({}, { inCluster: false });
 * // { metricsAddress: "127.0.0.1:8080", healthAddress: "127.0.0.1:8081", metricsAuth: "none",
 * //   webhookAddress: "127.0.0.1:9443" }
 * ```
 *
 * @module
 */
import { isDisabled, parseAddress } from "../runtime/manager/http.ts";
import { DEFAULT_WEBHOOK_PORT } from "../runtime/webhook/spec.ts";
import type { MetricsAuth } from "./run_flags.ts";

/** What `kinglet run` serves, resolved. */
export interface EndpointPlan {
  metricsAddress: string;
  healthAddress: string;
  metricsAuth: MetricsAuth;
  /** Where the webhook server listens (`0`: nowhere, as `--webhook-bind-address=0` asks). */
  webhookAddress: string;
}

/** Fills what `flags` leave unset for a process running in a pod or not. */
export function endpointPlan(
  flags: {
    metricsAddress?: string;
    healthAddress?: string;
    metricsAuth?: MetricsAuth;
    webhookAddress?: string;
  },
  where: { inCluster: boolean },
): EndpointPlan {
  const host = where.inCluster ? "" : "127.0.0.1";
  const metricsAddress = flags.metricsAddress ?? `${host}:8080`;
  const healthAddress = flags.healthAddress ?? `${host}:8081`;
  const metricsAuth = flags.metricsAuth ??
    (isDisabled(metricsAddress) || isLoopback(metricsAddress) ? "none" : "tokenreview");
  // On a node the API server calls the kinglet beside it on loopback; in a pod, through a Service.
  const webhookAddress = flags.webhookAddress ?? `${host}:${DEFAULT_WEBHOOK_PORT}`;
  return { metricsAddress, healthAddress, metricsAuth, webhookAddress };
}

/** Whether `address` (`host:port`) listens on loopback only. */
export function isLoopback(address: string): boolean {
  const { hostname } = parseAddress(address);
  return hostname === "localhost" || hostname === "::1" || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}
