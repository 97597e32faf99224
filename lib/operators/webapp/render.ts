/**
 * The children a WebApp wants, for server-side apply: a Deployment and a
 * Service, both named after the WebApp.
 *
 * Only fields kinglet decides are set, so that apply neither claims fields
 * other controllers own (status, defaults the API server fills in) nor
 * resets them: no strategy, no probes, no status.
 *
 * @example
 * ```ts
 * import { renderWebApp } from "./render.ts";
 * const { deployment, service } = renderWebApp({
 *   apiVersion: "kinglet.dev/v1alpha1",
 *   kind: "WebApp",
 *   metadata: { name: "shop", namespace: "default", uid: "6f1c…" },
 *   spec: { image: "nginx:1.27", replicas: 2, port: 8080 },
 * });
 * deployment.spec?.replicas; // 2
 * service.spec?.ports?.[0]?.port; // 8080
 * ```
 *
 * @module
 */
import type { V1Deployment, V1Service } from "../models.ts";
import { childMetadata, recommendedLabels, selectorLabels } from "../labels.ts";
import { containerEnv, containerResources, podTolerations } from "../pod_fields.ts";
import type { WebApp } from "./kind.ts";

/** The name of the WebApp's container in its pods. */
export const WEB_APP_CONTAINER = "app";

/** The desired children of a WebApp. */
export interface WebAppChildren {
  deployment: V1Deployment;
  service: V1Service;
}

/**
 * Renders the Deployment and Service of a WebApp.
 *
 * @throws {TypeError} when the WebApp lacks `metadata.uid` or
 * `metadata.namespace` (see `childMetadata`).
 * @example
 * ```ts
 * import { renderWebApp } from "./render.ts";
 * renderWebApp({
 *   apiVersion: "kinglet.dev/v1alpha1",
 *   kind: "WebApp",
 *   metadata: { name: "shop", namespace: "default", uid: "6f1c…" },
 *   spec: { image: "nginx:1.27", replicas: 1, port: 8080 },
 * }).deployment.metadata?.ownerReferences?.[0]?.kind; // "WebApp"
 * ```
 */
export function renderWebApp(app: WebApp): WebAppChildren {
  const { spec } = app;
  const selector = selectorLabels(app);
  const env = containerEnv(spec.env);
  const resources = containerResources(spec.resources);
  const tolerations = podTolerations(spec.tolerations);
  const deployment: V1Deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: childMetadata(app),
    spec: {
      replicas: spec.replicas,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: recommendedLabels(app) },
        spec: {
          containers: [{
            name: WEB_APP_CONTAINER,
            image: spec.image,
            ports: [{ name: "http", containerPort: spec.port, protocol: "TCP" }],
            ...(env.length ? { env } : {}),
            ...(Object.keys(resources).length ? { resources } : {}),
          }],
          ...(spec.nodeSelector && Object.keys(spec.nodeSelector).length
            ? { nodeSelector: spec.nodeSelector }
            : {}),
          ...(tolerations.length ? { tolerations } : {}),
        },
      },
    },
  };
  const service: V1Service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: childMetadata(app),
    spec: {
      type: "ClusterIP",
      selector,
      ports: [{ name: "http", port: spec.port, targetPort: "http", protocol: "TCP" }],
    },
  };
  return { deployment, service };
}

/**
 * The in-cluster URL of a WebApp's Service.
 *
 * @example
 * ```ts
 * import { webAppUrl } from "./render.ts";
 * webAppUrl({
 *   metadata: { name: "shop", namespace: "default" },
 *   spec: { image: "nginx:1.27", replicas: 1, port: 8080 },
 * }); // "http://shop.default.svc.cluster.local:8080"
 * ```
 */
export function webAppUrl(app: Pick<WebApp, "metadata" | "spec">): string {
  return `http://${app.metadata.name}.${app.metadata.namespace}.svc.cluster.local:${app.spec.port}`;
}
