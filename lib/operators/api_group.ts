/**
 * The API group and version of kinglet's kinds and the kinds' resources, in
 * one place for the CRDs (each kind's `schema.ts`), the run time (its
 * `kind.ts`, which loads no zod) and the objects kinglet writes.
 *
 * @example
 * ```ts
 * import { API_VERSION } from "./api_group.ts";
 * API_VERSION; // "kinglet.dev/v1alpha1"
 * ```
 *
 * @module
 */
import type { Resource } from "../kube/mod.ts";

/** The API group of kinglet's kinds. */
export const GROUP = "kinglet.dev";
/** The API version of kinglet's kinds of one version (WebApp, InferenceService). */
export const VERSION = "v1alpha1";
/** `apiVersion` of kinglet's objects. */
export const API_VERSION = `${GROUP}/${VERSION}`;

/** The `webapps.kinglet.dev` resource. */
export const WEB_APPS: Resource = {
  group: GROUP,
  version: VERSION,
  plural: "webapps",
  kind: "WebApp",
  namespaced: true,
};

/**
 * The storage version of DatabaseCluster, which kinglet reads and writes;
 * `v1alpha1` is still served and converted by kinglet's webhook (see
 * `database/conversion.ts`).
 */
export const DATABASE_VERSION = "v1alpha2";

/** The `databaseclusters.kinglet.dev` resource, in its storage version. */
export const DATABASE_CLUSTERS: Resource = {
  group: GROUP,
  version: DATABASE_VERSION,
  plural: "databaseclusters",
  kind: "DatabaseCluster",
  namespaced: true,
};

/** The `inferenceservices.kinglet.dev` resource. */
export const INFERENCE_SERVICES: Resource = {
  group: GROUP,
  version: VERSION,
  plural: "inferenceservices",
  kind: "InferenceService",
  namespaced: true,
};
