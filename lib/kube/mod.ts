/**
 * kinglet's Kubernetes client: configuration (kubeconfig, in-cluster, exec
 * plugins), the {@link KubeClient} (CRUD, pagination, patches, server-side
 * apply, status, watches) and its typed errors.
 *
 * @example
 * ```ts ignore
 * import { CONFIG_MAPS, isNotFound, KubeClient, loadConfig } from "./mod.ts";
 * const client = new KubeClient(await loadConfig());
 * try {
 *   await client.get(CONFIG_MAPS, "settings", { namespace: "default" });
 * } catch (e) {
 *   if (!isNotFound(e)) throw e;
 * } finally {
 *   client.close();
 * }
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
