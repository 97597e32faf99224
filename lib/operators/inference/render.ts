/**
 * The children an InferenceService wants, for server-side apply: a
 * Deployment and a Service, both named after it.
 *
 * With a GPU type, each pod selects nodes labelled
 * `kinglet.dev/gpu-type=<type>`, tolerates the `nvidia.com/gpu` NoSchedule
 * taint GPU nodes usually carry, and limits `nvidia.com/gpu` to 1 (the
 * request follows the limit, as for every extended resource). With `none`,
 * none of the three is set and the pods run wherever CPUs are.
 *
 * @example
 * ```ts
 * import { renderInferenceService } from "./render.ts";
 * const { deployment } = renderInferenceService({
 *   apiVersion: "kinglet.dev/v1alpha1",
 *   kind: "InferenceService",
 *   metadata: { name: "chat", namespace: "ml", uid: "c4a2…" },
 *   spec: { model: "HuggingFaceTB/SmolLM2-360M-Instruct", replicas: 1, gpuType: "L40S", maxBatchSize: 8 },
 * });
 * deployment.spec?.template.spec?.nodeSelector; // { "kinglet.dev/gpu-type": "L40S" }
 * ```
 *
 * @module
 */
import type { V1Deployment, V1Service } from "../models.ts";
import { GROUP } from "../api_group.ts";
import { childMetadata, recommendedLabels, selectorLabels } from "../labels.ts";
import { containerResources } from "../pod_fields.ts";
import type { GpuType } from "./gpu.ts";
import type { InferenceService } from "./kind.ts";

/** The node label that names a node's GPU type. */
export const GPU_TYPE_LABEL = `${GROUP}/gpu-type`;

/** The extended resource and taint key of NVIDIA GPUs. */
export const NVIDIA_GPU = "nvidia.com/gpu";

/** The port the model server listens on, and the Service exposes. */
export const INFERENCE_PORT = 8080;

/** The name of the model server's container. */
export const INFERENCE_CONTAINER = "server";

const SERVER_IMAGE = "ghcr.io/huggingface/text-generation-inference:3.3.5";
const CPU_SERVER_IMAGE = `${SERVER_IMAGE}-intel-cpu`;

/** The desired children of an InferenceService. */
export interface InferenceChildren {
  deployment: V1Deployment;
  service: V1Service;
}

/**
 * The image that serves a model when `spec.image` is unset.
 *
 * @example
 * ```ts
 * import { defaultServerImage } from "./render.ts";
 * defaultServerImage("none"); // "ghcr.io/huggingface/text-generation-inference:3.3.5-intel-cpu"
 * ```
 */
export function defaultServerImage(gpuType: GpuType): string {
  return gpuType === "none" ? CPU_SERVER_IMAGE : SERVER_IMAGE;
}

/**
 * Renders the Deployment and Service of an InferenceService.
 *
 * @throws {TypeError} when the InferenceService lacks `metadata.uid` or
 * `metadata.namespace` (see `childMetadata`).
 * @example
 * ```ts
 * import { renderInferenceService } from "./render.ts";
 * const { deployment } = renderInferenceService({
 *   apiVersion: "kinglet.dev/v1alpha1",
 *   kind: "InferenceService",
 *   metadata: { name: "chat", namespace: "ml", uid: "c4a2…" },
 *   spec: { model: "HuggingFaceTB/SmolLM2-360M-Instruct", replicas: 1, gpuType: "none", maxBatchSize: 4 },
 * });
 * deployment.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === "MAX_BATCH_SIZE")?.value; // "4"
 * ```
 */
export function renderInferenceService(isvc: InferenceService): InferenceChildren {
  const { spec } = isvc;
  const gpu = spec.gpuType !== "none";
  const selector = selectorLabels(isvc);
  const resources = containerResources(spec.resources, gpu ? { [NVIDIA_GPU]: "1" } : {});
  const deployment: V1Deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: childMetadata(isvc),
    spec: {
      replicas: spec.replicas,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: recommendedLabels(isvc) },
        spec: {
          containers: [{
            name: INFERENCE_CONTAINER,
            image: spec.image ?? defaultServerImage(spec.gpuType),
            ports: [{ name: "http", containerPort: INFERENCE_PORT, protocol: "TCP" }],
            env: [
              { name: "MODEL_ID", value: spec.model },
              { name: "MODEL_NAME", value: spec.model },
              { name: "MAX_BATCH_SIZE", value: String(spec.maxBatchSize) },
              { name: "PORT", value: String(INFERENCE_PORT) },
            ],
            ...(Object.keys(resources).length ? { resources } : {}),
          }],
          ...(gpu
            ? {
              nodeSelector: { [GPU_TYPE_LABEL]: spec.gpuType },
              tolerations: [{ key: NVIDIA_GPU, operator: "Exists", effect: "NoSchedule" }],
            }
            : {}),
        },
      },
    },
  };
  const service: V1Service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: childMetadata(isvc),
    spec: {
      type: "ClusterIP",
      selector,
      ports: [{ name: "http", port: INFERENCE_PORT, targetPort: "http", protocol: "TCP" }],
    },
  };
  return { deployment, service };
}

/**
 * The in-cluster URL of an InferenceService's Service.
 *
 * @example
 * ```ts
 * import { inferenceServiceUrl } from "./render.ts";
 * inferenceServiceUrl({ metadata: { name: "chat", namespace: "ml" } });
 * // "http://chat.ml.svc.cluster.local:8080"
 * ```
 */
export function inferenceServiceUrl(isvc: Pick<InferenceService, "metadata">): string {
  const { name, namespace } = isvc.metadata;
  return `http://${name}.${namespace}.svc.cluster.local:${INFERENCE_PORT}`;
}
