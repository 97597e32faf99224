/**
 * Shapes shared by the client, the watcher and the operators: object
 * metadata, lists, watch events and the resource descriptor that names an
 * API endpoint.
 *
 * Model types come from `@kubernetes/client-node` by `import type` only, so
 * they cost nothing at run time. Its models declare timestamps as `Date`,
 * which its own serializer makes of them; kinglet's client decodes plain
 * JSON, so a timestamp is the RFC 3339 string the API server sent:
 * {@link ObjectMeta} says so, and {@link Wire} turns any model into what
 * the client really returns (`Wire<V1Deployment>`).
 *
 * @module
 */

/** Who owns an object; the garbage collector deletes it with its controller owner. */
export interface OwnerReference {
  /** `group/version` of the owner's kind. */
  apiVersion: string;
  /** Whether the owner's foreground deletion waits for this object. */
  blockOwnerDeletion?: boolean;
  /** Whether this owner is the managing controller; at most one is. */
  controller?: boolean;
  /** The owner's kind. */
  kind: string;
  /** The owner's name, in the object's namespace. */
  name: string;
  /** The owner's uid. */
  uid: string;
}

/** Which fields one manager set, as server-side apply tracks them. */
export interface ManagedFieldsEntry {
  /** The version the fields are expressed in. */
  apiVersion?: string;
  /** Always `FieldsV1`. */
  fieldsType?: string;
  /** The set of fields, in the `FieldsV1` encoding. */
  fieldsV1?: unknown;
  /** The field manager's name. */
  manager?: string;
  /** `Apply` or `Update`. */
  operation?: string;
  /** The subresource written, e.g. `status`. */
  subresource?: string;
  /** When the fields were last set, in RFC 3339, e.g. `2026-01-01T12:00:00Z`. */
  time?: string;
}

/**
 * `metav1.ObjectMeta` as the API server sends it: `V1ObjectMeta` of
 * `@kubernetes/client-node` with its timestamps as the RFC 3339 strings they
 * are (`Date.parse` reads them), so that `Wire<V1ObjectMeta>` is one.
 */
export interface ObjectMeta {
  /** Unstructured key/value data for tools. */
  annotations?: { [key: string]: string };
  /** When the object was created, in RFC 3339, e.g. `2026-01-01T12:00:00Z`. */
  creationTimestamp?: string;
  /** Seconds the object has to terminate once deleted. */
  deletionGracePeriodSeconds?: number;
  /**
   * Set, in RFC 3339, when deletion was requested; the object goes once its
   * finalizers are gone.
   */
  deletionTimestamp?: string;
  /** What must happen before the object is removed. */
  finalizers?: Array<string>;
  /** Prefix of a name the server generates. */
  generateName?: string;
  /** Incremented on every change of the desired state (usually `spec`). */
  generation?: number;
  /** Key/value pairs to select objects by. */
  labels?: { [key: string]: string };
  /** Which manager set which fields. */
  managedFields?: Array<ManagedFieldsEntry>;
  /** Unique within the namespace and kind. */
  name?: string;
  /** Absent for cluster-scoped kinds. */
  namespace?: string;
  /** The objects this one belongs to. */
  ownerReferences?: Array<OwnerReference>;
  /** Changes on every write; preconditions and watches use it. */
  resourceVersion?: string;
  /** Deprecated and unset by current servers. */
  selfLink?: string;
  /** Unique across time and space. */
  uid?: string;
}

/** Any Kubernetes object: apiVersion, kind, metadata and whatever else. */
export interface KubeObject {
  /** `group/version` of the kind, `v1` for the core group. */
  apiVersion?: string;
  /** The kind, e.g. `ConfigMap`. */
  kind?: string;
  /** Name, namespace, labels, owners and the server's bookkeeping. */
  metadata?: ObjectMeta;
  /** The kind's own fields: `spec`, `status`, `data`, ... */
  [field: string]: unknown;
}

/**
 * A `@kubernetes/client-node` model as the API server sends it and the
 * client returns it: every field its declaration types `Date` (a
 * `creationTimestamp`, a condition's `lastTransitionTime`) is the RFC 3339
 * string of the JSON, so that `.getTime()` on one does not compile.
 *
 * @example
 * ```ts
 * import type { V1Deployment } from "@kubernetes/client-node";
 * import type { KubeObject, Wire } from "./types.ts";
 * const deployment: Wire<V1Deployment> = {
 *   metadata: { name: "web", creationTimestamp: "2026-01-01T12:00:00Z" },
 *   status: { conditions: [{ type: "Available", status: "True", lastUpdateTime: "2026-01-01T12:00:05Z" }] },
 * };
 * const object: KubeObject = deployment; // a Wire model is a KubeObject
 * const created = Date.parse(deployment.metadata?.creationTimestamp ?? ""); // ms since the epoch
 * ```
 */
export type Wire<T> = T extends Date ? string
  : T extends readonly (infer Item)[] ? Wire<Item>[]
  : T extends object ? { [K in keyof T]: Wire<T[K]> }
  : T;

/** A list as the API server returns it. */
export interface KubeList<T extends KubeObject = KubeObject> {
  /** `group/version` of the list. */
  apiVersion?: string;
  /** The list kind, e.g. `ConfigMapList`. */
  kind?: string;
  /** The version of the collection and the token of the next page. */
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  /** The objects of this page. */
  items: T[];
}

/** The kinds of event a watch delivers. */
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";

/** One event of a watch stream; ERROR events are thrown as errors instead. */
export interface WatchEvent<T extends KubeObject = KubeObject> {
  /** What happened to the object. */
  type: WatchEventType;
  /** The object after the change (before it, for DELETED); a BOOKMARK carries only a resourceVersion. */
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
  /** API version, e.g. `v1`. */
  version: string;
  /** Lower-case plural used in URLs, e.g. `deployments`. */
  plural: string;
  /** The kind of its objects, e.g. `Deployment`. */
  kind: string;
  /** Whether objects live in a namespace. */
  namespaced: boolean;
}

/** `namespace/name` for namespaced objects, `name` for cluster-scoped ones. */
export type ObjectKey = string;
