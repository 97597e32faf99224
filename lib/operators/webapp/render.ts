/**
 * The children a WebApp wants, for server-side apply: a Deployment and a
 * Service, both named after the WebApp.
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
import { containerEnv, containerResources, podTolerations } from "../pod_fields.ts";
import { renderWorkload, type WorkloadChildren } from "../workload_render.ts";
import type { WebApp } from "./kind.ts";

/** The name of the WebApp's container in its pods. */
export const WEB_APP_CONTAINER = "app";

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
export function renderWebApp(app: WebApp): WorkloadChildren {
  const { spec } = app;
  return renderWorkload(app, spec.replicas, {
    container: WEB_APP_CONTAINER,
    image: spec.image,
    port: spec.port,
    env: containerEnv(spec.env),
    resources: containerResources(spec.resources),
    nodeSelector: spec.nodeSelector,
    tolerations: podTolerations(spec.tolerations),
  });
}
