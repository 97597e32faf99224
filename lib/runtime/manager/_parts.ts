/**
 * What a manager is made of, built from its options: the client (its own
 * when none is given), the metrics, the reconcile permits and the retry
 * bucket every controller shares (lib/runtime/scheduling/permits.ts), the
 * memory limit's keeper, the Event recorder, the leader election and the
 * shared caches. Building them checks the options; nothing runs yet.
 *
 * @module
 */
import { type Clock, systemClock } from "../../async/clock.ts";
import type { KubeObject } from "../../kube/types.ts";
import { Caches } from "../cache/caches.ts";
import type { Controller } from "../controller/controller.ts";
import { EventRecorder, eventSink } from "../events/events.ts";
import { MemoryKeeper } from "../memory/keeper.ts";
import { RuntimeMetrics } from "../metrics/metrics.ts";
import { SharedPermits } from "../scheduling/permits.ts";
import type { WebhookServing, WebhookServingOptions } from "../webhook/serving.ts";
import { type AdmissionWebhook, type Conversion, parseWebhookAddress } from "../webhook/spec.ts";
import { KubeconfigClient } from "./_kubeconfig_client.ts";
import { electionOf, type LeaderElection } from "./leader_election.ts";
import type { ManagerClient, ManagerOptions } from "./options.ts";

/** The parts of a manager; see the module documentation. */
export interface ManagerParts {
  options: ManagerOptions;
  metrics: RuntimeMetrics;
  client: ManagerClient;
  /** The client the manager made itself, connected and closed by its run. */
  ownClient: KubeconfigClient | undefined;
  clock: Clock;
  permits: SharedPermits;
  /** Keeps `memoryLimit`; absent without one. */
  memory: MemoryKeeper | undefined;
  events: EventRecorder;
  /** Ends the recorder after the last flush. */
  eventsLife: AbortController;
  election: LeaderElection | undefined;
  caches: Caches;
  /** The controllers added, in order; the memory limit shares the caches among them. */
  controllers: Controller<KubeObject>[];
  /** The webhooks added and where to serve them; absent without the `webhook` option. */
  webhooks: WebhookPlan | undefined;
}

/**
 * The webhooks a manager serves. The server is loaded when the manager
 * runs with webhooks added, so an operator without any never loads it.
 */
export interface WebhookPlan {
  options: WebhookServingOptions;
  added: (AdmissionWebhook | Conversion)[];
  /** The server, once the webhooks runnable made it. */
  serving?: WebhookServing;
}

/**
 * Builds the parts `options` describe.
 *
 * @throws {RangeError} when `maxConcurrentReconciles` or `memoryLimit` is
 * not a positive integer, a reporting name is empty or longer than 128
 * bytes, or the Lease's namespace, name or identity is empty.
 * @throws {TypeError} when `reportingInstance` or the Lease identity is
 * left to its default and the host's name may not be read.
 */
export function managerParts(options: ManagerOptions): ManagerParts {
  const metrics = options.metrics ?? new RuntimeMetrics();
  const ownClient = options.client ? undefined : new KubeconfigClient(options.connection, {
    onRequest: metrics.observeRequest,
    onRateLimited: metrics.observeRateLimit,
  });
  const client = options.client ?? ownClient!;
  const clock = options.clock ?? systemClock;
  const permits = new SharedPermits({ ...options, clock });
  const plan = permits.plan;
  const controllers: Controller<KubeObject>[] = [];
  const pageSize = options.watcherOptions?.pageSize ?? plan?.pageSize;
  const caches = new Caches({
    client,
    clock,
    ...(options.namespace !== undefined && { namespace: options.namespace }),
    ...((options.watcherOptions || pageSize) &&
      { watcherOptions: { ...options.watcherOptions, ...(pageSize && { pageSize }) } }),
  });
  const memory = plan && new MemoryKeeper(plan, {
    clock,
    budget: options.budget,
    concurrency: (n) => permits.resize(n),
    caches: () => caches,
    // A controller's reflectors start with its primary's.
    primaries: () => controllers.map((c) => c.reflectors[0]!),
  });
  if (memory) metrics.trackMemory(() => memory.stats());
  const eventsLife = new AbortController();
  const { reportingController, reportingInstance } = options;
  const events = new EventRecorder(eventSink(client), {
    ...(reportingController !== undefined && { reportingController }),
    ...(reportingInstance !== undefined && { reportingInstance }),
    clock,
    signal: eventsLife.signal,
    ...(plan && { maxTracked: plan.eventsTracked }),
  });
  const election = options.leaderElection && electionOf(options.leaderElection, client, clock);
  if (options.webhook) {
    parseWebhookAddress(options.webhook.address ?? "127.0.0.1:9443");
    if (!options.webhook.operator) {
      throw new RangeError("Cannot serve webhooks: 'webhook.operator' must name the operator");
    }
  }
  const webhooks = options.webhook && { options: options.webhook, added: [] };
  return {
    options,
    metrics,
    client,
    ownClient,
    clock,
    permits,
    memory,
    events,
    eventsLife,
    election,
    caches,
    controllers,
    webhooks,
  };
}
