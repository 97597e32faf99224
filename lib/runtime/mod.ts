/**
 * kinglet's controller runtime: watcher → store → queue → reconciler (under a
 * semaphore) → client, with a manager that owns the lifecycles.
 *
 * A complete controller: it keeps a `replicas` label on every Deployment in
 * step with its spec, re-reading nothing (the object comes from the cache)
 * and writing with server-side apply, which is idempotent. Everything the
 * reconcile needs comes through its context: the client, the caches, the
 * children, Events bound to the object, and a status write. The manager
 * connects as kubectl would (`KUBECONFIG`, in-cluster, `~/.kube/config`) and
 * runs until SIGINT or SIGTERM.
 *
 * ```ts
 * import { Manager, setupLogging } from "./mod.ts";
 * import { DEPLOYMENTS, type Wire } from "../kube/mod.ts";
 * import type { V1Deployment } from "@kubernetes/client-node";
 *
 * const FIELD_MANAGER = "replica-labels";
 *
 * async function main(): Promise<void> {
 *   setupLogging({ level: "info" }); // the runtime logs nothing until told where
 *   const manager = new Manager({ reportingController: "example.com/replica-labels" });
 *   manager.add<Wire<V1Deployment>>({
 *     name: "replica-labels",
 *     resource: DEPLOYMENTS,
 *     fieldManager: FIELD_MANAGER, // of its children's and its status' applies
 *     async reconcile(deployment, { client, events, signal }) {
 *       const replicas = String(deployment.spec?.replicas ?? 1);
 *       if (deployment.metadata?.labels?.replicas === replicas) return {};
 *       const { name, namespace } = deployment.metadata ?? {};
 *       await client.apply(DEPLOYMENTS, {
 *         apiVersion: "apps/v1",
 *         kind: "Deployment",
 *         metadata: { name, namespace, labels: { replicas } },
 *       }, { fieldManager: FIELD_MANAGER, signal });
 *       events.publish({ type: "Normal", reason: "Labelled", action: "Reconcile", note: replicas });
 *       return {}; // done until the Deployment changes
 *     },
 *   });
 *   await manager.run(); // until SIGINT or SIGTERM: drains, flushes Events, resolves
 * }
 *
 * if (import.meta.main) await main();
 * ```
 *
 * What the caller must know:
 *
 * - Reconciles are level-triggered: `reconcile` gets the current object from
 *   the cache, never an event, and must converge from any state. A key is
 *   never reconciled twice at once.
 * - A thrown error is retried with backoff; a {@link TerminalError} waits
 *   for the object to change; `{ requeueAfterMs }` asks to be called again.
 * - The caches may be stale by the latency of the watch: writes carry
 *   preconditions or use server-side apply.
 * - Every stage takes a `Clock` of `@kinglet/kinglet/async`, so tests step
 *   a `FakeClock` instead of sleeping.
 * - The manager's endpoints listen on loopback by default
 *   (`127.0.0.1:8080`, `127.0.0.1:8081`).
 *
 * This module exports what an author's operator imports: what the examples,
 * `kinglet init`'s project and kinglet's own operators use, and nothing else.
 * Each stage is a module of its own, usable on its own and reached by its
 * path: `@kinglet/kinglet/runtime/watcher` (lists and watches with recovery),
 * `/cache` (stores, reflectors, the shared caches), `/queue` (the work queue
 * and its rate limiters), `/controller` (the controller, its spec and
 * reconcile context, finalizers, error policies), `/events`, `/leader`,
 * `/metrics`, `/memory` (a memory limit kept by degrading in order),
 * `/manager` (its options, endpoints and election), `/crds`, `/rbac`
 * (least-privilege rules derived from the controller specs), `/objects`
 * (conditions, owner references, order-insensitive equality) and `/webhook`
 * (admission and conversion webhooks and the HTTPS server that answers them).
 *
 * @example A work queue on a fake clock, the way the runtime's tests drive it
 * ```ts
 * import { WorkQueue } from "./queue/mod.ts";
 * import { FakeClock } from "../async/mod.ts";
 * const clock = new FakeClock();
 * const queue = new WorkQueue<string>({ clock });
 * queue.addAfter("default/web", 1_000);
 * await clock.advance(1_000);
 * if (await queue.get() !== "default/web") throw new Error("not due");
 * queue.shutDown();
 * ```
 *
 * @module
 */
export { setupLogging } from "../log.ts";
export { projectPrimary } from "./cache/mod.ts";
export {
  type ControllerSpec,
  OWNER_LABELS,
  ownerKind,
  type ReconcileContext,
  type ReconcileEvents,
  TerminalError,
} from "./controller/mod.ts";
export { installCrds } from "./crds/mod.ts";
export { Manager } from "./manager/mod.ts";
export { type Condition, controllerReference, findCondition, setCondition } from "./objects/mod.ts";
export { controllerRules } from "./rbac/mod.ts";
export { type ErrorPolicy, fixedErrorPolicy, tieredErrorPolicy } from "./scheduling/mod.ts";
