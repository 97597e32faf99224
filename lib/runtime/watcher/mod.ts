/**
 * Watches a resource, with error recovery: the first stage of the pipeline.
 *
 * {@link watcher} lists a resource (paginated, or as a streaming list where
 * the server supports it), watches it from the list's resourceVersion with
 * bookmarks, resumes after errors with backoff and jitter, relists on 410
 * Gone, and restarts a watch that stalls. {@link listerWatcher} binds it to a
 * {@link KubeClient}-like client and a resource. {@link OutageReport} keeps one
 * warning per retry round when the server cannot be reached at all.
 *
 * @example
 * ```ts
 * import { watcher } from "./mod.ts";
 * // Usually `watcher(listerWatcher(client, CONFIG_MAPS))`; here, an empty collection.
 * const configMaps = watcher({
 *   list: () => Promise.resolve({ metadata: { resourceVersion: "1" }, items: [] }),
 *   watch: async function* () {},
 * }, { streamingList: "off" });
 * const stop = new AbortController();
 * for await (const event of configMaps.events(stop.signal)) {
 *   if (event.type === "initDone") stop.abort(); // every initPage since the last init came before
 * }
 * ```
 *
 * @module
 */
export * from "./outage.ts";
export * from "./streaming_lists.ts";
export * from "./watcher.ts";
