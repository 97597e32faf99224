/**
 * One copy of each small value that cached objects hold many times over, for
 * projections to share, and which `estimateBytes` counts as held by
 * these tables rather than by each object.
 *
 * A watch decodes every field of every object into values of its own, so
 * without sharing thousands of children each hold their own copy of
 * `apps/v1`, `default` or `NewReplicaSetAvailable`, and thousands of
 * converged Deployments each their own `{ replicas: 1 }`. Only values seen
 * while a table has room are shared, which bounds the tables whatever the
 * cluster holds; a shared object no cache holds any more leaves its table.
 *
 * @example
 * ```ts
 * import { sharedObject, sharedString } from "./shared_values.ts";
 * const a = sharedString(["apps", "v1"].join("/"));
 * if (sharedString(`apps/${"v1"}`) !== a) throw new Error("not shared");
 * const spec = sharedObject({ replicas: 2 });
 * if (sharedObject({ replicas: 2 }) !== spec) throw new Error("not shared");
 * ```
 *
 * @module
 */
const STRINGS = new Map<string, string>();
const STRINGS_MAX = 4096;
/** Longer strings are likely unique (a message naming an object) and not worth an entry. */
const STRING_MAX = 64;

/**
 * Shared objects by their JSON, held weakly: a status that no cached object holds any more (an old
 * generation's) leaves the table, so that the room goes to values in use.
 */
const OBJECTS = new Map<string, WeakRef<object>>();
const RELEASED = new FinalizationRegistry<string>((json) => {
  if (OBJECTS.get(json)?.deref() === undefined) OBJECTS.delete(json);
});
/** Every shared object and the objects and arrays inside it, for {@link isShared}. */
const FROZEN = new WeakSet<object>();
const OBJECTS_MAX = 1024;
/** Longer JSON is likely unique and not worth an entry. */
const JSON_MAX = 256;

/**
 * The shared string equal to `value` if one is known or the table has room,
 * else `value` itself.
 */
export function sharedString<T extends string | undefined>(value: T): T {
  if (value === undefined || value.length > STRING_MAX) return value;
  const known = STRINGS.get(value);
  if (known !== undefined) return known as T;
  if (STRINGS.size < STRINGS_MAX) STRINGS.set(value, value);
  return value;
}

/**
 * The shared, deeply frozen object equal to `value` (plain objects, arrays,
 * strings, finite numbers, booleans and null, as JSON decodes them) if one
 * is known or the table has room, else `value` itself, not frozen. A value
 * JSON would not tell apart from another, such as one holding `undefined`,
 * is never shared. `value` may become the shared copy, so the caller must
 * not change it afterwards; readers of a cache treat what they read as
 * read-only anyway, and a shared object throws if they do not.
 */
export function sharedObject<T extends object>(value: T): T {
  let exact = true;
  const json = JSON.stringify(value, (_key, inner) => {
    if (inner === undefined || (typeof inner === "number" && !Number.isFinite(inner))) {
      exact = false;
    }
    return inner;
  });
  if (!exact || json.length > JSON_MAX) return value;
  const known = OBJECTS.get(json)?.deref();
  if (known !== undefined) return known as T;
  if (OBJECTS.size >= OBJECTS_MAX) return value;
  OBJECTS.set(json, new WeakRef(freeze(value)));
  RELEASED.register(value, json);
  return value;
}

/**
 * Whether `value` is held by these tables: a shared object or part of one,
 * or a string equal to a shared one (which, decoded from JSON, V8 often
 * holds once anyway). `estimateBytes` counts such values at no cost.
 */
export function isShared(value: unknown): boolean {
  if (typeof value === "string") return value.length <= STRING_MAX && STRINGS.has(value);
  return typeof value === "object" && value !== null && FROZEN.has(value);
}

function freeze<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  for (const inner of Object.values(value)) freeze(inner);
  FROZEN.add(value);
  return Object.freeze(value);
}
