/**
 * Equality of JSON values ignoring key order: the test that tells whether a
 * status (or any object) the API server returned is the one a reconcile
 * wants. The API server sorts keys, so comparing `JSON.stringify` of both
 * never matches an object built in another order.
 *
 * @example
 * ```ts
 * import { sameJson } from "./same_json.ts";
 * sameJson({ a: 1, b: [2] }, { b: [2], a: 1 }); // true
 * JSON.stringify({ a: 1, b: 2 }) === JSON.stringify({ b: 2, a: 1 }); // false
 * ```
 *
 * @module
 */

/**
 * Deep equality of JSON values, ignoring key order. A key whose value is
 * `undefined` counts as absent, as `JSON.stringify` treats it; array order
 * matters.
 *
 * @example
 * ```ts
 * import { sameJson } from "./same_json.ts";
 * sameJson({ phase: "Ready", message: undefined }, { phase: "Ready" }); // true
 * sameJson([1, 2], [2, 1]); // false
 * ```
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((v, i) => sameJson(v, other[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left).filter((k) => left[k] !== undefined);
  const count = Object.keys(right).filter((k) => right[k] !== undefined).length;
  return keys.length === count && keys.every((k) => sameJson(left[k], right[k]));
}
