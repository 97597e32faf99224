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
 * A GPU pod that no node can take (no node labelled with its GPU type, or
 * none with a free GPU) stays Pending, so the InferenceService stays
 * Progressing until the Deployment's progress deadline turns it Degraded.
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
import { GROUP } from "../api_group.ts";
import { containerResources } from "../pod_fields.ts";
import { renderWorkload, type WorkloadChildren } from "../workload_render.ts";
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
export function renderInferenceService(isvc: InferenceService): WorkloadChildren {
  const { spec } = isvc;
  const gpu = spec.gpuType !== "none";
  return renderWorkload(isvc, spec.replicas, {
    container: INFERENCE_CONTAINER,
    image: spec.image ?? defaultServerImage(spec.gpuType),
    port: INFERENCE_PORT,
    env: [
      { name: "MODEL_ID", value: spec.model },
      { name: "MODEL_NAME", value: spec.model },
      { name: "MAX_BATCH_SIZE", value: String(spec.maxBatchSize) },
      { name: "PORT", value: String(INFERENCE_PORT) },
    ],
    resources: containerResources(spec.resources, gpu ? { [NVIDIA_GPU]: "1" } : {}),
    ...(gpu
      ? {
        nodeSelector: { [GPU_TYPE_LABEL]: spec.gpuType },
        tolerations: [{ key: NVIDIA_GPU, operator: "Exists", effect: "NoSchedule" }],
      }
      : {}),
  });
}
