/**
 * The zod schema of status conditions in the shape of `metav1.Condition`,
 * for the CRDs and the `Condition` type.
 *
 * @example
 * ```ts
 * import { conditionSchema } from "./conditions.ts";
 * conditionSchema.shape.status.options; // ["True", "False", "Unknown"]
 * ```
 *
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { MAX_MESSAGE, REASON_PATTERN, TYPE_PATTERN } from "../../runtime/mod.ts";

/** One condition, as `metav1.Condition` defines it: the runtime's `Condition`. */
export const conditionSchema = z.object({
  type: z.string().max(316).regex(TYPE_PATTERN).describe(
    "Type of condition in CamelCase: Ready, Progressing, Degraded or InvalidSpec.",
  ),
  status: z.enum(["True", "False", "Unknown"]).describe("Status of the condition."),
  observedGeneration: z.int().min(0).optional().describe(
    "The .metadata.generation the condition was set for.",
  ),
  lastTransitionTime: z.string().meta({ format: "date-time" }).describe(
    "When the condition last changed from one status to another.",
  ),
  reason: z.string().min(1).max(1024).regex(REASON_PATTERN).describe(
    "Programmatic identifier of the condition's last transition, in CamelCase.",
  ),
  message: z.string().max(MAX_MESSAGE).describe("Human-readable details of the transition."),
});

/** Conditions as a list keyed by `type`, so server-side apply merges them per type. */
export const conditionsSchema = z.array(conditionSchema)
  .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"] })
  .describe("Latest observations of the object's state.");
