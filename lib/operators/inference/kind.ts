/**
 * The `InferenceService` kind at run time: its resource, object type and the
 * validation of a stored spec, with no zod loaded (the schema is in
 * `schema.ts`; the checks use the spec schema generated from it).
 *
 * @example
 * ```ts
 * import { validateInferenceService } from "./kind.ts";
 * const result = validateInferenceService({ model: "m", gpuType: "T4" });
 * if (!result.ok) result.message; // 'spec.gpuType: "T4" is not supported; use one of A100, H100, L40S, none'
 * ```
 *
 * @module
 */
import type { V1ObjectMeta } from "../models.ts";
import type { KubeObject } from "../../kube/mod.ts";
import { INFERENCE_SERVICE_SPEC } from "../_spec_schemas.ts";
import { checkResources } from "../pod_fields.ts";
import { type Problem, validateSpec, type Validation } from "../validation.ts";
import type { WorkloadStatus } from "../workload_status.ts";
import { MAX_CPU_BATCH_SIZE } from "./gpu.ts";
import type { InferenceSpec } from "./schema.ts";

export type { InferenceSpec };
export { INFERENCE_SERVICES } from "../api_group.ts";

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
 * import { validateInferenceService } from "./kind.ts";
 * validateInferenceService({ model: "HuggingFaceTB/SmolLM2-360M-Instruct" }).ok; // true
 * ```
 */
export function validateInferenceService(spec: unknown): Validation<InferenceSpec> {
  return validateSpec<InferenceSpec>(INFERENCE_SERVICE_SPEC, spec, (parsed) => {
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
