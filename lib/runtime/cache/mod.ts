/**
 * The caches reconcilers read: a {@link Store} keyed `namespace/name` with
 * owner and custom indexes and an optional memory budget, the
 * {@link Reflector} that feeds a store from a watcher, and the {@link Caches}
 * a manager shares between its controllers (one watch and one store per
 * resource), and {@link projectPrimary}, a transform that holds thousands of
 * primaries' repeated strings once.
 *
 * Note that a cache may be stale by the latency of the watch: writes based on
 * it carry preconditions or use server-side apply.
 *
 * @example
 * ```ts
 * import { Store } from "./mod.ts";
 * import { objectKey } from "../../kube/mod.ts";
 * const store = new Store();
 * store.apply({
 *   type: "applied",
 *   object: { metadata: { namespace: "default", name: "web", uid: "u1", resourceVersion: "7" } },
 * });
 * const key = objectKey({ metadata: { namespace: "default", name: "web" } });
 * if (store.get(key)?.metadata?.uid !== "u1") throw new Error("not cached");
 * ```
 *
 * @module
 */
export * from "./caches.ts";
export { projectPrimary } from "./projections.ts";
export * from "./reflector.ts";
export * from "./store.ts";
