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
import { workloadController } from "../workload_controller.ts";
import { renderWebApp } from "./render.ts";
import { validateWebApp, WEB_APPS } from "./kind.ts";

/** Options of {@link webAppController}. */
export interface WebAppControllerOptions {
  /** How long after it converged a WebApp is reconciled again, to repair drift. Defaults to 300 s. */
  requeueAfterMs?: number;
  /** The clock of the conditions' transition times. Defaults to `new Date()`. */
  now?: () => Date;
}

/** The WebApp controller; a failed reconcile is retried after 10 s. */
export function webAppController(
  options: WebAppControllerOptions = {},
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
