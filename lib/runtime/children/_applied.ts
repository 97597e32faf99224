/**
 * What a field manager's server-side apply left on an object, as one number
 * the store keeps beside it (the memo {@link appliedMemo} gives a cache of
 * children) and the child applier compares with what it would apply now: {@link appliedFingerprint} reads the object's `managedFields`
 * entry of that manager (operation `Apply`, no subresource) and takes the
 * object's values at exactly the fields the entry owns; {@link
 * desiredFingerprint} takes the same of a desired object. The two are equal
 * when an apply of the desired object would change nothing: every field the
 * manager sets holds its value and is still the manager's (a field someone
 * else changed or removed leaves the manager's field set), and the manager
 * owns no field the desired object has dropped.
 *
 * A value the API server stores in another spelling than it was sent (a
 * quantity `0.5` kept as `500m`) makes the two differ: the apply is then
 * made, as it would be without the fingerprint.
 *
 * @module
 */
import type { KubeObject } from "../../kube/types.ts";
import { sameJson } from "../objects/same_json.ts";
import { hashText } from "../cache/fingerprint.ts";

/** A `fieldsV1` set: `f:<field>`, `k:<keys>`, `v:<value>`, `i:<index>` and `.` (the node itself). */
type FieldSet = { readonly [path: string]: FieldSet };

/**
 * The fingerprint of what `manager`'s apply owns on `object`, or `undefined`
 * when no apply of that manager is recorded on it.
 */
export function appliedFingerprint(object: KubeObject, manager: string): number | undefined {
  const entry = object.metadata?.managedFields?.find((e) =>
    e.manager === manager && e.operation === "Apply" && !e.subresource
  );
  if (!entry?.fieldsV1 || (entry.fieldsType ?? "FieldsV1") !== "FieldsV1") return undefined;
  const out = [JSON.stringify(entry.apiVersion ?? ""), ","];
  const { metadata } = object;
  const meta = metadata && { ...metadata, name: undefined, namespace: undefined };
  emitOwned(
    entry.fieldsV1 as FieldSet,
    { ...object, apiVersion: undefined, kind: undefined, metadata: meta },
    out,
  );
  return hashText(out.join(""));
}

/** One memo per field manager, so that the caches of two controllers with one manager are shared. */
const memos = new Map<string, (object: KubeObject) => number | undefined>();

/**
 * The store memo of a cache of children written by `manager`'s server-side
 * applies: {@link appliedFingerprint} of each object. The same function for
 * the same manager, since caches are shared by their memo function.
 */
export function appliedMemo(manager: string): (object: KubeObject) => number | undefined {
  let memo = memos.get(manager);
  if (!memo) memos.set(manager, memo = (object) => appliedFingerprint(object, manager));
  return memo;
}

/** The fingerprint an apply of `desired` leaves, when the server keeps every value as sent. */
export function desiredFingerprint(desired: KubeObject): number {
  const { apiVersion, kind: _k, metadata, ...rest } = desired;
  const { name: _n, namespace: _ns, ...meta } = metadata ?? {};
  const body = Object.keys(meta).length === 0 ? rest : { ...rest, metadata: meta };
  const out = [JSON.stringify(apiVersion ?? ""), ","];
  emitValue(body, out);
  return hashText(out.join(""));
}

/**
 * Writes to `out` the canonical JSON (see {@link emitValue}) of the parts of
 * `value` that `fields` names: a field set with no paths below it (or only
 * `.`) names the whole value; under it, `f:` paths name fields of an object
 * and `k:`, `v:` and `i:` paths items of a list. A named field the value
 * lacks is left out, as is every item no path names.
 */
function emitOwned(fields: FieldSet, value: unknown, out: string[]): void {
  let paths: string[] | undefined;
  for (const path in fields) if (path !== ".") (paths ??= []).push(path);
  if (paths === undefined || value === null || typeof value !== "object") {
    emitValue(value, out);
    return;
  }
  if (Array.isArray(value)) {
    const matchers = paths.map((path) => itemMatcher(path));
    out.push("[");
    let first = true;
    value.forEach((item, index) => {
      const at = matchers.findIndex((matches) => matches(item, index));
      if (at < 0) return;
      if (!first) out.push(",");
      first = false;
      emitOwned(fields[paths[at]!]!, item, out);
    });
    out.push("]");
    return;
  }
  const object = value as Record<string, unknown>;
  const named: [string, FieldSet][] = [];
  for (const path of paths) {
    if (!path.startsWith("f:")) continue;
    const name = path.slice(2);
    if (object[name] !== undefined) named.push([name, fields[path]!]);
  }
  if (named.length > 1) named.sort(([a], [b]) => (a < b ? -1 : 1));
  out.push("{");
  for (let i = 0; i < named.length; i++) {
    const [name, inner] = named[i]!;
    out.push(i === 0 ? "" : ",", JSON.stringify(name), ":");
    emitOwned(inner, object[name], out);
  }
  out.push("}");
}

/** Writes `value` to `out` as JSON with every object's keys sorted and `undefined` fields left out. */
function emitValue(value: unknown, out: string[]): void {
  if (value === null || typeof value !== "object") {
    out.push(JSON.stringify(value) ?? "null");
    return;
  }
  if (Array.isArray(value)) {
    out.push("[");
    value.forEach((item, i) => {
      if (i > 0) out.push(",");
      emitValue(item, out);
    });
    out.push("]");
    return;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).filter((key) => object[key] !== undefined).sort();
  out.push("{");
  keys.forEach((key, i) => {
    out.push(i === 0 ? "" : ",", JSON.stringify(key), ":");
    emitValue(object[key], out);
  });
  out.push("}");
}

/** Matchers by path: list keys repeat across objects (`k:{"name":"app"}`); a few hundred are kept. */
const matchers = new Map<string, (item: unknown, index: number) => boolean>();

/** A test of whether a list item is the one the `k:`, `v:` or `i:` path names. */
function itemMatcher(path: string): (item: unknown, index: number) => boolean {
  let matcher = matchers.get(path);
  if (!matcher) {
    if (matchers.size >= 256) matchers.clear();
    matchers.set(path, matcher = newMatcher(path));
  }
  return matcher;
}

function newMatcher(path: string): (item: unknown, index: number) => boolean {
  const kind = path.slice(0, 2);
  if (kind === "i:") {
    const at = Number(path.slice(2));
    return (_item, index) => index === at;
  }
  if (kind !== "k:" && kind !== "v:") return () => false;
  let named: unknown;
  try {
    named = JSON.parse(path.slice(2));
  } catch {
    return () => false;
  }
  if (kind === "v:") return (item) => sameJson(item, named);
  if (named === null || typeof named !== "object") return () => false;
  const keys = Object.entries(named);
  return (item) => {
    if (item === null || typeof item !== "object") return false;
    const fields = item as Record<string, unknown>;
    return keys.every(([key, want]) => sameJson(fields[key], want));
  };
}
