/**
 * The children of the Deployment-backed kinds (WebApp and InferenceService),
 * for server-side apply: a Deployment of one container whose `http` port a
 * ClusterIP Service exposes under the same number, both named after the
 * primary, and the in-cluster URL of that Service.
 *
 * Only fields kinglet decides are set, so that apply neither claims fields
 * other controllers own (status, defaults the API server fills in) nor
 * resets them: no strategy, no probes, no status. Empty lists and maps are
 * left out for the same reason.
 *
 * @example
 * ```ts
 * import { renderWorkload } from "./workload_render.ts";
 * const { service } = renderWorkload(
 *   { apiVersion: "kinglet.dev/v1alpha1", kind: "WebApp", metadata: { name: "shop", namespace: "default", uid: "6f1c…" } },
 *   1,
 *   { container: "app", image: "nginx:1.27", port: 8080 },
 * );
 * service.spec?.ports?.[0]?.targetPort; // "http"
 * ```
 *
 * @module
 */
import type {
  V1Deployment,
  V1EnvVar,
  V1ResourceRequirements,
  V1Service,
  V1Toleration,
} from "./models.ts";
import type { KubeObject } from "../kube/mod.ts";
import { childMetadata, recommendedLabels, selectorLabels, serviceHost } from "./labels.ts";

/** The desired children of a Deployment-backed primary. */
export interface WorkloadChildren {
  deployment: V1Deployment;
  service: V1Service;
}

/** The pod of a Deployment-backed primary: its one container and where it may run. */
export interface WorkloadPod {
  /** The container's name. */
  container: string;
  image: string;
  /** The container's `http` port, which the Service exposes under the same number. */
  port: number;
  env?: V1EnvVar[];
  resources?: V1ResourceRequirements;
  nodeSelector?: Record<string, string>;
  tolerations?: V1Toleration[];
}

/**
 * Renders the Deployment of `replicas` pods and the Service of a
 * Deployment-backed primary.
 *
 * @throws {TypeError} when the primary lacks `metadata.uid` or
 * `metadata.namespace` (see `childMetadata`).
 * @example
 * ```ts
 * import { renderWorkload } from "./workload_render.ts";
 * renderWorkload(
 *   { apiVersion: "kinglet.dev/v1alpha1", kind: "WebApp", metadata: { name: "shop", namespace: "default", uid: "6f1c…" } },
 *   2,
 *   { container: "app", image: "nginx:1.27", port: 8080 },
 * ).deployment.spec?.replicas; // 2
 * ```
 */
export function renderWorkload(
  primary: KubeObject,
  replicas: number,
  pod: WorkloadPod,
): WorkloadChildren {
  const { env, resources, nodeSelector, tolerations } = pod;
  const selector = selectorLabels(primary);
  const deployment: V1Deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: childMetadata(primary),
    spec: {
      replicas,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: recommendedLabels(primary) },
        spec: {
          containers: [{
            name: pod.container,
            image: pod.image,
            ports: [{ name: "http", containerPort: pod.port, protocol: "TCP" }],
            ...(env?.length ? { env } : {}),
            ...(resources && Object.keys(resources).length ? { resources } : {}),
          }],
          ...(nodeSelector && Object.keys(nodeSelector).length ? { nodeSelector } : {}),
          ...(tolerations?.length ? { tolerations } : {}),
        },
      },
    },
  };
  const service: V1Service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: childMetadata(primary),
    spec: {
      type: "ClusterIP",
      selector,
      ports: [{ name: "http", port: pod.port, targetPort: "http", protocol: "TCP" }],
    },
  };
  return { deployment, service };
}

/**
 * The in-cluster URL of the Service {@link renderWorkload} renders with `port`.
 *
 * @example
 * ```ts
 * import { workloadUrl } from "./workload_render.ts";
 * workloadUrl({ metadata: { name: "shop", namespace: "default" } }, 8080);
 * // "http://shop.default.svc.cluster.local:8080"
 * ```
 */
export function workloadUrl(primary: Pick<KubeObject, "metadata">, port: number): string {
  return `http://${serviceHost(primary)}:${port}`;
}
