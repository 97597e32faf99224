/**
 * The controller: watcher → store → queue → reconciler (under the
 * semaphore) for one primary resource and what it owns or watches, and the
 * finalizer helpers a reconcile uses to clean up before deletion.
 *
 * See {@link Controller} for the guarantees (level-triggered, one reconcile
 * per key at a time, generation predicate, {@link TerminalError}; its
 * pacing, retries and error policies are in lib/runtime/scheduling/)
 * and {@link finalizer} for the add → cleanup → remove protocol.
 *
 * @example
 * ```ts
 * import { type ControllerSpec, TerminalError } from "./mod.ts";
 * import { CONFIG_MAPS, type KubeObject } from "../../kube/mod.ts";
 * const spec: ControllerSpec<KubeObject> = {
 *   name: "configmaps",
 *   resource: CONFIG_MAPS,
 *   reconcile(object) {
 *     if (!object.metadata?.name) throw new TerminalError("an object without a name");
 *     return Promise.resolve({ requeueAfterMs: 60_000 });
 *   },
 * };
 * ```
 *
 * @module
 */
export { Controller, type ControllerClient, type ControllerDeps } from "./controller.ts";
export * from "./finalizer.ts";
export { OWNER_LABELS, ownerKind } from "../children/mod.ts";
export type { PacingOptions, RateLimiter } from "../scheduling/mod.ts";
export { controllerOwnerKeys } from "./relations.ts";
export * from "./spec.ts";
