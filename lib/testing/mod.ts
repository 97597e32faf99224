/**
 * The test kit: what an operator's tests need, as envtest and the fake
 * client are for controller-runtime.
 *
 * - {@link MemoryCluster}: an in-memory API server a `Manager` or a
 *   `Controller` takes as its client, for unit tests of a reconciler (its
 *   children, status, finalizer and Events) in milliseconds;
 * - {@link FakeClock}: time a test moves by hand, so requeues, retries and
 *   timeouts happen when the test says, not after real waiting;
 * - {@link waitFor}: waits for what the pipeline does in the background,
 *   failing with what it waited for;
 * - Nodes with labels and a readiness the test sets
 *   (`cluster.node(name, { labels })`, then `setReady` and `setLabels`), on
 *   both clusters, for an operator that selects or counts Nodes;
 * - {@link testCluster}: a real API server (a shared cluster, or etcd and
 *   kube-apiserver started from `KUBEBUILDER_ASSETS`) and a namespace;
 * - {@link testServiceAccount} (`cluster.serviceAccount({ rules, policy })`):
 *   the operator under exactly the RBAC its specs derive and, with
 *   `policy: specs`, the ownership policy deployed beside it, and
 *   {@link assertNoDenials} to fail naming each verb and resource it lacked
 *   or each write the policy refused.
 *
 * A unit test of a `ControllerSpec`: run it in a `Manager` over the
 * in-memory API server on a fake clock, change objects as a user would, and
 * wait for what the controller should do. Pass `metricsAddress: "0"` and
 * `healthAddress: "0"` (no listeners) and a `reportingInstance` (the default
 * reads the host's name); advance the clock to reach a requeue or a retry.
 *
 * @example A controller with a child, status, a finalizer and an Event
 * ```ts
 * import { FakeClock, MemoryCluster, waitFor } from "./mod.ts";
 * import { type ControllerSpec, controllerReference, Manager } from "../runtime/mod.ts";
 * import { CONFIG_MAPS, EVENTS, type KubeObject, type Resource } from "../kube/mod.ts";
 *
 * const BACKUPS: Resource = {
 *   group: "example.com", version: "v1", plural: "backups", kind: "Backup", namespaced: true,
 * };
 * interface Backup extends KubeObject {
 *   spec?: { schedule?: string };
 *   status?: { observedGeneration?: number };
 * }
 * const backups: ControllerSpec<Backup> = {
 *   name: "backup",
 *   resource: BACKUPS,
 *   owns: [{ resource: CONFIG_MAPS }],
 *   finalizer: {
 *     name: "example.com/backup",
 *     cleanup(_backup, { events }) {
 *       events.publish({ type: "Normal", reason: "Released", action: "Cleanup", note: "done" });
 *       return Promise.resolve({});
 *     },
 *   },
 *   async reconcile(backup, { children, signal, status }) {
 *     const { name, namespace } = backup.metadata!;
 *     await children.apply(CONFIG_MAPS, {
 *       apiVersion: "v1",
 *       kind: "ConfigMap",
 *       metadata: { name, namespace, ownerReferences: [controllerReference(backup)] },
 *       data: { schedule: backup.spec?.schedule ?? "@daily" },
 *     }, signal);
 *     await status({ observedGeneration: backup.metadata?.generation });
 *     return { requeueAfterMs: 60_000 };
 *   },
 * };
 *
 * const clock = new FakeClock();
 * const cluster = new MemoryCluster({ clock, namespaces: ["shop"] });
 * const manager = new Manager({
 *   client: cluster, clock, metricsAddress: "0", healthAddress: "0", reportingInstance: "test",
 * });
 * manager.add(backups);
 * const stop = new AbortController();
 * const running = manager.run(stop.signal);
 * try {
 *   cluster.put(BACKUPS, {
 *     apiVersion: "example.com/v1", kind: "Backup",
 *     metadata: { name: "nightly", namespace: "shop" }, spec: { schedule: "0 3 * * *" },
 *   });
 *   const child = await waitFor("the ConfigMap", () =>
 *     cluster.object<KubeObject & { data?: { schedule?: string } }>(CONFIG_MAPS, "shop/nightly"));
 *   if (child.data?.schedule !== "0 3 * * *") throw new Error("wrong schedule");
 *   await waitFor("the status", () => cluster.object<Backup>(BACKUPS, "shop/nightly")?.status);
 *
 *   await cluster.delete(BACKUPS, "nightly", { namespace: "shop" });
 *   await waitFor("the Backup to go", () => !cluster.object(BACKUPS, "shop/nightly"));
 *   await waitFor("the Released Event", () =>
 *     cluster.objects<KubeObject & { reason?: string }>(EVENTS).some((e) => e.reason === "Released"));
 * } finally {
 *   stop.abort();
 *   await running;
 * }
 * ```
 *
 * @module
 */
export { FakeClock } from "../async/clock.ts";
export * from "./memory_cluster.ts";
export * from "./wait_for.ts";
export * from "./cluster.ts";
export * from "./denials.ts";
export * from "./service_account.ts";
export type { TestNode, TestNodeOptions } from "./nodes.ts";
// Named by ServiceAccountOptions.rules; what derives such rules lives in ./runtime.
export type { PolicyRule } from "../runtime/rbac/policy_rule.ts";
