/**
 * The DatabaseCluster admission check CEL cannot make, because it looks at
 * other objects: a cluster naming a StorageClass the cluster does not have
 * is refused at creation, with the classes that exist. Without it the
 * StatefulSet's volume claims would wait in Pending for a class that never
 * comes, and the author would learn it from a PersistentVolumeClaim's
 * Events rather than from `kubectl apply`.
 *
 * What the caller must know:
 *
 * - It checks CREATE only. `storage` cannot change afterwards (a CEL rule),
 *   and a class deleted later must not stop the cluster's updates, among
 *   them the removal of its finalizer.
 * - `failurePolicy: Ignore`: while kinglet is down or not yet serving, a
 *   cluster is admitted unchecked (its claims then wait as before), rather
 *   than every DatabaseCluster write failing. A class left unset is always
 *   admitted: the cluster's default class, or pre-created volumes without one.
 * - The API server sends the object in the storage version (`v1alpha2`,
 *   converting a `v1alpha1` request), so the class is `spec.storage.className`.
 * - No defaulting webhook: the class left unset is the PersistentVolumeClaim
 *   API's own default, and writing the default class into the spec would
 *   only freeze today's default into an immutable field.
 *
 * @example
 * ```ts
 * import { databaseClusterAdmission } from "./admission.ts";
 * import { MemoryCluster } from "../../testing/memory_cluster.ts";
 * import { STORAGE_CLASSES } from "../../kube/mod.ts";
 * const cluster = new MemoryCluster({ namespaces: ["shop"], webhooks: [databaseClusterAdmission] });
 * cluster.put(STORAGE_CLASSES, { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "local-path" } });
 * ```
 *
 * @module
 */
import { type KubeObject, STORAGE_CLASSES } from "../../kube/mod.ts";
// Types only: the webhook module's values would load its server into every `kinglet run`.
import type { AdmissionWebhook, Verdict, WebhookClient } from "../../runtime/webhook/mod.ts";
import { DATABASE_CLUSTERS } from "../api_group.ts";

/** The annotation that marks the cluster's default StorageClass. */
const DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class";

const ALLOWED: Verdict = { allowed: true };

/** The admission webhook of DatabaseCluster: refuses a StorageClass the cluster does not have. */
export const databaseClusterAdmission: AdmissionWebhook = {
  resource: DATABASE_CLUSTERS,
  operations: ["CREATE"],
  failurePolicy: "Ignore",
  timeoutSeconds: 5,
  validate: ({ object }, { client, signal }) => checkStorageClass(object, client, signal),
};

/**
 * Allows a DatabaseCluster whose `spec.storage.className` is unset or names
 * an existing StorageClass; denies one naming a missing class, listing the
 * classes there are.
 *
 * @throws what the client throws when StorageClasses cannot be listed (the
 * server then answers by the failure policy).
 * @example
 * ```ts
 * import { checkStorageClass } from "./admission.ts";
 * const client = {
 *   get: () => Promise.reject(new Error("unused")),
 *   list: () => Promise.resolve({ items: [{ metadata: { name: "local-path" } }] }),
 * };
 * const verdict = await checkStorageClass(
 *   { metadata: { name: "orders" }, spec: { storage: { size: "1Gi", className: "fast" } } },
 *   client as never,
 * );
 * verdict.allowed; // false
 * ```
 */
export async function checkStorageClass(
  object: KubeObject | undefined,
  client: WebhookClient,
  signal?: AbortSignal,
): Promise<Verdict> {
  const named = storageClassOf(object);
  if (named === undefined) return ALLOWED;
  const classes = await client.list(STORAGE_CLASSES, signal ? { signal } : {});
  if (classes.items.some((c) => c.metadata?.name === named)) return ALLOWED;
  return { allowed: false, message: missingClassMessage(named, classes.items), code: 403 };
}

/** `spec.storage.className`, when it is a non-empty string. */
function storageClassOf(object: KubeObject | undefined): string | undefined {
  const storage = (object?.spec as { storage?: { className?: unknown } } | undefined)?.storage;
  const name = storage?.className;
  return typeof name === "string" && name !== "" ? name : undefined;
}

/** What the author reads in `kubectl`: the missing class and what to do instead. */
function missingClassMessage(named: string, classes: readonly KubeObject[]): string {
  const what = `spec.storage.className: StorageClass ${JSON.stringify(named)} does not exist`;
  if (classes.length === 0) {
    return `${what}, and the cluster has no StorageClass: create it first, or leave ` +
      "spec.storage.className unset to bind volumes created without a class";
  }
  const isDefault = (c: KubeObject) =>
    c.metadata?.annotations?.[DEFAULT_CLASS_ANNOTATION] === "true";
  const names = classes.map((c) => `${c.metadata?.name ?? ""}${isDefault(c) ? " (default)" : ""}`)
    .sort();
  const unset = classes.some(isDefault)
    ? "for the cluster's default class"
    : "to bind volumes created without a class";
  return `${what}; name one of ${names.join(", ")}, or leave spec.storage.className unset ${unset}`;
}
