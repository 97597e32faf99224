/**
 * Object keys, built and taken apart in this one place: `namespace/name` for
 * a namespaced object, `name` for a cluster-scoped one. Caches, queues and
 * reconcilers all key objects this way.
 *
 * @example
 * ```ts
 * import { keyOf, objectKey, splitKey } from "./object_key.ts";
 * const key = objectKey({ metadata: { namespace: "default", name: "web" } });
 * if (key !== keyOf("default", "web")) throw new Error("two spellings of one key");
 * if (splitKey(key).name !== "web" || splitKey("node-1").namespace !== undefined) {
 *   throw new Error("not taken apart");
 * }
 * ```
 *
 * @module
 */
import type { KubeObject, ObjectKey } from "./types.ts";

/**
 * The key of `object`.
 *
 * @throws {TypeError} when the object has no `metadata.name`.
 */
export function objectKey(object: KubeObject): ObjectKey {
  const name = object.metadata?.name;
  if (!name) {
    throw new TypeError(
      `Cannot key a ${object.kind ?? "object"}: 'metadata.name' is missing or empty`,
    );
  }
  return keyOf(object.metadata?.namespace, name);
}

/** The key of the object `name` in `namespace` (none for cluster-scoped objects). */
export function keyOf(namespace: string | undefined, name: string): ObjectKey {
  return namespace ? `${namespace}/${name}` : name;
}

/** The namespace (undefined for a cluster-scoped object) and name a key was built from. */
export function splitKey(key: ObjectKey): { namespace: string | undefined; name: string } {
  const slash = key.indexOf("/");
  return slash < 0
    ? { namespace: undefined, name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
