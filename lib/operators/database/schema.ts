/**
 * The `DatabaseCluster` kind (`dbc`): a database engine run as a StatefulSet
 * with one volume per pod, a headless Service naming every pod, a client
 * Service and a credentials Secret. Its zod schema is the TypeScript type,
 * the CRD and the spec schema that `kind.ts` validates with.
 *
 * kinglet does not set up replication: each pod is a server with its own
 * volume. The client Service routes to the first pod (`<name>-0`), which
 * exists first and goes last; the headless Service (`<name>-headless`) gives
 * every pod a stable DNS name for tools that do their own replication.
 *
 * `engine` and `storage` cannot change after creation (CEL rules in the CRD
 * say so at admission): a StatefulSet's volume claim templates are immutable,
 * and a different engine cannot read the existing data.
 *
 * Two versions are served: `v1alpha2` (stored, and what kinglet reads) names
 * the volumes' class `storage.className`; `v1alpha1` named it
 * `storage.storageClassName`. `conversion.ts` converts between them, and
 * `admission.ts` refuses a class the cluster does not have.
 *
 * @example
 * ```ts
 * import { databaseSpecSchema } from "./schema.ts";
 * databaseSpecSchema.parse({ engine: "mysql", version: "8.4", storage: { size: "1Gi" } })
 *   .deletionPolicy; // "Retain"
 * ```
 *
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { type CustomKind, defineKind } from "../../crd/mod.ts";
import { DATABASE_CLUSTERS } from "../api_group.ts";
import { kingletKindOptions } from "../schema/kind_options.ts";
import { standardConditionsSchema } from "../schema/conditions.ts";
import { imageSchema, resourcesSchema } from "../schema/pod_fields.ts";
import { quantitySchema } from "../schema/quantity.ts";
import { DATABASE_VERSION_V1ALPHA1, databaseClusterConversion } from "./conversion.ts";
import { ENGINE_NAMES } from "./engines.ts";
import { DATABASE_PHASES } from "./state.ts";

const immutable = (what: string) => ({
  "x-kubernetes-validations": [{
    rule: "self == oldSelf",
    message: `${what} cannot be changed after creation`,
  }],
});

const storageSize = quantitySchema.describe("Size of each pod's volume, e.g. 10Gi.");
const storageClass = z.string().min(1).optional().describe(
  "StorageClass of the volumes, one the cluster has; the cluster's default class when unset.",
);

/** Desired state of a DatabaseCluster, in the storage version `v1alpha2`. */
export const databaseSpecSchema = z.object({
  engine: z.enum(ENGINE_NAMES).meta(immutable("engine")).describe(
    "Database engine: postgres or mysql. Immutable.",
  ),
  version: z.string().regex(/^\w[\w.-]{0,127}$/, {
    error: "must be an image tag: letters, digits, '_', '.' or '-', at most 128 characters",
  }).describe(
    "Engine version, the tag of the official image: postgres 14 to 17, mysql 8.0 or 8.4, " +
      "optionally with a minor or patch (e.g. 17.2, 8.4.3).",
  ),
  image: imageSchema.optional().describe(
    "Image to run instead of the official one for engine and version; it must accept the " +
      "official image's environment.",
  ),
  replicas: z.int32().min(1).default(1).describe(
    "Number of database pods; each is a separate server with its own volume.",
  ),
  storage: z.object({ size: storageSize, className: storageClass })
    .meta(immutable("storage")).describe("Persistent volume of each pod. Immutable."),
  resources: resourcesSchema.optional(),
  deletionPolicy: z.enum(["Retain", "Delete"]).default("Retain").describe(
    "What happens to the volumes when the DatabaseCluster is deleted: Retain keeps them " +
      "(the default), Delete removes them with the StatefulSet.",
  ),
}).describe("Desired state of the DatabaseCluster.");

/** Desired state of a DatabaseCluster in `v1alpha1`: the class is `storage.storageClassName`. */
export const databaseSpecV1alpha1Schema = databaseSpecSchema.extend({
  storage: z.object({ size: storageSize, storageClassName: storageClass })
    .meta(immutable("storage")).describe("Persistent volume of each pod. Immutable."),
});

/** A DatabaseCluster spec with defaults applied. */
export type DatabaseSpec = z.output<typeof databaseSpecSchema>;

/** Observed state of a DatabaseCluster. */
export const databaseStatusSchema = z.object({
  observedGeneration: z.int().min(0).optional().describe(
    "The .metadata.generation this status describes.",
  ),
  phase: z.enum(DATABASE_PHASES).optional().describe(
    "Lifecycle state: Creating, Scaling, Ready, Degraded or Terminating.",
  ),
  replicas: z.int32().min(0).optional().describe("Pods the StatefulSet has created."),
  readyReplicas: z.int32().min(0).optional().describe("Pods that pass their readiness checks."),
  secretName: z.string().optional().describe(
    "Secret with username, password, host, port and uri of the superuser.",
  ),
  endpoint: z.string().optional().describe("host:port of the client Service."),
  conditions: standardConditionsSchema,
}).describe("Observed state, written by kinglet.");

/** Observed state of a DatabaseCluster. */
export type DatabaseStatus = z.infer<typeof databaseStatusSchema>;

// The versions below replace the one version kinglet's other kinds share.
const { version: _oneVersion, ...kindOptions } = kingletKindOptions(DATABASE_CLUSTERS, 52);

/** The DatabaseCluster CRD's definition: both versions, converted by kinglet's webhook. */
export const databaseClusterDefinition: CustomKind<
  typeof databaseSpecSchema,
  typeof databaseStatusSchema
> = defineKind({
  // The StatefulSet's pods carry a controller-revision-hash label of the
  // name plus 11 characters, and label values stop at 63.
  ...kindOptions,
  versions: [
    {
      name: DATABASE_VERSION_V1ALPHA1,
      spec: databaseSpecV1alpha1Schema,
      status: databaseStatusSchema,
    },
    {
      name: DATABASE_CLUSTERS.version,
      spec: databaseSpecSchema,
      status: databaseStatusSchema,
      storage: true,
    },
  ],
  conversion: databaseClusterConversion,
  singular: "databasecluster",
  shortNames: ["dbc"],
  description: "DatabaseCluster runs postgres or mysql as a StatefulSet with persistent volumes, " +
    "Services and a generated credentials Secret.",
  printerColumns: [
    { name: "Engine", type: "string", jsonPath: ".spec.engine" },
    { name: "Version", type: "string", jsonPath: ".spec.version" },
    { name: "Ready", type: "integer", jsonPath: ".status.readyReplicas" },
    { name: "Desired", type: "integer", jsonPath: ".spec.replicas" },
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "Endpoint", type: "string", jsonPath: ".status.endpoint", priority: 1 },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
});
