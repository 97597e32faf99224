/**
 * How kinglet marks what it manages: the recommended labels on every child,
 * the label selectors that find a primary's pods, the metadata of a child
 * (with the runtime's `controllerReference`) and the DNS name of a child
 * Service, the field manager for server-side apply and the finalizer.
 *
 * Labels, after the Kubernetes recommended labels:
 *
 * | label | value |
 * | --- | --- |
 * | `app.kubernetes.io/name` | the kind's application: `webapp`, `databasecluster` or `inferenceservice` |
 * | `app.kubernetes.io/instance` | the primary's `metadata.name`, e.g. `shop` |
 * | `app.kubernetes.io/managed-by` | `kinglet` |
 *
 * Selectors (Deployment and StatefulSet `spec.selector`, Service selectors,
 * `status.selector` for the scale subresource) use only `name` and
 * `instance`: both are fixed for an object's lifetime, and a workload's
 * selector cannot change after creation. Together they are unique per kind in
 * a namespace, so a WebApp and an InferenceService that share a name never
 * select each other's pods. `kubectl get pods -l app.kubernetes.io/instance=shop`
 * lists a primary's pods.
 *
 * @example
 * ```ts
 * import { labelSelector, selectorLabels } from "./labels.ts";
 * labelSelector(selectorLabels({ kind: "WebApp", metadata: { name: "shop" } }));
 * // "app.kubernetes.io/instance=shop,app.kubernetes.io/name=webapp"
 * ```
 *
 * @module
 */
import type { V1ObjectMeta } from "./models.ts";
import type { KubeObject } from "../kube/mod.ts";
import { controllerReference } from "../runtime/mod.ts";

/** The field manager of every server-side apply kinglet sends. */
export const FIELD_MANAGER = "kinglet";

/**
 * The annotation `kinglet install` puts on a namespace it created (never on
 * one that existed), so that `kinglet uninstall` deletes only that.
 */
export const CREATED_BY_ANNOTATION = "kinglet.dev/created-by";

/** The finalizer kinglet puts on primaries whose deletion needs cleanup first. */
export const FINALIZER = "kinglet.dev/cleanup";

/** `app.kubernetes.io/name`: the kind's application, e.g. `webapp`. */
export const NAME_LABEL = "app.kubernetes.io/name";
/** `app.kubernetes.io/instance`: the primary's name. */
export const INSTANCE_LABEL = "app.kubernetes.io/instance";
/** `app.kubernetes.io/managed-by`: always {@link MANAGED_BY}. */
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
/** The value of {@link MANAGED_BY_LABEL}. */
export const MANAGED_BY = "kinglet";
/** Selects the children kinglet manages, so their caches hold nothing else. */
export const MANAGED_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;

/**
 * The immutable labels that select a primary's pods: the lower-cased kind and
 * the primary's name.
 *
 * @throws {TypeError} when the primary has no `kind` or `metadata.name`.
 * @example
 * ```ts
 * import { selectorLabels } from "./labels.ts";
 * selectorLabels({ kind: "DatabaseCluster", metadata: { name: "orders" } });
 * // { "app.kubernetes.io/name": "databasecluster", "app.kubernetes.io/instance": "orders" }
 * ```
 */
export function selectorLabels(primary: KubeObject): Record<string, string> {
  const name = primary.metadata?.name;
  if (!primary.kind || !name) {
    throw new TypeError(
      `Cannot label children of ${primary.kind ?? "an object"} ${name ?? ""}: ` +
        "it has no kind or metadata.name",
    );
  }
  return { [NAME_LABEL]: primary.kind.toLowerCase(), [INSTANCE_LABEL]: name };
}

/**
 * Every label kinglet sets on a child and its pod template.
 *
 * @throws {TypeError} as {@link selectorLabels}.
 * @example
 * ```ts
 * import { recommendedLabels } from "./labels.ts";
 * recommendedLabels({ kind: "WebApp", metadata: { name: "shop" } })["app.kubernetes.io/managed-by"];
 * // "kinglet"
 * ```
 */
export function recommendedLabels(primary: KubeObject): Record<string, string> {
  return { ...selectorLabels(primary), [MANAGED_BY_LABEL]: MANAGED_BY };
}

/**
 * Labels as a selector string (`k=v,k=v`, keys sorted), the form of a scale
 * subresource's `status.selector` and of `?labelSelector=`.
 *
 * @example
 * ```ts
 * import { labelSelector } from "./labels.ts";
 * labelSelector({ b: "2", a: "1" }); // "a=1,b=2"
 * ```
 */
export function labelSelector(labels: Record<string, string>): string {
  return Object.keys(labels).sort().map((key) => `${key}=${labels[key]}`).join(",");
}

/**
 * Metadata of a child: named after the owner plus `suffix`, in the owner's
 * namespace, with the recommended labels and the controller owner reference.
 *
 * @throws {TypeError} as `controllerReference`, or when the owner has no
 * namespace.
 * @example
 * ```ts
 * import { childMetadata } from "./labels.ts";
 * const meta = childMetadata({
 *   apiVersion: "kinglet.dev/v1alpha1",
 *   kind: "DatabaseCluster",
 *   metadata: { name: "orders", namespace: "default", uid: "6f1c…" },
 * }, "-headless");
 * meta.name; // "orders-headless"
 * ```
 */
export function childMetadata(owner: KubeObject, suffix = ""): V1ObjectMeta & { name: string } {
  const reference = controllerReference(owner);
  const namespace = owner.metadata?.namespace;
  if (!namespace) {
    throw new TypeError(
      `Cannot render children of ${reference.kind} ${reference.name}: it has no metadata.namespace`,
    );
  }
  return {
    name: reference.name + suffix,
    namespace,
    labels: recommendedLabels(owner),
    ownerReferences: [reference],
  };
}

/**
 * The DNS name of the Service named after `owner` (see {@link childMetadata})
 * inside the cluster.
 *
 * @example
 * ```ts
 * import { serviceHost } from "./labels.ts";
 * serviceHost({ metadata: { name: "orders", namespace: "shop" } }); // "orders.shop.svc.cluster.local"
 * ```
 */
export function serviceHost(owner: Pick<KubeObject, "metadata">): string {
  return `${owner.metadata?.name}.${owner.metadata?.namespace}.svc.cluster.local`;
}
