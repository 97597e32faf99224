/**
 * Status of the Deployment-backed kinds (WebApp and InferenceService): how a
 * phase follows from the observed Deployment, and the status builders (the
 * status schema they share is in `schema/workload_status.ts`).
 *
 * The phase follows `kubectl rollout status`: a rollout is in progress until
 * the Deployment controller has observed the latest generation, every replica
 * is updated, old replicas are gone and the updated ones are available. Once
 * a rollout has completed (the Deployment's `Progressing` condition has
 * reason `NewReplicaSetAvailable`), losing available replicas is `Degraded`,
 * as is a rollout past its progress deadline.
 *
 * @example
 * ```ts
 * import { assessDeployment } from "./workload_status.ts";
 * assessDeployment(2, undefined).phase; // "Pending"
 * ```
 *
 * @module
 */
import type { V1Deployment } from "./models.ts";
import { type Health, setStandardConditions } from "./conditions.ts";
import { labelSelector, selectorLabels } from "./labels.ts";
import { workloadUrl } from "./workload_render.ts";
import type { WorkloadPhase, WorkloadStatus } from "./schema/workload_status.ts";

export type { WorkloadPhase, WorkloadStatus };
import type { KubeObject } from "../kube/mod.ts";

/** A phase with the reason and message that explain it. */
export interface Assessment {
  phase: Exclude<WorkloadPhase, "Invalid">;
  reason: string;
  message: string;
}

/**
 * Where an observed Deployment stands relative to the desired replica count.
 *
 * @example
 * ```ts
 * import { assessDeployment } from "./workload_status.ts";
 * assessDeployment(1, {
 *   metadata: { generation: 1 },
 *   spec: { replicas: 1, selector: {}, template: {} },
 *   status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 },
 * }).phase; // "Ready"
 * ```
 */
export function assessDeployment(
  desired: number,
  deployment: V1Deployment | undefined,
): Assessment {
  if (!deployment) {
    return { phase: "Pending", reason: "Creating", message: "Waiting for the Deployment to exist" };
  }
  const status = deployment.status ?? {};
  const generation = deployment.metadata?.generation ?? 0;
  if ((status.observedGeneration ?? 0) < generation) {
    return {
      phase: "Progressing",
      reason: "RolloutPending",
      message: `Waiting for the Deployment controller to observe generation ${generation}`,
    };
  }
  const progressing = status.conditions?.find((condition) => condition.type === "Progressing");
  if (progressing?.status === "False" && progressing.reason === "ProgressDeadlineExceeded") {
    return {
      phase: "Degraded",
      reason: "ProgressDeadlineExceeded",
      message: `Rollout stalled: ${progressing.message ?? "progress deadline exceeded"}`,
    };
  }
  const specReplicas = deployment.spec?.replicas ?? 1;
  const updated = status.updatedReplicas ?? 0;
  const current = status.replicas ?? 0;
  const available = status.availableReplicas ?? 0;
  const rolling = (message: string): Assessment => ({
    phase: "Progressing",
    reason: "RollingOut",
    message,
  });
  if (specReplicas !== desired) {
    return rolling(`Scaling the Deployment from ${specReplicas} to ${desired} replicas`);
  }
  if (updated < desired) return rolling(`${updated} of ${desired} replicas updated`);
  if (current > updated) return rolling(`${current - updated} old replicas pending termination`);
  if (available < desired) {
    if (progressing?.reason === "NewReplicaSetAvailable") {
      return {
        phase: "Degraded",
        reason: "ReplicasUnavailable",
        message: `${available} of ${desired} replicas available`,
      };
    }
    return rolling(`${available} of ${desired} updated replicas available`);
  }
  if (desired === 0) return { phase: "Ready", reason: "ScaledToZero", message: "Scaled to zero" };
  return {
    phase: "Ready",
    reason: "Available",
    message: `${available} of ${desired} replicas available`,
  };
}

/**
 * The full status of a Deployment-backed primary with a valid spec, given
 * the port its Service exposes and its Deployment as observed (`undefined`
 * when it does not exist yet): replica counts, phase, conditions, the URL
 * and the selector the scale subresource reports.
 *
 * @throws {TypeError} as `setCondition`, or when the primary has no kind or
 * `metadata.name` (see `selectorLabels`).
 * @example
 * ```ts
 * import { workloadStatus } from "./workload_status.ts";
 * const status = workloadStatus(
 *   { kind: "WebApp", metadata: { name: "shop", namespace: "default", generation: 3 }, spec: { replicas: 1 } },
 *   8080,
 *   undefined,
 *   new Date(),
 * );
 * status.phase; // "Pending"
 * status.url; // "http://shop.default.svc.cluster.local:8080"
 * ```
 */
export function workloadStatus(
  primary: KubeObject & { spec: { replicas: number }; status?: WorkloadStatus },
  port: number,
  deployment: V1Deployment | undefined,
  now: Date,
): WorkloadStatus {
  const assessment = assessDeployment(primary.spec.replicas, deployment);
  const observedGeneration = primary.metadata?.generation;
  const health: Health = assessment.phase === "Pending" ? "Progressing" : assessment.phase;
  return {
    observedGeneration,
    replicas: deployment?.status?.replicas ?? 0,
    readyReplicas: deployment?.status?.readyReplicas ?? 0,
    availableReplicas: deployment?.status?.availableReplicas ?? 0,
    url: workloadUrl(primary, port),
    selector: labelSelector(selectorLabels(primary)),
    phase: assessment.phase,
    conditions: setStandardConditions(primary.status?.conditions, {
      health,
      reason: assessment.reason,
      message: assessment.message,
      observedGeneration,
    }, now),
  };
}

/**
 * The status of a primary whose spec failed validation: phase `Invalid`,
 * `InvalidSpec` True with the validation message, and the replica counts
 * kept from the previous status (the children are left as they were).
 *
 * @throws {TypeError} as `setCondition`.
 * @example
 * ```ts
 * import { invalidWorkloadStatus } from "./workload_status.ts";
 * invalidWorkloadStatus({ metadata: { generation: 2 } }, "spec.port: must be at most 65535, got 70000", new Date())
 *   .phase; // "Invalid"
 * ```
 */
export function invalidWorkloadStatus(
  primary: KubeObject & { status?: WorkloadStatus },
  message: string,
  now: Date,
): WorkloadStatus {
  const observedGeneration = primary.metadata?.generation;
  return {
    ...primary.status,
    observedGeneration,
    phase: "Invalid",
    conditions: setStandardConditions(primary.status?.conditions, {
      health: "Invalid",
      reason: "InvalidSpec",
      message,
      observedGeneration,
    }, now),
  };
}
