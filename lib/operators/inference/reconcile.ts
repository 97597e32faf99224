/**
 * The InferenceService controller: a GPU-aware Deployment and a Service per
 * InferenceService; see `workload_controller.ts` for what it does.
 *
 * @example
 * ```ts
 * import { inferenceServiceController } from "./reconcile.ts";
 * inferenceServiceController().name; // "inferenceservice"
 * ```
 *
 * @module
 */
import type { KubeObject } from "../../kube/mod.ts";
import { type ControllerSpec, fixedErrorPolicy } from "../../runtime/mod.ts";
import { workloadController, type WorkloadControllerOptions } from "../workload_controller.ts";
import { INFERENCE_PORT, renderInferenceService } from "./render.ts";
import { INFERENCE_SERVICES, validateInferenceService } from "./kind.ts";

/**
 * The InferenceService controller; a converged InferenceService is
 * reconciled again after `requeueAfterMs` (30 s by default), a failed
 * reconcile retried after 60 s.
 */
export function inferenceServiceController(
  options: WorkloadControllerOptions = {},
): ControllerSpec<KubeObject> {
  return workloadController({
    name: "inferenceservice",
    resource: INFERENCE_SERVICES,
    validate: validateInferenceService,
    render: renderInferenceService,
    port: () => INFERENCE_PORT,
    requeueAfterMs: options.requeueAfterMs ?? 30_000,
    errorPolicy: fixedErrorPolicy(60_000),
  }, options.now);
}
