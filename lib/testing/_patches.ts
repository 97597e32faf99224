/**
 * The patches the in-memory API server applies: JSON merge patches
 * (RFC 7386) and JSON patches (RFC 6902: `add`, `remove`, `replace` and
 * `test`), on copies, all or nothing.
 *
 * @module
 */
import { sameJson } from "../runtime/objects/same_json.ts";

type Json = Record<string, unknown>;

/** `target` with `patch` merged in: objects recursively, `null` removes a key. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch;
  const out: Json = typeof target === "object" && target !== null && !Array.isArray(target)
    ? { ...target as Json }
    : {};
  for (const [key, value] of Object.entries(patch as Json)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/** One JSON patch operation. */
export interface Operation {
  op: string;
  path: string;
  value?: unknown;
}

/**
 * `target` with `operations` applied, or `"failed test"` when a `test` op
 * does not hold (the API server answers that with a bare 422).
 *
 * @throws {TypeError} for an op or a path the document does not have.
 */
export function jsonPatch(target: unknown, operations: Operation[]): unknown {
  const doc = structuredClone(target);
  for (const { op, path, value } of operations) {
    const segments = path.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
    const last = segments.pop();
    let parent: unknown = doc;
    for (const segment of segments) parent = (parent as Json | undefined)?.[segment];
    if (last === undefined || typeof parent !== "object" || parent === null) {
      if (op === "test") return "failed test";
      throw new TypeError(`Cannot ${op} ${path}: the document has no such place`);
    }
    const container = parent as Json & unknown[];
    const index = Array.isArray(container)
      ? (last === "-" ? container.length : Number(last))
      : undefined;
    switch (op) {
      case "test":
        if (!sameJson(index === undefined ? container[last] : container[index], value)) {
          return "failed test";
        }
        break;
      case "add":
        if (index === undefined) container[last] = value;
        else container.splice(index, 0, value);
        break;
      case "replace":
      case "remove":
        if (index === undefined ? !(last in container) : !(index < container.length)) {
          throw new TypeError(`Cannot ${op} ${path}: there is nothing there`);
        }
        if (index === undefined) {
          if (op === "remove") delete container[last];
          else container[last] = value;
        } else if (op === "remove") container.splice(index, 1);
        else container[index] = value;
        break;
      default:
        throw new TypeError(`The in-memory API server cannot patch with op ${JSON.stringify(op)}`);
    }
  }
  return doc;
}
