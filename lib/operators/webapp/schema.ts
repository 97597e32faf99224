/**
 * The `WebApp` kind (`wa`): a container image run as a Deployment behind a
 * ClusterIP Service. Its zod schema is the TypeScript type, the semantic
 * validation and the CRD.
 *
 * The Service listens on `spec.port` and forwards to the container port of
 * the same number (named `http`), so the URL in status,
 * `http://<name>.<namespace>.svc.cluster.local:<port>`, is the one a client
 * in the cluster uses and the one the container logs at startup.
 *
 * @example
 * ```ts
 * import { validateWebApp } from "./schema.ts";
 * const result = validateWebApp({ image: "nginx:1.27" });
 * if (result.ok) result.spec.replicas; // 1
 * ```
 *
 * @module
 */
import type { V1ObjectMeta } from "@kubernetes/client-node";
import { z } from "zod";
import type { KubeObject, Resource } from "../../kube/types.ts";
import { GROUP, type KindDefinition, VERSION } from "../crd.ts";
import {
  checkEnv,
  checkNodeSelector,
  checkResources,
  checkTolerations,
  envSchema,
  nodeSelectorSchema,
  resourcesSchema,
  tolerationsSchema,
} from "../pod_fields.ts";
import { validateSpec, type Validation } from "../validation.ts";
import { type WorkloadStatus, workloadStatusSchema } from "../workload_status.ts";

/** The `webapps.kinglet.dev` resource. */
export const WEB_APPS: Resource = {
  group: GROUP,
  version: VERSION,
  plural: "webapps",
  kind: "WebApp",
  namespaced: true,
};

/** Desired state of a WebApp. */
export const webAppSpecSchema = z.object({
  image: z.string().min(1).regex(/^\S+$/, { error: "must not contain whitespace" }).describe(
    "Container image to run, e.g. ghcr.io/acme/shop:1.4.2.",
  ),
  replicas: z.int32().min(0).default(1).describe(
    "Number of pods; 0 keeps the Service but stops every pod. Autoscalers set it through the " +
      "scale subresource.",
  ),
  port: z.int32().min(1).max(65535).default(8080).describe(
    "Port the container listens on; the Service exposes the same port.",
  ),
  env: envSchema.optional(),
  resources: resourcesSchema.optional(),
  nodeSelector: nodeSelectorSchema.optional(),
  tolerations: tolerationsSchema.optional(),
}).describe("Desired state of the WebApp.");

/** A WebApp spec with defaults applied. */
export type WebAppSpec = z.output<typeof webAppSpecSchema>;

/** A WebApp object whose spec passed {@link validateWebApp}. */
export interface WebApp extends KubeObject {
  metadata: V1ObjectMeta;
  spec: WebAppSpec;
  status?: WorkloadStatus;
}

/**
 * Parses a stored spec and checks what the CRD schema cannot: unique env
 * names, requests within limits, well-formed tolerations and node selectors.
 *
 * @example
 * ```ts
 * import { validateWebApp } from "./schema.ts";
 * const result = validateWebApp({ image: "nginx", port: 0 });
 * if (!result.ok) result.message; // "spec.port: must be at least 1, got 0"
 * ```
 */
export function validateWebApp(spec: unknown): Validation<WebAppSpec> {
  return validateSpec(webAppSpecSchema, spec, (parsed) => [
    ...checkEnv(parsed.env, ["env"]),
    ...checkResources(parsed.resources, ["resources"]),
    ...checkNodeSelector(parsed.nodeSelector, ["nodeSelector"]),
    ...checkTolerations(parsed.tolerations, ["tolerations"]),
  ]);
}

/** The WebApp CRD's definition. */
export const webAppDefinition: KindDefinition = {
  resource: WEB_APPS,
  singular: "webapp",
  shortNames: ["wa"],
  categories: ["kinglet"],
  description: "WebApp runs a container image as a Deployment behind a ClusterIP Service.",
  spec: webAppSpecSchema,
  status: workloadStatusSchema,
  scale: true,
  maxNameLength: 63,
  printerColumns: [
    { name: "Ready", type: "integer", jsonPath: ".status.readyReplicas" },
    { name: "Desired", type: "integer", jsonPath: ".spec.replicas" },
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "Image", type: "string", jsonPath: ".spec.image" },
    { name: "URL", type: "string", jsonPath: ".status.url", priority: 1 },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
};
