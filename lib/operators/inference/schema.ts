/**
 * The `InferenceService` kind (`isvc`): a model server run as a Deployment
 * behind a ClusterIP Service, on GPU nodes of a chosen type or on CPUs. Its
 * zod schema is the TypeScript type, the CRD and the spec schema that
 * `kind.ts` validates with.
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
 * import { inferenceSpecSchema } from "./schema.ts";
 * inferenceSpecSchema.parse({ model: "m" }).gpuType; // "none"
 * ```
 *
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { type CustomKind, defineKind } from "../../crd/mod.ts";
import { INFERENCE_SERVICES } from "../api_group.ts";
import { kingletKindOptions } from "../schema/kind_options.ts";
import { imageSchema, resourcesSchema } from "../schema/pod_fields.ts";
import { workloadStatusSchema } from "../schema/workload_status.ts";
import { GPU_TYPES, MAX_CPU_BATCH_SIZE } from "./gpu.ts";

/** Desired state of an InferenceService. */
export const inferenceSpecSchema = z.object({
  model: z.string().min(1).max(256).regex(/^\S+$/, { error: "must not contain whitespace" })
    .describe(
      "Model to serve: a Hugging Face repository id (e.g. HuggingFaceTB/SmolLM2-360M-Instruct) " +
        "or a path inside the image.",
    ),
  image: imageSchema.optional().describe(
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

/** The InferenceService CRD's definition. */
export const inferenceServiceDefinition: CustomKind<
  typeof inferenceSpecSchema,
  typeof workloadStatusSchema
> = defineKind({
  ...kingletKindOptions(INFERENCE_SERVICES, 63),
  singular: "inferenceservice",
  shortNames: ["isvc"],
  description: "InferenceService serves a model from a Deployment on GPU or CPU nodes behind a " +
    "ClusterIP Service.",
  spec: inferenceSpecSchema,
  status: workloadStatusSchema,
  scale: { labelSelectorPath: ".status.selector" },
  printerColumns: [
    { name: "Model", type: "string", jsonPath: ".spec.model" },
    { name: "GPU", type: "string", jsonPath: ".spec.gpuType" },
    { name: "Ready", type: "integer", jsonPath: ".status.readyReplicas" },
    { name: "Desired", type: "integer", jsonPath: ".spec.replicas" },
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "URL", type: "string", jsonPath: ".status.url", priority: 1 },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
});
