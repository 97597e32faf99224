/**
 * Shapes shared by the client, the watcher and the operators: object
 * metadata, lists, watch events and the resource descriptor that names an
 * API endpoint.
 *
 * Model types come from `@kubernetes/client-node` by `import type` only, so
 * they cost nothing at run time.
 *
 * @module
 */
import type { V1ObjectMeta } from "@kubernetes/client-node";

/** Any Kubernetes object: apiVersion, kind, metadata and whatever else. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  [field: string]: unknown;
}

/** A list as the API server returns it. */
export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** The kinds of event a watch delivers. */
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";

/** One event of a watch stream; ERROR events are thrown as errors instead. */
export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  object: T;
}

/**
 * Names an API resource: where it lives and whether it is namespaced.
 *
 * @example
 * ```ts
 * import type { Resource } from "./types.ts";
 * const deployments: Resource = {
 *   group: "apps", version: "v1", plural: "deployments", kind: "Deployment", namespaced: true,
 * };
 * ```
 */
export interface Resource {
  /** API group; `""` for the core group. */
  group: string;
  version: string;
  /** Lower-case plural used in URLs, e.g. `deployments`. */
  plural: string;
  kind: string;
  namespaced: boolean;
}

/** `namespace/name` for namespaced objects, `name` for cluster-scoped ones. */
export type ObjectKey = string;
