/**
 * Status conditions in a CRD: the zod schema of one `metav1.Condition`
 * ({@link conditionSchema}) and of the list a status holds
 * ({@link conditionsSchema}), with the limits the API server holds built-in
 * conditions to (type and reason patterns, lengths, a non-negative
 * `observedGeneration`). The list is a map keyed by `type`
 * (`x-kubernetes-list-type: map`), so the API server refuses two conditions
 * of one type and server-side apply merges them per type, as for built-in
 * kinds. Both parse to the runtime's `Condition`, which `setCondition`
 * (`./runtime`) builds within the same limits.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { conditionsSchema, defineKind } from "./mod.ts";
 * const backups = defineKind({
 *   group: "example.com",
 *   version: "v1",
 *   kind: "Backup",
 *   spec: z.object({ schedule: z.string() }),
 *   status: z.object({
 *     observedGeneration: z.int().optional(),
 *     conditions: conditionsSchema("Ready: whether copies are scheduled."),
 *   }),
 * });
 * const root = backups.crd().spec.versions[0]?.schema.openAPIV3Schema;
 * const status = (root?.properties as { status: { properties: Record<string, object> } }).status;
 * status.properties.conditions; // { description: "Ready: ...", type: "array", ..., "x-kubernetes-list-type": "map" }
 * ```
 *
 * @module
 */
import { z } from "npm:zod@4.6.7";
import {
  type Condition,
  MAX_MESSAGE,
  MAX_REASON,
  MAX_TYPE,
  REASON_PATTERN,
  TYPE_PATTERN,
} from "../kube/condition.ts";
import type { OptionalZodSchema, ZodSchema } from "./types.ts";

const condition = z.object({
  type: z.string().max(MAX_TYPE).regex(TYPE_PATTERN).describe(
    "Type of condition in CamelCase or in foo.example.com/CamelCase, e.g. Ready.",
  ),
  status: z.enum(["True", "False", "Unknown"]).describe(
    "Status of the condition: True, False or Unknown.",
  ),
  observedGeneration: z.int().min(0).optional().describe(
    "The .metadata.generation the condition was set for; older than the object's, it is stale.",
  ),
  lastTransitionTime: z.string().meta({ format: "date-time" }).describe(
    "When the condition last changed from one status to another.",
  ),
  reason: z.string().min(1).max(MAX_REASON).regex(REASON_PATTERN).describe(
    "Programmatic identifier of the condition's last transition, in CamelCase.",
  ),
  message: z.string().max(MAX_MESSAGE).describe(
    "Human-readable details of the transition; may be empty.",
  ),
});

/**
 * One condition, as `metav1.Condition` defines it, for a field that holds a
 * single one; a status's list is {@link conditionsSchema}. Its descriptions
 * are generic.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { conditionSchema } from "./conditions.ts";
 * z.object({ latest: conditionSchema }).safeParse({
 *   latest: {
 *     type: "Ready", status: "True", lastTransitionTime: "2025-01-01T00:00:00Z",
 *     reason: "not ready", message: "",
 *   },
 * }).success; // false: a reason is CamelCase
 * ```
 */
export const conditionSchema: ZodSchema<Condition> = condition;

/**
 * A status's conditions: an optional list of {@link conditionSchema} keyed
 * by `type` (`x-kubernetes-list-type: map`, `x-kubernetes-list-map-keys:
 * [type]`), as in every built-in kind's status.
 *
 * @param description what `kubectl explain` says of the list: name the
 * condition types the kind reports. Defaults to "Latest observations of the
 * object's state."
 * @example
 * ```ts
 * import { conditionsSchema, toKubernetesSchema } from "./mod.ts";
 * const schema = toKubernetesSchema(conditionsSchema("Ready: whether the copies are scheduled."));
 * schema["x-kubernetes-list-type"]; // "map"
 * schema.description; // "Ready: whether the copies are scheduled."
 * ```
 */
export function conditionsSchema(
  description = "Latest observations of the object's state.",
): OptionalZodSchema<Condition[]> {
  return z.array(condition)
    .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"] })
    .describe(description)
    .optional();
}
