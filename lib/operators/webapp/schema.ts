/**
 * The `WebApp` kind (`wa`): a container image run as a Deployment behind a
 * ClusterIP Service. Its zod schema is the TypeScript type, the CRD and the
 * spec schema that `kind.ts` validates with.
 *
 * The Service listens on `spec.port` and forwards to the container port of
 * the same number (named `http`), so the URL in status,
 * `http://<name>.<namespace>.svc.cluster.local:<port>`, is the one a client
 * in the cluster uses and the one the container logs at startup.
 *
 * @example
 * ```ts
 * import { webAppSpecSchema } from "./schema.ts";
 * webAppSpecSchema.parse({ image: "nginx:1.27" }).replicas; // 1
 * ```
 *
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { type CustomKind, defineKind } from "../../crd/mod.ts";
import { WEB_APPS } from "../api_group.ts";
import { kingletKindOptions } from "../schema/kind_options.ts";
import {
  envSchema,
  imageSchema,
  nodeSelectorSchema,
  resourcesSchema,
  tolerationsSchema,
} from "../schema/pod_fields.ts";
import { workloadStatusSchema } from "../schema/workload_status.ts";

/** Desired state of a WebApp. */
export const webAppSpecSchema = z.object({
  image: imageSchema.describe("Container image to run, e.g. ghcr.io/acme/shop:1.4.2."),
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

/** The WebApp CRD's definition. */
export const webAppDefinition: CustomKind<
  typeof webAppSpecSchema,
  typeof workloadStatusSchema
> = defineKind({
  ...kingletKindOptions(WEB_APPS, 63),
  singular: "webapp",
  shortNames: ["wa"],
  description: "WebApp runs a container image as a Deployment behind a ClusterIP Service.",
  spec: webAppSpecSchema,
  status: workloadStatusSchema,
  scale: { labelSelectorPath: ".status.selector" },
  printerColumns: [
    { name: "Ready", type: "integer", jsonPath: ".status.readyReplicas" },
    { name: "Desired", type: "integer", jsonPath: ".spec.replicas" },
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "Image", type: "string", jsonPath: ".spec.image" },
    { name: "URL", type: "string", jsonPath: ".status.url", priority: 1 },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
});
