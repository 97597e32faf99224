/**
 * Well-known API resources, the URL paths that address them, and the one
 * way a resource is named ({@link resourceName}) and told apart
 * ({@link resourceId}).
 *
 * @example
 * ```ts
 * import { CONFIG_MAPS, resourcePath } from "./resources.ts";
 * resourcePath(CONFIG_MAPS, { namespace: "default", name: "settings" });
 * // "/api/v1/namespaces/default/configmaps/settings"
 * ```
 *
 * @module
 */
import type { Resource } from "./types.ts";

function core(plural: string, kind: string, namespaced: boolean): Resource {
  return { group: "", version: "v1", plural, kind, namespaced };
}

function grouped(
  group: string,
  version: string,
  plural: string,
  kind: string,
  namespaced: boolean,
): Resource {
  return { group, version, plural, kind, namespaced };
}

/**
 * A resource's name as kubectl takes it and as its CRD is named: the plural,
 * dotted with the group unless it is core, e.g. `deployments.apps`,
 * `webapps.kinglet.dev` or `secrets`.
 *
 * @example
 * ```ts
 * import { DEPLOYMENTS, resourceName, SECRETS } from "./resources.ts";
 * resourceName(DEPLOYMENTS); // "deployments.apps"
 * resourceName(SECRETS); // "secrets"
 * ```
 */
export function resourceName(resource: Resource): string {
  return resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
}

/**
 * `group/version/plural`: what tells two resources apart, e.g. as a map key;
 * two `Resource` objects with the same id are the same resource.
 *
 * @example
 * ```ts
 * import { DEPLOYMENTS, resourceId } from "./resources.ts";
 * resourceId(DEPLOYMENTS); // "apps/v1/deployments"
 * ```
 */
export function resourceId(resource: Resource): string {
  return `${resource.group}/${resource.version}/${resource.plural}`;
}

/** `v1` Namespace (cluster-scoped). */
export const NAMESPACES: Resource = core("namespaces", "Namespace", false);
/** `v1` Pod. */
export const PODS: Resource = core("pods", "Pod", true);
/** `v1` Service. */
export const SERVICES: Resource = core("services", "Service", true);
/** `v1` Secret. */
export const SECRETS: Resource = core("secrets", "Secret", true);
/** `v1` ConfigMap. */
export const CONFIG_MAPS: Resource = core("configmaps", "ConfigMap", true);
/** `v1` PersistentVolumeClaim. */
export const PERSISTENT_VOLUME_CLAIMS: Resource = core(
  "persistentvolumeclaims",
  "PersistentVolumeClaim",
  true,
);
/** `v1` Node (cluster-scoped). */
export const NODES: Resource = core("nodes", "Node", false);
/** `v1` ServiceAccount. */
export const SERVICE_ACCOUNTS: Resource = core("serviceaccounts", "ServiceAccount", true);
/** `apps/v1` Deployment. */
export const DEPLOYMENTS: Resource = grouped("apps", "v1", "deployments", "Deployment", true);
/** `apps/v1` StatefulSet. */
export const STATEFUL_SETS: Resource = grouped("apps", "v1", "statefulsets", "StatefulSet", true);
/** `storage.k8s.io/v1` StorageClass (cluster-scoped). */
export const STORAGE_CLASSES: Resource = grouped(
  "storage.k8s.io",
  "v1",
  "storageclasses",
  "StorageClass",
  false,
);
/** `apps/v1` ReplicaSet. */
export const REPLICA_SETS: Resource = grouped("apps", "v1", "replicasets", "ReplicaSet", true);
/** `tokenreviews.authentication.k8s.io`: who a bearer token is (create only). */
export const TOKEN_REVIEWS: Resource = grouped(
  "authentication.k8s.io",
  "v1",
  "tokenreviews",
  "TokenReview",
  false,
);
/** `subjectaccessreviews.authorization.k8s.io`: whether someone may do something (create only). */
export const SUBJECT_ACCESS_REVIEWS: Resource = grouped(
  "authorization.k8s.io",
  "v1",
  "subjectaccessreviews",
  "SubjectAccessReview",
  false,
);
/** `coordination.k8s.io/v1` Lease. */
export const LEASES: Resource = grouped("coordination.k8s.io", "v1", "leases", "Lease", true);
/** `events.k8s.io/v1` Event (not the legacy core `v1` Event). */
export const EVENTS: Resource = grouped("events.k8s.io", "v1", "events", "Event", true);
/** `apiextensions.k8s.io/v1` CustomResourceDefinition (cluster-scoped). */
export const CUSTOM_RESOURCE_DEFINITIONS: Resource = grouped(
  "apiextensions.k8s.io",
  "v1",
  "customresourcedefinitions",
  "CustomResourceDefinition",
  false,
);
/** `rbac.authorization.k8s.io/v1` ClusterRole (cluster-scoped). */
export const CLUSTER_ROLES: Resource = grouped(
  "rbac.authorization.k8s.io",
  "v1",
  "clusterroles",
  "ClusterRole",
  false,
);
/** `rbac.authorization.k8s.io/v1` ClusterRoleBinding (cluster-scoped). */
export const CLUSTER_ROLE_BINDINGS: Resource = grouped(
  "rbac.authorization.k8s.io",
  "v1",
  "clusterrolebindings",
  "ClusterRoleBinding",
  false,
);
/** `admissionregistration.k8s.io/v1` ValidatingAdmissionPolicy (cluster-scoped). */
export const VALIDATING_ADMISSION_POLICIES: Resource = grouped(
  "admissionregistration.k8s.io",
  "v1",
  "validatingadmissionpolicies",
  "ValidatingAdmissionPolicy",
  false,
);
/** `admissionregistration.k8s.io/v1` ValidatingWebhookConfiguration (cluster-scoped). */
export const VALIDATING_WEBHOOK_CONFIGURATIONS: Resource = grouped(
  "admissionregistration.k8s.io",
  "v1",
  "validatingwebhookconfigurations",
  "ValidatingWebhookConfiguration",
  false,
);
/** `admissionregistration.k8s.io/v1` MutatingWebhookConfiguration (cluster-scoped). */
export const MUTATING_WEBHOOK_CONFIGURATIONS: Resource = grouped(
  "admissionregistration.k8s.io",
  "v1",
  "mutatingwebhookconfigurations",
  "MutatingWebhookConfiguration",
  false,
);
/** `admissionregistration.k8s.io/v1` ValidatingAdmissionPolicyBinding (cluster-scoped). */
export const VALIDATING_ADMISSION_POLICY_BINDINGS: Resource = grouped(
  "admissionregistration.k8s.io",
  "v1",
  "validatingadmissionpolicybindings",
  "ValidatingAdmissionPolicyBinding",
  false,
);
/** `rbac.authorization.k8s.io/v1` Role. */
export const ROLES: Resource = grouped("rbac.authorization.k8s.io", "v1", "roles", "Role", true);
/** `rbac.authorization.k8s.io/v1` RoleBinding. */
export const ROLE_BINDINGS: Resource = grouped(
  "rbac.authorization.k8s.io",
  "v1",
  "rolebindings",
  "RoleBinding",
  true,
);

