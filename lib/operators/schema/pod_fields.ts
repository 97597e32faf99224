/**
 * The zod schemas of the pod-level fields the kinds share (image,
 * environment, compute resources, node placement), for the CRDs and the
 * spec types.
 *
 * @example
 * ```ts
 * import { resourcesSchema } from "./pod_fields.ts";
 * resourcesSchema.parse({ requests: { cpu: "500m" } }).requests?.cpu; // "500m"
 * ```
 *
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { quantitySchema } from "./quantity.ts";

/** A container image reference; each kind describes what its image is for. */
export const imageSchema = z.string().min(1).regex(/^\S+$/, {
  error: "must not contain whitespace",
});

const keyRef = (what: string) =>
  z.object({
    name: z.string().min(1).describe(`Name of the ${what} in the object's namespace.`),
    key: z.string().min(1).describe(`Key within the ${what}.`),
    optional: z.boolean().optional().describe(
      `Start the pod even if the ${what} or key is missing.`,
    ),
  });

/** One environment variable: a literal value or a reference to a Secret or ConfigMap key. */
export const envVarSchema = z.object({
  name: z.string().min(1).describe("Name of the variable."),
  value: z.string().optional().describe("Literal value; exclusive with valueFrom."),
  valueFrom: z.object({
    secretKeyRef: keyRef("Secret").optional().describe("Take the value from a Secret key."),
    configMapKeyRef: keyRef("ConfigMap").optional().describe(
      "Take the value from a ConfigMap key.",
    ),
  }).optional().describe("Where the value comes from; exclusive with value."),
});

/** Environment variables, merged by name under server-side apply. */
export const envSchema = z.array(envVarSchema)
  .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] })
  .describe("Environment variables of the container.");

/** An environment variable as written in a spec. */
export type EnvVar = z.infer<typeof envVarSchema>;

const computeSchema = (what: string) =>
  z.object({
    cpu: quantitySchema.optional().describe(`CPU ${what}, in cores (e.g. 500m, 2).`),
    memory: quantitySchema.optional().describe(`Memory ${what}, in bytes (e.g. 256Mi, 1Gi).`),
  });

/** CPU and memory requests and limits of a container. */
export const resourcesSchema = z.object({
  requests: computeSchema("request").optional().describe("What the scheduler reserves."),
  limits: computeSchema("limit").optional().describe("The most the container may use."),
}).describe("Compute resources of the container.");

/** Resources as written in a spec. */
export type Resources = z.infer<typeof resourcesSchema>;

/** A toleration: the structural subset of `corev1.Toleration`. */
export const tolerationSchema = z.object({
  key: z.string().optional().describe("Taint key; empty with operator Exists matches every taint."),
  operator: z.enum(["Exists", "Equal"]).optional().describe(
    "How key and value match; Equal by default.",
  ),
  value: z.string().optional().describe("Taint value to match with operator Equal."),
  effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional().describe(
    "Taint effect to match; empty matches all effects.",
  ),
  tolerationSeconds: z.int().optional().describe(
    "How long a NoExecute taint is tolerated before eviction; forever when unset.",
  ),
});

/** Tolerations of the pods. */
export const tolerationsSchema = z.array(tolerationSchema).describe(
  "Taints the pods tolerate.",
);

/** A toleration as written in a spec. */
export type Toleration = z.infer<typeof tolerationSchema>;

/** Node labels the pods must match. */
export const nodeSelectorSchema = z.record(z.string(), z.string()).describe(
  "Node labels a node must have to run the pods.",
);
