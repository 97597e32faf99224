/**
 * The JSON Patch (RFC 6902) from one JSON value to another: what a
 * defaulting webhook answers, since a defaulter returns the object as it
 * should be stored and the API server takes only a patch.
 *
 * What the caller must know:
 *
 * - The patch holds `add`, `remove` and `replace` only, and applies to the
 *   exact `before` it was computed from (no `test` guards it: the API server
 *   applies it to the object it sent).
 * - Objects are compared key by key; arrays index by index, with the extra
 *   tail added or removed (from the end, so every index stays valid). Values
 *   that are `undefined` count as absent, as in `JSON.stringify`.
 *
 * @example
 * ```ts
 * import { jsonPatchBetween } from "./json_patch.ts";
 * const before = { spec: { replicas: 1 } };
 * const after = { spec: { replicas: 1, image: "nginx" } };
 * jsonPatchBetween(before, after); // [{ op: "add", path: "/spec/image", value: "nginx" }]
 * ```
 *
 * @module
 */

/** One operation of a JSON Patch, as the API server takes it. */
export type JsonPatchOperation =
  | { op: "add"; path: string; value: unknown }
  | { op: "replace"; path: string; value: unknown }
  | { op: "remove"; path: string };

/**
 * The operations that turn `before` into `after`, empty when they are equal.
 *
 * @example
 * ```ts
 * import { jsonPatchBetween } from "./json_patch.ts";
 * jsonPatchBetween({ a: [1, 2, 3] }, { a: [1] });
 * // [{ op: "remove", path: "/a/2" }, { op: "remove", path: "/a/1" }]
 * ```
 */
export function jsonPatchBetween(before: unknown, after: unknown): JsonPatchOperation[] {
  const operations: JsonPatchOperation[] = [];
  diff(before, after, "", operations);
  return operations;
}

/** `token` escaped for a JSON Pointer (RFC 6901): `~` as `~0`, `/` as `~1`. */
function pointerToken(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

type Json = Record<string, unknown>;

function diff(before: unknown, after: unknown, path: string, out: JsonPatchOperation[]): void {
  if (before === after) return;
  if (isObject(before) && isObject(after)) {
    for (const [key, value] of Object.entries(before)) {
      if (value === undefined) continue;
      const at = `${path}/${pointerToken(key)}`;
      if (after[key] === undefined) out.push({ op: "remove", path: at });
      else diff(value, after[key], at, out);
    }
    for (const [key, value] of Object.entries(after)) {
      if (value !== undefined && before[key] === undefined) {
        out.push({ op: "add", path: `${path}/${pointerToken(key)}`, value: copy(value) });
      }
    }
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const common = Math.min(before.length, after.length);
    for (let i = 0; i < common; i++) diff(before[i], after[i], `${path}/${i}`, out);
    for (let i = common; i < after.length; i++) {
      out.push({ op: "add", path: `${path}/${i}`, value: copy(after[i]) });
    }
    for (let i = before.length - 1; i >= common; i--) {
      out.push({ op: "remove", path: `${path}/${i}` });
    }
    return;
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return;
  out.push({ op: "replace", path, value: copy(after) });
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A copy, so a later change to the defaulted object cannot reach the patch. */
function copy(value: unknown): unknown {
  return value === undefined ? null : structuredClone(value);
}
