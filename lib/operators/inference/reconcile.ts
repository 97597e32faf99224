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
import { workloadController } from "../workload_controller.ts";
import { INFERENCE_PORT, renderInferenceService } from "./render.ts";
import { INFERENCE_SERVICES, validateInferenceService } from "./kind.ts";

/** Options of {@link inferenceServiceController}. */
export interface InferenceServiceControllerOptions {
  /** How long after it converged a InferenceService is reconciled again, to repair drift. Defaults to 30 s. */
  requeueAfterMs?: number;
  /** The clock of the conditions' transition times. Defaults to `new Date()`. */
  now?: () => Date;
}

/** The InferenceService controller; a failed reconcile is retried after 60 s. */
export function inferenceServiceController(
  options: InferenceServiceControllerOptions = {},
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
