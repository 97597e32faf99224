/**
 * Helpers for the objects a reconcile reads and writes: status conditions
 * with `metav1.Condition` semantics ({@link setCondition}), the controller
 * owner reference of a child ({@link controllerReference}), and equality of
 * JSON values ignoring key order ({@link sameJson}).
 *
 * @example
 * ```ts
 * import { controllerReference, sameJson, setCondition } from "./mod.ts";
 * const backup = {
 *   apiVersion: "example.com/v1", kind: "Backup",
 *   metadata: { name: "nightly", namespace: "shop", uid: "6f1c", generation: 2 },
 *   status: { observedGeneration: 1 },
 * };
 * const status = {
 *   observedGeneration: backup.metadata.generation,
 *   conditions: setCondition(undefined, { type: "Ready", status: "True", reason: "Rendered", message: "" }),
 * };
 * sameJson(backup.status, status); // false: write it
 * controllerReference(backup).uid; // "6f1c"
 * ```
 *
 * @module
 */
export * from "./conditions.ts";
export * from "./owner_reference.ts";
export * from "./same_json.ts";
