/**
 * The controller shape WebApp and InferenceService share: validate the spec,
 * server-side apply a Deployment and a Service owned by the primary, and
 * report status from the Deployment. Deleting the primary needs no
 * finalizer: its children carry owner references and the garbage collector
 * removes them.
 *
 * @example
 * ```ts
 * import { workloadController } from "./workload_controller.ts";
 * import { renderWebApp } from "./webapp/render.ts";
 * import { validateWebApp, WEB_APPS } from "./webapp/kind.ts";
 * import { invalidWebAppStatus, webAppStatus } from "./webapp/status.ts";
 * import type { OperatorDeps } from "./operator_deps.ts";
 * declare const deps: OperatorDeps;
 * const spec = workloadController(deps, {
 *   name: "webapp",
 *   resource: WEB_APPS,
 *   validate: validateWebApp,
 *   render: renderWebApp,
 *   status: webAppStatus,
 *   invalidStatus: invalidWebAppStatus,
 *   requeueAfterMs: 300_000,
 *   errorPolicy: () => 10_000,
 * });
 * spec.owns?.length; // 2
 * ```
 *
 * @module
 */
import type { V1Deployment, V1ObjectMeta, V1Service } from "./models.ts";
import { DEPLOYMENTS, type KubeObject, type Resource, SERVICES } from "../kube/mod.ts";
import { type ControllerSpec, type ErrorPolicy, projectPrimary } from "../runtime/mod.ts";
import { guardChildren } from "./child_errors.ts";
import { MANAGED_SELECTOR } from "./labels.ts";
import { applyChildAsKinglet, type OperatorDeps } from "./operator_deps.ts";
import { announcePhase, rejectSpec, writeStatus } from "./status_writes.ts";
import type { Validation } from "./validation.ts";
import type { WorkloadStatus } from "./workload_status.ts";

/** A primary with a validated spec. */
export interface Workload<S> extends KubeObject {
  metadata: V1ObjectMeta;
  spec: S;
  status?: WorkloadStatus;
}

/** What differs between the workload kinds. */
export interface WorkloadKind<S, P extends Workload<S>> {
  name: string;
  resource: Resource;
  validate(spec: unknown): Validation<S>;
  render(primary: P): { deployment: V1Deployment; service: V1Service };
  status(primary: P, deployment: V1Deployment | undefined, now: Date): WorkloadStatus;
  invalidStatus(primary: P, message: string, now: Date): WorkloadStatus;
  /**
   * How long after a reconcile that converged the primary is looked at
   * again, to repair drift no watch reports (such as a child that lost its
   * owner reference).
   */
  requeueAfterMs: number;
  /** What a failed reconcile costs; see error_policy.ts. */
  errorPolicy: ErrorPolicy;
}

/** A controller for one workload kind over `deps`. */
export function workloadController<S, P extends Workload<S>>(
  deps: OperatorDeps,
  kind: WorkloadKind<S, P>,
): ControllerSpec<KubeObject> {
  const now = deps.now ?? (() => new Date());
  return {
    name: kind.name,
    resource: kind.resource,
    transform: projectPrimary,
    errorPolicy: kind.errorPolicy,
    owns: [
      { resource: DEPLOYMENTS, labelSelector: MANAGED_SELECTOR },
      { resource: SERVICES, metadataOnly: true, labelSelector: MANAGED_SELECTOR },
    ],
    applyChild: applyChildAsKinglet(deps),
    async reconcile(object, { signal, children }) {
      if (object.metadata?.deletionTimestamp) return {};
      const stored = object as P;
      const valid = kind.validate(object.spec);
      if (!valid.ok) {
        const status = kind.invalidStatus(stored, valid.message, now());
        return await rejectSpec(deps, kind.resource, stored, valid.message, status, signal);
      }
      const primary = { ...stored, spec: valid.spec } as P;
      const desired = kind.render(primary);
      const [deployment] = await guardChildren(
        deps,
        kind.resource,
        stored,
        () =>
          Promise.all([
            children.apply(DEPLOYMENTS, desired.deployment as KubeObject, signal),
            children.apply(SERVICES, desired.service as KubeObject, signal),
          ]),
        (message) => kind.invalidStatus(stored, message, now()),
        signal,
      );
      const status = kind.status(primary, deployment as V1Deployment, now());
      announcePhase(deps, stored, status.phase, `${object.kind} is ${status.phase}`);
      await writeStatus(deps, kind.resource, stored, status, signal);
      return { requeueAfterMs: kind.requeueAfterMs };
    },
  };
}
