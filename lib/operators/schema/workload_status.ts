/**
 * The zod schema of the status the Deployment-backed kinds (WebApp and
 * InferenceService) share, for the CRDs and the status types.
 *
 * @example
 * ```ts
 * import { workloadPhaseSchema } from "./workload_status.ts";
 * workloadPhaseSchema.options.includes("Degraded"); // true
 * ```
 *
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { standardConditionsSchema } from "./conditions.ts";

/** Phases of a Deployment-backed kind. */
export const workloadPhaseSchema = z.enum([
  "Pending",
  "Progressing",
  "Ready",
  "Degraded",
  "Invalid",
])
  .describe(
    "Pending: the Deployment does not exist yet. Progressing: a rollout or scale is under way. " +
      "Ready: every replica is updated and available. Degraded: replicas were lost or the " +
      "rollout stalled. Invalid: the spec breaks a rule; see the InvalidSpec condition.",
  );

/** The phase of a Deployment-backed kind. */
export type WorkloadPhase = z.infer<typeof workloadPhaseSchema>;

const count = (what: string) => z.int32().min(0).optional().describe(what);

/** Observed state of a Deployment-backed kind. */
export const workloadStatusSchema = z.object({
  observedGeneration: z.int().min(0).optional().describe(
    "The .metadata.generation this status describes.",
  ),
  replicas: count("Pods of the Deployment, of any version and state."),
  readyReplicas: count("Pods that pass their readiness checks."),
  availableReplicas: count("Pods ready for at least the Deployment's minReadySeconds."),
  url: z.string().optional().describe("In-cluster URL of the Service."),
  selector: z.string().optional().describe(
    "Label selector of the pods, for the scale subresource and autoscalers.",
  ),
  phase: workloadPhaseSchema.optional(),
  conditions: standardConditionsSchema,
}).describe("Observed state, written by kinglet.");

/** Observed state of a Deployment-backed kind. */
export type WorkloadStatus = z.infer<typeof workloadStatusSchema>;
