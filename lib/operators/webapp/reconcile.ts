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
import type { ControllerSpec } from "../../runtime/mod.ts";
import type { OperatorDeps } from "../operator_deps.ts";
import { workloadController } from "../workload_controller.ts";
import { renderWebApp } from "./render.ts";
import { validateWebApp, WEB_APPS } from "./kind.ts";
import { invalidWebAppStatus, webAppStatus } from "./status.ts";

/** The WebApp controller over `deps`. */
export function webAppController(deps: OperatorDeps): ControllerSpec<KubeObject> {
  return workloadController(deps, {
    name: "webapp",
    resource: WEB_APPS,
    validate: validateWebApp,
    render: renderWebApp,
    status: webAppStatus,
    invalidStatus: invalidWebAppStatus,
  });
}
