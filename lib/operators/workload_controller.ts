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
 * const spec = workloadController({
 *   name: "webapp",
 *   resource: WEB_APPS,
 *   validate: validateWebApp,
 *   render: renderWebApp,
 *   port: (app) => app.spec.port,
 *   requeueAfterMs: 300_000,
 *   errorPolicy: () => 10_000,
 * });
 * spec.owns?.length; // 2
 * ```
 *
 * @module
 */
import type { V1Deployment, V1ObjectMeta } from "./models.ts";
import { DEPLOYMENTS, type KubeObject, type Resource, SERVICES } from "../kube/mod.ts";
import { type ControllerSpec, type ErrorPolicy, projectPrimary } from "../runtime/mod.ts";
import { guardChildren } from "./child_errors.ts";
import { FIELD_MANAGER, MANAGED_SELECTOR } from "./labels.ts";
import { announcePhase, rejectSpec } from "./status_writes.ts";
import type { Validation } from "./validation.ts";
import { invalidWorkloadStatus, type WorkloadStatus, workloadStatus } from "./workload_status.ts";
import type { WorkloadChildren } from "./workload_render.ts";

/** A primary with a validated spec. */
export interface Workload<S extends { replicas: number }> extends KubeObject {
  metadata: V1ObjectMeta;
  spec: S;
  status?: WorkloadStatus;
}

/** Options of a workload kind's controller (`webAppController`, `inferenceServiceController`). */
export interface WorkloadControllerOptions {
  /**
   * How long after it converged a primary is reconciled again, to repair
   * drift. Defaults to the kind's own interval.
   */
  requeueAfterMs?: number;
  /** The clock of the conditions' transition times. Defaults to `new Date()`. */
  now?: () => Date;
}

/** What differs between the workload kinds. */
export interface WorkloadKind<S extends { replicas: number }, P extends Workload<S>> {
  name: string;
  resource: Resource;
  validate(spec: unknown): Validation<S>;
  render(primary: P): WorkloadChildren;
  /** The port the primary's Service exposes, for the URL in its status. */
  port(primary: P): number;
  /**
   * How long after a reconcile that converged the primary is looked at
   * again, to repair drift no watch reports (such as a child that lost its
   * owner reference).
   */
  requeueAfterMs: number;
  /** What a failed reconcile costs; see error_policy.ts. */
  errorPolicy: ErrorPolicy;
}

/**
 * A controller for one workload kind: its children and status are written by
 * server-side apply as kinglet. `now` stamps the conditions; it defaults to
 * `new Date()`.
 */
export function workloadController<S extends { replicas: number }, P extends Workload<S>>(
  kind: WorkloadKind<S, P>,
  now: () => Date = () => new Date(),
): ControllerSpec<KubeObject> {
  return {
    name: kind.name,
    resource: kind.resource,
    transform: projectPrimary,
    errorPolicy: kind.errorPolicy,
    owns: [
      { resource: DEPLOYMENTS, labelSelector: MANAGED_SELECTOR },
      { resource: SERVICES, labelSelector: MANAGED_SELECTOR },
    ],
    fieldManager: FIELD_MANAGER,
    async reconcile(object, context) {
      const { signal, children } = context;
      if (object.metadata?.deletionTimestamp) return {};
      const stored = object as P;
      const valid = kind.validate(object.spec);
      if (!valid.ok) {
        const status = invalidWorkloadStatus(stored, valid.message, now());
        return await rejectSpec(context, stored, valid.message, status);
      }
      const primary = { ...stored, spec: valid.spec } as P;
      const desired = kind.render(primary);
      const [deployment] = await guardChildren(
        context,
        stored,
        () =>
          Promise.all([
            children.apply(DEPLOYMENTS, desired.deployment as KubeObject, signal),
            children.apply(SERVICES, desired.service as KubeObject, signal),
          ]),
        (message) => invalidWorkloadStatus(stored, message, now()),
        now,
      );
      const status = workloadStatus(primary, kind.port(primary), deployment as V1Deployment, now());
      announcePhase(context.events, stored, status.phase, `${object.kind} is ${status.phase}`);
      await context.status(status);
      return { requeueAfterMs: kind.requeueAfterMs };
    },
  };
}