/** Where in the API a path points: a namespace, an object, a subresource. */
export interface ResourcePathOptions {
  /** Required to address one object of a namespaced resource; omit to span all namespaces. */
  namespace?: string;
  /** Addresses one object; omit for the collection. */
  name?: string;
  /** E.g. `status` or `token`; needs `name`. */
  subresource?: string;
}

/**
 * The URL path of a resource collection, an object or a subresource: the core
 * group lives under `/api/v1`, every other group under `/apis/<group>/<version>`.
 * Segments are URL-encoded.
 *
 * @throws {TypeError} when a namespace is given for a cluster-scoped resource,
 * a subresource without a name, or an empty name or namespace.
 *
 * @example
 * ```ts
 * import { DEPLOYMENTS, NODES, resourcePath } from "./resources.ts";
 * resourcePath(DEPLOYMENTS, { namespace: "shop" }); // "/apis/apps/v1/namespaces/shop/deployments"
 * resourcePath(NODES, { name: "edge-1", subresource: "status" }); // "/api/v1/nodes/edge-1/status"
 * ```
 */
export function resourcePath(res: Resource, opts: ResourcePathOptions = {}): string {
  const { namespace, name, subresource } = opts;
  const what = `${res.plural}${name === undefined ? "" : ` "${name}"`}`;
  if (namespace !== undefined && !res.namespaced) {
    throw new TypeError(
      `Cannot address ${what}: ${res.kind} is cluster-scoped, got namespace "${namespace}"`,
    );
  }
  if (namespace === "" || name === "") {
    throw new TypeError(`Cannot address ${res.plural}: namespace and name must not be empty`);
  }
  if (subresource !== undefined && name === undefined) {
    throw new TypeError(`Cannot address ${res.plural}/${subresource}: a subresource needs a name`);
  }
  let path = res.group === "" ? `/api/${res.version}` : `/apis/${res.group}/${res.version}`;
  if (namespace !== undefined) path += `/namespaces/${encodeURIComponent(namespace)}`;
  path += `/${res.plural}`;
  if (name !== undefined) path += `/${encodeURIComponent(name)}`;
  if (subresource !== undefined) path += `/${subresource}`;
  return path;
}
