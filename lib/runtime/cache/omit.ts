/**
 * Copies of objects without some of their keys, laid out as compactly as V8
 * lays out a decoded JSON object.
 *
 * A copy built by adding properties one by one to `{}` (which is what rest
 * destructuring does) keeps four of them inside the object and moves the
 * others to a separate property array: about 40 bytes more for each object of
 * five properties or more, and a cache holds thousands of such metadata
 * objects. A spread copy of an object that already has the right keys is
 * laid out as its source, all properties inside, so the copy starts from a
 * template with exactly the kept keys, one per key list seen. The store's
 * default transform copies with it, and so may a projection.
 *
 * @example
 * ```ts
 * import { omit } from "./omit.ts";
 * const metadata = { name: "web", namespace: "default", managedFields: [] };
 * omit(metadata, (key) => key === "managedFields"); // { name: "web", namespace: "default" }
 * ```
 *
 * @module
 */

/** Templates by the JSON of their key list. */
const TEMPLATES = new Map<string, Record<string, null>>();
/** Enough for the few metadata layouts a cluster's objects share; others are copied plainly. */
const TEMPLATES_MAX = 256;

/**
 * A shallow copy of `object` without the keys `drop` returns true for, its
 * other keys in their order, each inside the copy (see the module
 * documentation); typed as `T`, so drop only optional keys. Never mutates
 * `object`.
 *
 * @example
 * ```ts
 * import { omit } from "./omit.ts";
 * const status = { replicas: 2, readyReplicas: 2, collisionCount: 1 };
 * omit(status, (key) => key === "collisionCount"); // { replicas: 2, readyReplicas: 2 }
 * ```
 */
export function omit<T extends object>(object: T, drop: (key: string) => boolean): T {
  const keys = Object.keys(object).filter((key) => !drop(key));
  const copy: Record<string, unknown> = { ...template(keys) };
  for (const key of keys) copy[key] = (object as Record<string, unknown>)[key];
  return copy as T;
}

/** An object with `keys` set to null, decoded from JSON so that they all sit inside it. */
function template(keys: string[]): Record<string, null> | undefined {
  const id = JSON.stringify(keys);
  let known = TEMPLATES.get(id);
  if (known === undefined && TEMPLATES.size < TEMPLATES_MAX) {
    known = JSON.parse(`{${keys.map((key) => `${JSON.stringify(key)}:null`).join(",")}}`);
    TEMPLATES.set(id, known!);
  }
  return known;
}
