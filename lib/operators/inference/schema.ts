/**
 * The `InferenceService` kind (`isvc`): a model server run as a Deployment
 * behind a ClusterIP Service, on GPU nodes of a chosen type or on CPUs. Its
 * zod schema is the TypeScript type, the semantic validation and the CRD.
 *
 * `model` names the model the server loads: a Hugging Face repository id
 * (`HuggingFaceTB/SmolLM2-360M-Instruct`) or a path inside the image. The
 * server is Hugging Face Text Generation Inference unless `image` names
 * another one; whichever runs gets the model as `MODEL_ID` and `MODEL_NAME`,
 * the batch bound as `MAX_BATCH_SIZE` and the port as `PORT` (8080), the
 * variables TGI reads.
 *
 * GPU types select nodes labelled `kinglet.dev/gpu-type=<type>`: label GPU
 * nodes accordingly (`kubectl label node gpu-1 kinglet.dev/gpu-type=L40S`).
 *
 * @example
 * ```ts
 * import { validateInferenceService } from "./schema.ts";
 * const result = validateInferenceService({ model: "m", gpuType: "T4" });
 * if (!result.ok) result.message; // 'spec.gpuType: "T4" is not supported; use one of A100, H100, L40S, none'
 * ```
 *
 * @module
 */
import type { V1ObjectMeta } from "@kubernetes/client-node";
import { z } from "zod";
import type { KubeObject, Resource } from "../../kube/types.ts";
import { GROUP, type KindDefinition, VERSION } from "../crd.ts";
import { checkResources, resourcesSchema } from "../pod_fields.ts";
import { type Problem, validateSpec, type Validation } from "../validation.ts";
import { type WorkloadStatus, workloadStatusSchema } from "../workload_status.ts";

/** The `inferenceservices.kinglet.dev` resource. */
export const INFERENCE_SERVICES: Resource = {
  group: GROUP,
  version: VERSION,
  plural: "inferenceservices",
  kind: "InferenceService",
  namespaced: true,
};

/** The GPU types kinglet schedules for; `none` runs on CPUs. */
export const GPU_TYPES = ["A100", "H100", "L40S", "none"] as const;

/** One of {@link GPU_TYPES}. */
export type GpuType = typeof GPU_TYPES[number];

/** Largest batch accepted without a GPU: beyond it, CPU serving only adds latency. */
export const MAX_CPU_BATCH_SIZE = 32;

/** Desired state of an InferenceService. */
export const inferenceSpecSchema = z.object({
  model: z.string().min(1).max(256).regex(/^\S+$/, { error: "must not contain whitespace" })
    .describe(
      "Model to serve: a Hugging Face repository id (e.g. HuggingFaceTB/SmolLM2-360M-Instruct) " +
        "or a path inside the image.",
    ),
  image: z.string().min(1).regex(/^\S+$/, { error: "must not contain whitespace" }).optional()
    .describe(
      "Model server image; Text Generation Inference (CUDA, or Intel CPU for gpuType none) " +
        "when unset. It receives MODEL_ID, MODEL_NAME, MAX_BATCH_SIZE and PORT.",
    ),
  replicas: z.int32().min(0).default(1).describe(
    "Number of server pods, each with one GPU unless gpuType is none.",
  ),
  gpuType: z.enum(GPU_TYPES).default("none").describe(
    "GPU each pod needs, selecting nodes labelled kinglet.dev/gpu-type=<type>; none runs on CPUs.",
  ),
  maxBatchSize: z.int32().min(1).max(1024).default(8).describe(
    `Most requests the server batches together; at most ${MAX_CPU_BATCH_SIZE} with gpuType none.`,
  ),
  resources: resourcesSchema.optional(),
}).describe("Desired state of the InferenceService.");

/** An InferenceService spec with defaults applied. */
export type InferenceSpec = z.output<typeof inferenceSpecSchema>;

/** An InferenceService object whose spec passed {@link validateInferenceService}. */
export interface InferenceService extends KubeObject {
  metadata: V1ObjectMeta;
  spec: InferenceSpec;
  status?: WorkloadStatus;
}

/**
 * Parses a stored spec and checks what the CRD schema cannot: the batch
 * bound for CPU serving and requests within limits.
 *
 * @example
 * ```ts
 * import { validateInferenceService } from "./schema.ts";
 * validateInferenceService({ model: "HuggingFaceTB/SmolLM2-360M-Instruct" }).ok; // true
 * ```
 */
export function validateInferenceService(spec: unknown): Validation<InferenceSpec> {
  return validateSpec(inferenceSpecSchema, spec, (parsed) => {
    const problems: Problem[] = [];
    if (parsed.gpuType === "none" && parsed.maxBatchSize > MAX_CPU_BATCH_SIZE) {
      problems.push({
        path: ["maxBatchSize"],
        message: `${parsed.maxBatchSize} is too large for CPU serving (gpuType none); use at ` +
          `most ${MAX_CPU_BATCH_SIZE}, or choose a GPU type`,
      });
    }
    problems.push(...checkResources(parsed.resources, ["resources"]));
    return problems;
  });
}

/** The InferenceService CRD's definition. */
export const inferenceServiceDefinition: KindDefinition = {
  resource: INFERENCE_SERVICES,
  singular: "inferenceservice",
  shortNames: ["isvc"],
  categories: ["kinglet"],
  description: "InferenceService serves a model from a Deployment on GPU or CPU nodes behind a " +
    "ClusterIP Service.",
  spec: inferenceSpecSchema,
  status: workloadStatusSchema,
  scale: true,
  maxNameLength: 63,
  printerColumns: [
    { name: "Model", type: "string", jsonPath: ".spec.model" },
    { name: "GPU", type: "string", jsonPath: ".spec.gpuType" },
    { name: "Ready", type: "integer", jsonPath: ".status.readyReplicas" },
    { name: "Desired", type: "integer", jsonPath: ".spec.replicas" },
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "URL", type: "string", jsonPath: ".status.url", priority: 1 },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
};
