/**
 * The WebApp controller: a Deployment and a Service per WebApp; see
 * `workload_controller.ts` for what it does.
 *
 * @example
 * ```ts
 * import { webAppController } from "./reconcile.ts";
 * import type { OperatorDeps } from "../operator_deps.ts";
 * declare const deps: OperatorDeps;
 * webAppController(deps).name; // "webapp"
 * ```
 *
 * @module
 */
import type { KubeObject } from "../../kube/mod.ts";
import { type ControllerSpec, fixedErrorPolicy } from "../../runtime/mod.ts";
import type { OperatorDeps } from "../operator_deps.ts";
import { workloadController } from "../workload_controller.ts";
import { renderWebApp } from "./render.ts";
import { validateWebApp, WEB_APPS } from "./kind.ts";
import { invalidWebAppStatus, webAppStatus } from "./status.ts";

/** Options of {@link webAppController}. */
export interface WebAppControllerOptions {
  /** How long after it converged a WebApp is reconciled again, to repair drift. Defaults to 300 s. */
  requeueAfterMs?: number;
}

/** The WebApp controller over `deps`; a failed reconcile is retried after 10 s. */
export function webAppController(
  deps: OperatorDeps,
  options: WebAppControllerOptions = {},
): ControllerSpec<KubeObject> {
  return workloadController(deps, {
    name: "webapp",
    resource: WEB_APPS,
    validate: validateWebApp,
    render: renderWebApp,
    status: webAppStatus,
    requeueAfterMs: options.requeueAfterMs ?? 300_000,
    errorPolicy: fixedErrorPolicy(10_000),
    invalidStatus: invalidWebAppStatus,
  });
}
