/**
 * The status of a WebApp, built from its observed Deployment: replica
 * counts, phase, conditions, URL and the selector the scale subresource
 * reports. Pure: the reconciler passes in what it observed and the time.
 *
 * @example
 * ```ts
 * import { webAppStatus } from "./status.ts";
 * const status = webAppStatus({
 *   apiVersion: "kinglet.dev/v1alpha1",
 *   kind: "WebApp",
 *   metadata: { name: "shop", namespace: "default", generation: 1 },
 *   spec: { image: "nginx:1.27", replicas: 1, port: 8080 },
 * }, undefined, new Date());
 * status.phase; // "Pending"
 * ```
 *
 * @module
 */
import type { V1Deployment } from "../models.ts";
import { labelSelector, selectorLabels } from "../labels.ts";
import { type WorkloadStatus, workloadStatus } from "../workload_status.ts";
import { webAppUrl } from "./render.ts";
import type { WebApp } from "./kind.ts";

/**
 * The status of a WebApp with a valid spec, given its Deployment as observed
 * (`undefined` when it does not exist yet).
 *
 * @example
 * ```ts
 * import { webAppStatus } from "./status.ts";
 * webAppStatus({
 *   apiVersion: "kinglet.dev/v1alpha1",
 *   kind: "WebApp",
 *   metadata: { name: "shop", namespace: "default", generation: 1 },
 *   spec: { image: "nginx:1.27", replicas: 1, port: 8080 },
 * }, undefined, new Date()).url; // "http://shop.default.svc.cluster.local:8080"
 * ```
 */
export function webAppStatus(
  app: WebApp,
  deployment: V1Deployment | undefined,
  now: Date,
): WorkloadStatus {
  return workloadStatus(
    app,
    {
      desiredReplicas: app.spec.replicas,
      url: webAppUrl(app),
      selector: labelSelector(selectorLabels(app)),
    },
    deployment,
    now,
  );
}
