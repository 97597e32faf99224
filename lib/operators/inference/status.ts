/**
 * The status of an InferenceService, built from its observed Deployment:
 * replica counts, phase, conditions, URL and the selector the scale
 * subresource reports. Pure: the reconciler passes in what it observed and
 * the time.
 *
 * A GPU pod that no node can take (no node labelled with its GPU type, or
 * none with a free GPU) stays Pending, so the InferenceService stays
 * Progressing until the Deployment's progress deadline turns it Degraded.
 *
 * @example
 * ```ts
 * import { inferenceServiceStatus } from "./status.ts";
 * inferenceServiceStatus({
 *   apiVersion: "kinglet.dev/v1alpha1",
 *   kind: "InferenceService",
 *   metadata: { name: "chat", namespace: "ml", generation: 1 },
 *   spec: { model: "HuggingFaceTB/SmolLM2-360M-Instruct", replicas: 1, gpuType: "none", maxBatchSize: 8 },
 * }, undefined, new Date()).phase; // "Pending"
 * ```
 *
 * @module
 */
import type { V1Deployment } from "../models.ts";
import { labelSelector, selectorLabels } from "../labels.ts";
import { type WorkloadStatus, workloadStatus } from "../workload_status.ts";
import { inferenceServiceUrl } from "./render.ts";
import type { InferenceService } from "./kind.ts";

/**
 * The status of an InferenceService with a valid spec, given its Deployment
 * as observed (`undefined` when it does not exist yet).
 *
 * @example
 * ```ts
 * import { inferenceServiceStatus } from "./status.ts";
 * inferenceServiceStatus({
 *   apiVersion: "kinglet.dev/v1alpha1",
 *   kind: "InferenceService",
 *   metadata: { name: "chat", namespace: "ml", generation: 1 },
 *   spec: { model: "HuggingFaceTB/SmolLM2-360M-Instruct", replicas: 1, gpuType: "none", maxBatchSize: 8 },
 * }, undefined, new Date()).selector;
 * // "app.kubernetes.io/instance=chat,app.kubernetes.io/name=inferenceservice"
 * ```
 */
export function inferenceServiceStatus(
  isvc: InferenceService,
  deployment: V1Deployment | undefined,
  now: Date,
): WorkloadStatus {
  return workloadStatus(
    isvc,
    {
      desiredReplicas: isvc.spec.replicas,
      url: inferenceServiceUrl(isvc),
      selector: labelSelector(selectorLabels(isvc)),
    },
    deployment,
    now,
  );
}
