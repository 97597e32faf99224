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
 * - Every stage takes a {@link Clock} from the async layer, so tests step a
 *   `FakeClock` instead of sleeping.
 *
 * - The manager's endpoints listen on loopback by default
 *   (`127.0.0.1:8080`, `127.0.0.1:8081`).
 *
 * This module exports what an author writes and runs controllers with (the
 * manager, the controller spec and its reconcile context, conditions,
 * finalizers, error policies, CRD installation, RBAC rules, logging) and the
 * types their signatures name. The stages are usable on their own, each
 * reached by its module path, `lib/runtime/<stage>/mod.ts`: `watcher/`,
 * `cache/`, `queue/`, `controller/`, `events/`, `leader/`, `metrics/`,
 * `memory/` (a memory limit kept by degrading in order), `manager/`, `crds/`
 * and `rbac/` (least-privilege rules derived from the controller specs);
 * `objects/` holds the helpers a reconcile uses on the objects it writes
 * (conditions, owner references, order-insensitive equality).
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
// What examples, kinglet's operators, main.ts, the CLI and the README use, and every type their
// signatures name: Manager's `add`, `caches`, `events` and `metrics` bring in the stages' classes.
export type { Clock } from "../async/clock.ts";
export { type LogFormat, type LoggingOptions, type LogLevel, setupLogging } from "../log.ts";
export {
  type CacheClient,
  type CacheEntry,
  type CacheOptions,
  type CacheReader,
  type Caches,
  projectPrimary,
  type Reflector,
  type Store,
  type StoreBudget,
  type StoreChange,
  type StoreEntry,
  type StoreStats,
  type StoreView,
} from "./cache/mod.ts";
export {
  type Action,
  addFinalizer,
  type ApplyChild,
  type Children,
  type Controller,
  type ControllerClient,
  type ControllerSpec,
  finalizer,
  type FinalizerClient,
  type FinalizerHandlers,
  type FinalizerSpec,
  type Owned,
  OWNER_LABELS,
  ownerKind,
  type PrimaryView,
  type ReconcileClient,
  type ReconcileContext,
  type ReconcileEvents,
  removeFinalizer,
  TerminalError,
  type Watch,
} from "./controller/mod.ts";
export {
  type CrdCondition,
  CrdWaitError,
  installCrds,
  type InstallCrdsOptions,
  uninstallCrds,
  type UninstallCrdsOptions,
} from "./crds/mod.ts";
export type { EventInit, EventPublisher, EventRecorder, EventRecorderStats } from "./events/mod.ts";
export type { LeaseClient } from "./leader/mod.ts";
export {
  type EndpointAuth,
  type LeaderElection,
  type LeaseElectionOptions,
  Manager,
  type ManagerClient,
  type ManagerOptions,
  type ManagerOutcome,
  type ReviewClient,
  type RunningListener,
  tokenReviewAuth,
  type TokenReviewAuthOptions,
} from "./manager/mod.ts";
export {
  type CgroupMemoryLimit,
  cgroupMemoryLimit,
  type CgroupReadOptions,
  MEMORY_LIMIT_FORMS,
  type MemoryLevel,
  type MemoryStats,
  parseMemoryLimit,
} from "./memory/mod.ts";
export {
  type ControllerMetrics,
  type Counter,
  type Gauge,
  type Histogram,
  type Labels,
  type Metric,
  type ProcessStats,
  type ReconcileResult,
  type Registry,
  RuntimeMetrics,
  type RuntimeMetricsOptions,
  type Series,
  type StatsSource,
} from "./metrics/mod.ts";
export {
  type Condition,
  type ConditionStatus,
  type ConditionUpdate,
  controllerReference,
  findCondition,
  isConditionTrue,
  setCondition,
} from "./objects/mod.ts";
export type { AddOptions, QueueMetrics, QueueSnapshot, WorkQueue } from "./queue/mod.ts";
export {
  type ErrorPolicy,
  fixedErrorPolicy,
  type PacingOptions,
  tieredErrorPolicy,
} from "./scheduling/mod.ts";
export {
  type AdmissionObject,
  type ConfinedResource,
  controllerRules,
  type ControllerRulesOptions,
  crdInstallRule,
  type ExplainedRule,
  leaderElectionRules,
  type OwnershipPolicy,
  ownershipPolicy,
  type OwnershipPolicyOptions,
  type OwnershipSpec,
  type PolicyRule,
  type RbacRule,
  type RbacSpec,
  type UnconfinedResource,
} from "./rbac/mod.ts";
export type {
  ListWatchClient,
  OutageReport,
  StreamingLists,
  Unreachable,
  WatcherEvent,
  WatcherFreshness,
  WatcherOptions,
} from "./watcher/mod.ts";
