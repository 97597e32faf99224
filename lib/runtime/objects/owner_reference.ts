/**
 * The controller owner reference a child carries to the object that manages
 * it, as controller-runtime's `SetControllerReference` writes it. A
 * controller's `owns` maps a child's changes back to its controller owner
 * through this reference, and the garbage collector deletes the child with
 * its owner.
 *
 * @example
 * ```ts
 * import { controllerReference } from "./owner_reference.ts";
 * const owner = {
 *   apiVersion: "example.com/v1", kind: "Backup", metadata: { name: "nightly", uid: "6f1c" },
 * };
 * const child = {
 *   apiVersion: "v1", kind: "ConfigMap",
 *   metadata: { name: "nightly-config", namespace: "shop", ownerReferences: [controllerReference(owner)] },
 * };
 * child.metadata.ownerReferences[0]?.controller; // true
 * ```
 *
 * @module
 */
import type { KubeObject, OwnerReference } from "../../kube/types.ts";

/**
 * The owner reference a child carries to its controller: `controller: true`,
 * so watches of the child map back to the owner, and
 * `blockOwnerDeletion: true`, so foreground deletion of the owner waits for
 * the child. The child must live in the owner's namespace (or the owner be
 * cluster-scoped).
 *
 * @throws {TypeError} when the owner lacks `apiVersion`, `kind`,
 * `metadata.name` or `metadata.uid`: pass the object as read from the API
 * server (as a reconcile gets it), not one built by hand.
 * @example
 * ```ts
 * import { controllerReference } from "./owner_reference.ts";
 * controllerReference({
 *   apiVersion: "kinglet.dev/v1alpha1",
 *   kind: "WebApp",
 *   metadata: { name: "shop", uid: "6f1c…" },
 * }); // { apiVersion: "kinglet.dev/v1alpha1", kind: "WebApp", name: "shop", uid: "6f1c…", controller: true, blockOwnerDeletion: true }
 * ```
 */
export function controllerReference(owner: KubeObject): OwnerReference {
  const { apiVersion, kind } = owner;
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  if (!apiVersion || !kind || !name || !uid) {
    const missing = [
      !apiVersion && "apiVersion",
      !kind && "kind",
      !name && "metadata.name",
      !uid && "metadata.uid",
    ].filter(Boolean).join(", ");
    throw new TypeError(
      `Cannot reference the owner ${kind ?? "object"} ${name ?? ""}: it has no ${missing}; ` +
        "render children only from objects read from the API server",
    );
  }
  return { apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true };
}
