/**
 * What every reconciler of kinglet's operators is given by the CLI, and how
 * they write their children: server-side apply as kinglet, taking over
 * conflicting fields.
 *
 * @example
 * ```ts
 * import { applyChildAsKinglet, type OperatorDeps } from "./operator_deps.ts";
 * import { type KubeObject, SERVICES } from "../kube/mod.ts";
 * // Needs a cluster: `deps.client` is usually a `KubeClient`.
 * async function example(deps: OperatorDeps, service: KubeObject, signal: AbortSignal) {
 *   return await applyChildAsKinglet(deps)(SERVICES, service, signal);
 * }
 * ```
 *
 * @module
 */
import type { KubeClient, KubeObject } from "../kube/mod.ts";
import type { ApplyChild, EventInit } from "../runtime/mod.ts";
import { FIELD_MANAGER } from "./labels.ts";

/** What every reconciler is given by the CLI. */
export interface OperatorDeps {
  /** The API client, or the part of it the reconcilers use. */
  client: Pick<KubeClient, "apply" | "create" | "delete" | "list" | "get" | "patch">;
  /** Where Events go, usually an `EventRecorder`. */
  events: { publish(regarding: KubeObject, init: EventInit): void };
  /** Defaults to `new Date()`. */
  now?: () => Date;
}

/** Writes a child the way every kinglet controller does: server-side apply as kinglet, forced. */
export function applyChildAsKinglet(deps: OperatorDeps): ApplyChild {
  return (resource, child, signal) =>
    deps.client.apply(resource, child, { fieldManager: FIELD_MANAGER, force: true, signal });
}
