/**
 * `events.k8s.io/v1` Events about objects: an {@link EventRecorder} that
 * never blocks its caller, folds repeats into series and rate-limits writes,
 * writing through an {@link EventSink} ({@link eventSink} binds one to a
 * client).
 *
 * @example
 * ```ts
 * import { EventRecorder } from "./mod.ts";
 * const written: unknown[] = [];
 * const recorder = new EventRecorder({
 *   create: (event) => Promise.resolve(written.push(event)),
 *   patch: (_namespace, _name, patch) => Promise.resolve(written.push(patch)),
 * }, { reportingInstance: "node-a" });
 * const web = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "web", namespace: "shop", uid: "4b1c" } };
 * recorder.publish(web, { type: "Normal", reason: "Rendered", action: "Reconcile", note: "rendered" });
 * await recorder.flush(AbortSignal.timeout(5_000));
 * if (written.length !== 1) throw new Error("not written");
 * ```
 *
 * @module
 */
export * from "./events.ts";
