/**
 * kinglet's Kubernetes client: configuration (kubeconfig, in-cluster, exec
 * plugins), the {@link KubeClient} (CRUD, pagination, patches, server-side
 * apply, status, watches), its typed errors, and the object keys the runtime
 * caches by.
 *
 * Errors say whether a retry can help: {@link ApiError} carries the status,
 * the reason and `retryable`; {@link TransportError} means no answer at all;
 * {@link ConfigError} means the configuration must change first.
 *
 * @example Reading a ConfigMap that may not exist
 * ```ts
 * import { CONFIG_MAPS, isNotFound, KubeClient, type KubeObject, loadConfig } from "./mod.ts";
 * // Needs a cluster: loadConfig reads KUBECONFIG, ~/.kube/config or the in-cluster account.
 * async function settings(): Promise<KubeObject | undefined> {
 *   const client = new KubeClient(await loadConfig());
 *   try {
 *     return await client.get(CONFIG_MAPS, "settings", { namespace: "default" });
 *   } catch (e) {
 *     if (!isNotFound(e)) throw e;
 *     return undefined;
 *   } finally {
 *     client.close();
 *   }
 * }
 * ```
 *
 * @example Addressing objects and telling errors apart, without a cluster
 * ```ts
 * import { ApiError, CONFIG_MAPS, isNotFound, objectKey, resourcePath } from "./mod.ts";
 * const path = resourcePath(CONFIG_MAPS, { namespace: "default", name: "settings" });
 * if (path !== "/api/v1/namespaces/default/configmaps/settings") throw new Error(path);
 * if (objectKey({ metadata: { namespace: "default", name: "settings" } }) !== "default/settings") {
 *   throw new Error("unexpected key");
 * }
 * const gone = new ApiError({ status: 404, message: "not found", verb: "GET", path });
 * if (!isNotFound(gone) || gone.retryable) throw new Error("a 404 is final");
 * ```
 *
 * @module
 */
export * from "./client.ts";
export * from "./config.ts";
export * from "./errors.ts";
export * from "./resources.ts";
export * from "./token_source.ts";
export * from "./types.ts";
export * from "./watch.ts";
export * from "./micro_time.ts";
export * from "./object_key.ts";
