/**
 * How a DatabaseCluster moves between its two versions, for the API server's
 * conversion webhook that `kinglet run` serves and for `defineKind` in
 * `schema.ts`. No zod: this runs in the operator.
 *
 * `v1alpha2`, the storage version and hub, renames
 * `spec.storage.storageClassName` to `spec.storage.className` (the field
 * sits under `storage` already). Both are the same optional string, so each
 * direction is a rename that keeps the value, and every other field is the
 * same in both versions: an object read in one version and written back in
 * the other loses nothing. An absent class stays absent (the cluster's
 * default class).
 *
 * What the caller must know: a `v1alpha1` request reaches the API server's
 * storage only through this conversion, so with the webhook down (or
 * `kinglet run --webhooks=false`) `v1alpha1` reads and writes of stored
 * objects fail, while `v1alpha2` ones, which need no conversion, go on.
 *
 * @example
 * ```ts
 * import { databaseClusterConversion } from "./conversion.ts";
 * const old = {
 *   apiVersion: "kinglet.dev/v1alpha1", kind: "DatabaseCluster",
 *   metadata: { name: "orders", namespace: "shop" },
 *   spec: { engine: "postgres", version: "17", storage: { size: "1Gi", storageClassName: "fast" } },
 * };
 * const hub = databaseClusterConversion.versions.v1alpha1!.toHub(old);
 * (hub.spec as { storage: object }).storage; // { size: "1Gi", className: "fast" }
 * ```
 *
 * @module
 */
import type { KubeObject } from "../../kube/mod.ts";
import type { Conversion } from "../../runtime/webhook/mod.ts";
import { DATABASE_CLUSTERS, DATABASE_VERSION } from "../api_group.ts";

/** The version still served beside the storage version. */
export const DATABASE_VERSION_V1ALPHA1 = "v1alpha1";

/**
 * The conversion between `v1alpha1` and the hub `v1alpha2`. A plain object
 * (`defineConversion` would only check its names, which the unit tests do):
 * a value import of the webhook module would load its server into every
 * `kinglet run`, with webhooks or without.
 */
export const databaseClusterConversion: Conversion = {
  resource: DATABASE_CLUSTERS,
  hub: DATABASE_VERSION,
  versions: {
    [DATABASE_VERSION_V1ALPHA1]: {
      toHub: (object) => renameStorageClass(object, "storageClassName", "className"),
      fromHub: (hub) => renameStorageClass(hub, "className", "storageClassName"),
    },
  },
};

/**
 * A copy of `object` with `spec.storage[from]` moved to `spec.storage[to]`.
 * Metadata, status and anything else are kept as they are: the API server
 * refuses a conversion that changes more than labels and annotations, and a
 * spec that is not an object (refused later by the schema) passes through.
 */
function renameStorageClass(object: KubeObject, from: string, to: string): KubeObject {
  const spec = object.spec;
  if (!isRecord(spec) || !isRecord(spec.storage)) return object;
  const { [from]: className, ...storage } = spec.storage;
  return {
    ...object,
    spec: { ...spec, storage: className === undefined ? storage : { ...storage, [to]: className } },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
