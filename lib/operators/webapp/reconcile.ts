/**
 * The WebApp controller: a Deployment and a Service per WebApp; see
 * `workload_controller.ts` for what it does.
 *
 * @example
 * ```ts
 * import { webAppController } from "./reconcile.ts";
 * webAppController().name; // "webapp"
 * ```
 *
 * @module
 */
import type { KubeObject } from "../../kube/mod.ts";
import { type ControllerSpec, fixedErrorPolicy } from "../../runtime/mod.ts";
import { workloadController, type WorkloadControllerOptions } from "../workload_controller.ts";
import { renderWebApp } from "./render.ts";
import { validateWebApp, WEB_APPS } from "./kind.ts";

/**
 * The WebApp controller; a converged WebApp is reconciled again after
 * `requeueAfterMs` (300 s by default), a failed reconcile retried after 10 s.
 */
export function webAppController(
  options: WorkloadControllerOptions = {},
): ControllerSpec<KubeObject> {
  return workloadController({
    name: "webapp",
    resource: WEB_APPS,
    validate: validateWebApp,
    render: renderWebApp,
    port: (app) => app.spec.port,
    requeueAfterMs: options.requeueAfterMs ?? 300_000,
    errorPolicy: fixedErrorPolicy(10_000),
  }, options.now);
}
