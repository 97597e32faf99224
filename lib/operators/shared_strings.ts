/**
 * One string for each short value the caches hold many times over.
 *
 * @example
 * ```ts
 * import { shared } from "./shared_strings.ts";
 * const a = shared(["apps", "v1"].join("/"));
 * if (shared(`apps/${"v1"}`) !== a) throw new Error("not shared");
 * ```
 *
 * @module
 */

/**
 * The same string for the same short value: a watch decodes every field of
 * every object into a string of its own, so without this thousands of
 * children each hold their own copy of `apps/v1`, `default` or
 * `NewReplicaSetAvailable`. Only values seen while the table has room are
 * shared, which bounds it whatever the cluster holds.
 */
const SHARED = new Map<string, string>();
const SHARED_MAX = 4096;

export function shared<T extends string | undefined>(value: T): T {
  if (value === undefined || value.length > 64) return value;
  const known = SHARED.get(value);
  if (known !== undefined) return known as T;
  if (SHARED.size < SHARED_MAX) SHARED.set(value, value);
  return value;
}
