/**
 * What `/debug/cache?cache=<name>` serves: the keys one cache holds, each
 * with its resourceVersion, whether its object is resident or was evicted
 * under the memory budget, and its estimated size, one page at a time.
 *
 * Never an object's contents: a cache of Secrets is listed by key like any
 * other. Everything is computed when asked, from what the store keeps anyway,
 * so a cache nobody inspects pays nothing per key.
 *
 * @example
 * ```ts
 * import { cacheKeysPage } from "./cache_debug.ts";
 * import { Store } from "./store.ts";
 * const store = new Store();
 * store.apply({ type: "applied", object: { metadata: { namespace: "a", name: "x", resourceVersion: "7" } } });
 * const page = cacheKeysPage("configmaps", store, { limit: "10" });
 * page.items[0]; // { key: "a/x", resourceVersion: "7", resident: true, bytes: … }
 * ```
 *
 * @module
 */
import type { ObjectKey } from "../../kube/types.ts";
import type { Store } from "./store.ts";

/** One key of a cache, as `/debug/cache` lists it. */
export interface CacheKeyRow {
  /** `namespace/name` of the object. */
  key: ObjectKey;
  /** The object's resourceVersion as the cache holds it. */
  resourceVersion: string;
  /** Whether the full object is in memory; false when evicted under the budget. */
  resident: boolean;
  /** Estimated bytes of the object in memory; null when evicted. */
  bytes: number | null;
}

/** One page of a cache's keys, in key order. */
export interface CacheKeysPage {
  /** The cache's name, as `/debug/cache` lists it. */
  cache: string;
  /** Keys the cache holds in all, on every page. */
  keys: number;
  /** The keys of this page. */
  items: CacheKeyRow[];
  /** Pass as `continue` for the next page; absent on the last one. */
  continue?: string;
}

/** Keys per page when the request names no `limit`. */
export const DEFAULT_PAGE_LIMIT = 500;
/** The largest `limit` a request may ask for. */
export const MAX_PAGE_LIMIT = 5_000;

/**
 * One page of `store`'s keys after the `continue` token, at most `limit`
 * long. The token is the last key of the previous page, so a page stays
 * right when keys come and go in between.
 *
 * @throws {RangeError} when `limit` is not an integer in [1, {@link MAX_PAGE_LIMIT}]
 * or `continue` is not a token this function made.
 */
export function cacheKeysPage(
  cache: string,
  store: Pick<Store, "keys" | "entry" | "residentBytes">,
  options: { limit?: string | null; continue?: string | null } = {},
): CacheKeysPage {
  const limit = options.limit ? Number(options.limit) : DEFAULT_PAGE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
    throw new RangeError(
      `'limit' must be an integer from 1 to ${MAX_PAGE_LIMIT}, got ${
        JSON.stringify(options.limit)
      }`,
    );
  }
  const after = options.continue ? decodeToken(options.continue) : undefined;
  const keys = store.keys().sort();
  const start = after === undefined ? 0 : firstAfter(keys, after);
  const items: CacheKeyRow[] = [];
  for (const key of keys.slice(start, start + limit)) {
    const entry = store.entry(key);
    if (!entry) continue;
    items.push({
      key,
      resourceVersion: entry.resourceVersion,
      resident: entry.cached,
      bytes: store.residentBytes(key) ?? null,
    });
  }
  const more = start + limit < keys.length;
  return {
    cache,
    keys: keys.length,
    items,
    ...(more && items.length && { continue: encodeToken(items[items.length - 1]!.key) }),
  };
}

/** Index of the first key greater than `after` in sorted `keys`. */
function firstAfter(keys: readonly string[], after: string): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (keys[mid]! <= after) low = mid + 1;
    else high = mid;
  }
  return low;
}

function encodeToken(key: ObjectKey): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(key)));
}

function decodeToken(token: string): ObjectKey {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(
      Uint8Array.from(atob(token), (c) => c.charCodeAt(0)),
    );
  } catch {
    throw new RangeError(
      `'continue' must be the token of a previous page, got ${JSON.stringify(token)}`,
    );
  }
}
