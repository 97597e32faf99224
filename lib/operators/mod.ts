/**
 * The pure parts of kinglet's three operators: schemas and validation,
 * CustomResourceDefinitions, desired children, status and conditions, and
 * the DatabaseCluster state machine. Nothing here does I/O; reconcilers
 * combine these with the client and the runtime.
 *
 * A reconcile of a WebApp, in outline (InferenceService is the same with its
 * own names; DatabaseCluster adds the credentials Secret and an Event per
 * state transition):
 *
 * ```ts
 * import {
 *   invalidWorkloadStatus, renderWebApp, validateWebApp, type WebApp, workloadStatus,
 * } from "./mod.ts";
 * import type { KubeObject } from "../kube/mod.ts";
 *
 * function desiredStatus(object: KubeObject, now: Date) {
 *   const result = validateWebApp(object.spec);
 *   if (!result.ok) return invalidWorkloadStatus(object, result.message, now);
 *   const app = { ...object, spec: result.spec } as WebApp;
 *   const { deployment } = renderWebApp(app); // apply both children with FIELD_MANAGER
 *   return workloadStatus(app, app.spec.port, deployment, now); // pass the observed Deployment instead
 * }
 * desiredStatus({
 *   apiVersion: "kinglet.dev/v1alpha1", kind: "WebApp",
 *   metadata: { name: "shop", namespace: "default", uid: "6f1c…", generation: 1 },
 *   spec: { image: "nginx:1.27" },
 * }, new Date());
 * ```
 *
 * @module
 */
export * from "./api_group.ts";
export * from "./conditions.ts";
export * from "./labels.ts";
export * from "./pod_fields.ts";
export * from "./quantity.ts";
export * from "./spec_check.ts";
export * from "./validation.ts";
export * from "./workload_status.ts";
export * from "./workload_render.ts";
export * from "./schema/conditions.ts";
export * from "./schema/pod_fields.ts";
export * from "./schema/quantity.ts";
export * from "./schema/spec_schema.ts";
export * from "./schema/workload_status.ts";
export * from "./webapp/kind.ts";
export * from "./webapp/schema.ts";
export * from "./webapp/render.ts";
export * from "./database/engines.ts";
export * from "./database/password.ts";
export * from "./database/kind.ts";
export * from "./database/conversion.ts";
export * from "./database/admission.ts";
export * from "./database/schema.ts";
export * from "./database/render.ts";
export * from "./database/state.ts";
export * from "./database/status.ts";
export * from "./inference/kind.ts";
export * from "./inference/schema.ts";
export * from "./inference/render.ts";

import type { z } from "npm:zod@4.6.7";
import type { CustomKind } from "../crd/mod.ts";
import { databaseClusterDefinition } from "./database/schema.ts";
import { inferenceServiceDefinition } from "./inference/schema.ts";
import { webAppDefinition } from "./webapp/schema.ts";

/** The kinds kinglet serves, in the order their CRDs are listed. */
export const KIND_DEFINITIONS: readonly CustomKind<z.ZodType, z.ZodType>[] = [
  webAppDefinition,
  databaseClusterDefinition,
  inferenceServiceDefinition,
];

/** The name of each kind's constant in the generated `_spec_schemas.ts`. */
export const SPEC_SCHEMA_NAMES: Readonly<Record<string, string>> = {
  WebApp: "WEB_APP_SPEC",
  DatabaseCluster: "DATABASE_CLUSTER_SPEC",
  InferenceService: "INFERENCE_SERVICE_SPEC",
};
