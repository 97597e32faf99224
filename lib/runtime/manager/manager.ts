/**
 * The manager owns lifecycles: it serves the HTTP endpoints, takes the
 * leader Lease when asked to, starts the shared caches, waits for them to
 * sync, runs the controllers, and on shutdown drains reconciles in flight
 * within a deadline and releases the Lease.
 *
 * What the caller must know:
 *
 * - `/healthz` answers 200 while the process runs; `/readyz` answers 200
 *   only when every cache has synced and every watch showed life recently
 *   (a standby answers 200 too: it is healthy, just waiting), and 503 with
 *   the reasons otherwise.
 * - A watch that cannot work at all (a Deno permission denial) stops the
 *   controllers and makes {@link Manager.run} throw it.
 * - Losing the Lease stops every reconcile at once (before the Lease can
 *   expire) and makes {@link Manager.run} resolve with `"leadership-lost"`;
 *   restart the process to stand again, as controller-runtime does.
 *
 * @example
 * ```ts
 * import { Manager } from "./manager.ts";
 * import type { ManagerClient } from "./manager.ts";
 * // Needs a cluster: `client` is usually a `KubeClient`.
 * async function example(client: ManagerClient): Promise<void> {
 *   const manager = new Manager({ client, metricsAddress: "0", healthAddress: "0" });
 *   const stop = new AbortController();
 *   const outcome = manager.run(stop.signal);
 *   stop.abort();
 *   await outcome; // "stopped"
 * }
 * ```
 *
 * @module
 */
import type { KubeObject } from "../../kube/types.ts";
import { logger } from "../../log.ts";
import { cacheKeysPage } from "../cache/cache_debug.ts";
import { type CacheClient, Caches } from "../cache/caches.ts";
import { type Clock, systemClock } from "../../async/clock.ts";
import { Controller } from "../controller/controller.ts";
import type { ControllerSpec } from "../controller/spec.ts";
import { HeapRelease } from "./_heap_release.ts";
import type { EndpointAuth } from "./endpoint_auth.ts";
import { type Listener, type Route, type RunningListener, serveEndpoints } from "./http.ts";
import type { LeaderElector } from "../leader/leader.ts";
import { CONTENT_TYPE } from "../metrics/prometheus.ts";
import { RuntimeMetrics } from "../metrics/metrics.ts";
import { Semaphore } from "../../async/semaphore.ts";
import type { StoreBudget } from "../cache/store.ts";
import type { WatcherOptions } from "../watcher/watcher.ts";

/** How often the manager checks whether a finished burst left garbage to collect. */
const HEAP_RELEASE_CHECK_MS = 5_000;

/** What the manager needs of the client. */
export type ManagerClient = CacheClient;

/** Runs `lead` while holding leadership; see lib/runtime/leader.ts. */
export interface LeaderElection {
  /**
   * Campaigns until `signal` aborts, calling `lead` with a signal that aborts
   * when leadership is lost. Resolves after releasing the Lease.
   */
  run(signal: AbortSignal, lead: (leading: AbortSignal) => Promise<void>): Promise<void>;
}

/**
 * Adapts a {@link LeaderElector} to the manager: the work runs while we lead,
 * and the Lease is released only after the work has drained.
 */
export function leaseElection(elector: LeaderElector): LeaderElection {
  return {
    async run(signal, lead) {
      let work: Promise<void> = Promise.resolve();
      await elector.run(signal, {
        onStartedLeading: (leading) => {
          work = lead(leading);
          return work;
        },
        onStoppedLeading: () => work.catch(() => {}),
      });
    },
  };
}

/** Options of {@link Manager}; defaults follow controller-runtime where it has one. */
export interface ManagerOptions {
  /** Lists, watches and reads the cached resources. */
  client: ManagerClient;
  /** Watch only this namespace. Defaults to all. */
  namespace?: string;
  /** Reconciles running at once across all controllers. Defaults to 8. */
  maxConcurrentReconciles?: number;
  /** Caps on each primary cache. Defaults to none. */
  budget?: StoreBudget;
  /** Defaults to none (this process always leads). */
  leaderElection?: LeaderElection;
  /**
   * `host:port` for `/metrics` and `/debug/cache`; `0` disables. Defaults to
   * `127.0.0.1:8080`: loopback, since `/debug/cache` names every cached
   * object; listen wider with {@link ManagerOptions.metricsAuth}.
   */
  metricsAddress?: string;
  /**
   * Who may read `/metrics` and `/debug/cache`, e.g. {@link tokenReviewAuth}.
   * Defaults to anyone who can reach the address.
   */
  metricsAuth?: EndpointAuth;
  /**
   * `host:port` for `/healthz` and `/readyz` (never protected: kubelets probe
   * them); `0` disables. Defaults to `127.0.0.1:8081`.
   */
  healthAddress?: string;
  /**
   * How long shutdown waits for reconciles in flight. Defaults to 10 000 ms,
   * client-go's renew deadline: with leader election the Lease is no longer
   * renewed while draining, so a longer drain could overlap the next leader.
   */
  drainTimeoutMs?: number;
  /**
   * A watch silent for longer makes `/readyz` fail. Defaults to 660 000 ms:
   * a quiet watch is sure to hear only the server ending it, after its
   * server-side timeout of at most 600 s.
   */
  staleAfterMs?: number;
  /** Where the runtime reports. Defaults to a new {@link RuntimeMetrics}. */
  metrics?: RuntimeMetrics;
  /** Options of every watch (stall timeout, page size, streaming lists). */
  watcherOptions?: Omit<WatcherOptions, "backoff" | "outage" | "streamingLists">;
  /** Defaults to {@link systemClock}. */
  clock?: Clock;
}

/** Why {@link Manager.run} returned. */
export type ManagerOutcome = "stopped" | "leadership-lost";

type Phase = "starting" | "standby" | "syncing" | "running" | "stopping";

/** Runs controllers; see the module documentation. */
export class Manager {
  /** The metrics `/metrics` serves. */
  readonly metrics: RuntimeMetrics;
  /** The caches shared by the controllers. */
  readonly caches: Caches;
  readonly #options: ManagerOptions;
  readonly #clock: Clock;
  readonly #semaphore: Semaphore;
  readonly #controllers: Controller<KubeObject>[] = [];
  #phase: Phase = "starting";
  #listeners: RunningListener[] = [];

  /**
   * Creates a manager; add controllers with {@link Manager.add}, then {@link Manager.run} it.
   *
   * @throws {RangeError} when `maxConcurrentReconciles` is not a positive integer.
   */
  constructor(options: ManagerOptions) {
    const max = options.maxConcurrentReconciles ?? 8;
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(
        `Cannot create the manager: 'maxConcurrentReconciles' must be a positive integer, got ${max}`,
      );
    }
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#semaphore = new Semaphore(max);
    this.metrics = options.metrics ?? new RuntimeMetrics();
    this.caches = new Caches({
      client: options.client,
      clock: this.#clock,
      ...(options.namespace !== undefined && { namespace: options.namespace }),
      ...(options.watcherOptions && { watcherOptions: options.watcherOptions }),
    });
  }

  /** Registers a controller; call before {@link Manager.run}. */
  add<T extends KubeObject>(spec: ControllerSpec<T>): Controller<T> {
    const max = this.#options.maxConcurrentReconciles ?? 8;
    const controller = new Controller(spec, {
      client: this.#options.client,
      semaphore: this.#semaphore,
      caches: this.caches,
      clock: this.#clock,
      ...(this.#options.budget && { budget: this.#options.budget }),
      metrics: {
        queue: this.metrics.queue(spec.name),
        controller: this.metrics.controller(
          spec.name,
          Math.min(spec.maxConcurrentReconciles ?? max, max),
        ),
      },
    });
    // Every cache the controller reads, owned and watched kinds too: those are often the largest.
    for (const { kind, reflector } of this.caches.entries()) {
      if (controller.reflectors.includes(reflector)) this.metrics.trackStore(kind, reflector.store);
    }
    this.#controllers.push(controller as unknown as Controller<KubeObject>);
    return controller;
  }

  /** Ports the endpoints listen on, once running (useful with port 0). */
  get listeners(): readonly RunningListener[] {
    return this.#listeners;
  }

  /** Serves, leads (or waits to), reconciles, until `signal` aborts or leadership is lost. */
  async run(signal: AbortSignal): Promise<ManagerOutcome> {
    const log = logger("manager");
    const serving = new AbortController();
    this.#listeners = serveEndpoints(this.#endpoints(), serving.signal);
    let lost = false;
    try {
      if (!this.#options.leaderElection) {
        await this.#lead(signal, signal);
      } else {
        this.#phase = "standby";
        await this.#options.leaderElection.run(signal, async (leading) => {
          await this.#lead(leading, signal);
          if (!signal.aborted) lost = true;
        });
      }
    } finally {
      this.#phase = "stopping";
      serving.abort();
      await Promise.allSettled(this.#listeners.map((l) => l.finished));
    }
    log.info(lost ? "leadership lost; stopped" : "stopped");
    return lost ? "leadership-lost" : "stopped";
  }

  /** Runs caches and controllers until `leading` aborts; `shutdown` tells a shutdown from a lost Lease. */
  async #lead(leading: AbortSignal, shutdown: AbortSignal): Promise<void> {
    this.#phase = "syncing";
    const caches = new AbortController();
    let failure: { error: unknown } | undefined;
    const cachesDone = this.caches.run(caches.signal).catch((error) => {
      failure = { error };
      caches.abort();
    });
    // A shutdown drains; a lost Lease does not wait, since another leader may already act.
    const drainMs = () => shutdown.aborted ? this.#options.drainTimeoutMs ?? 10_000 : 0;
    this.caches.synced().then(() => {
      if (this.#phase === "syncing") this.#phase = "running";
    });
    const running = AbortSignal.any([leading, caches.signal]);
    const releasing = this.#releaseHeap(running);
    try {
      await Promise.all(this.#controllers.map((c) => c.run(running, { drainMs })));
    } finally {
      caches.abort();
      await cachesDone;
      await releasing;
    }
    if (failure) throw failure.error;
  }

  /** Every few seconds, lets {@link HeapRelease} collect what a finished burst left behind. */
  async #releaseHeap(signal: AbortSignal): Promise<void> {
    const release = new HeapRelease({
      heapBytes: () => Deno.memoryUsage().heapTotal,
      idle: () => this.#controllers.every((c) => c.queue.len === 0 && c.inFlight === 0),
    });
    while (!signal.aborted) {
      try {
        await this.#clock.sleep(HEAP_RELEASE_CHECK_MS, signal);
      } catch {
        return;
      }
      release.check();
    }
  }

  #endpoints(): Listener[] {
    const json = (body: unknown, status = 200) =>
      new Response(JSON.stringify(body, null, 2), {
        status,
        headers: { "content-type": "application/json" },
      });
    return [
      {
        address: this.#options.metricsAddress ?? "127.0.0.1:8080",
        routes: protect(this.#options.metricsAuth, {
          "/metrics": () =>
            new Response(this.metrics.render(), { headers: { "content-type": CONTENT_TYPE } }),
          "/debug/cache": (request) => {
            const query = new URL(request.url).searchParams;
            const name = query.get("cache");
            if (name === null) return json(this.debugCache());
            const found = this.caches.entries().find((e) => e.name === name);
            if (!found) {
              const known = this.caches.entries().map((e) => e.name).join(", ");
              return json({ error: `no cache "${name}"; known: ${known}` }, 404);
            }
            try {
              return json(cacheKeysPage(name, found.reflector.store, {
                limit: query.get("limit"),
                continue: query.get("continue"),
              }));
            } catch (error) {
              if (error instanceof RangeError) return json({ error: error.message }, 400);
              throw error;
            }
          },
        }),
      },
      {
        address: this.#options.healthAddress ?? "127.0.0.1:8081",
        routes: {
          "/healthz": () => new Response("ok\n"),
          "/readyz": () => {
            const problems = this.readiness();
            return problems.length
              ? new Response(`not ready:\n${problems.join("\n")}\n`, { status: 503 })
              : new Response("ok\n");
          },
        },
      },
    ];
  }

  /** Why the manager is not ready; empty when it is. */
  readiness(): string[] {
    if (this.#phase === "standby") return [];
    if (this.#phase === "starting" || this.#phase === "stopping") return [this.#phase];
    const staleAfter = this.#options.staleAfterMs ?? 660_000;
    const now = this.#clock.now();
    const problems: string[] = [];
    for (const { resource, reflector } of this.caches.entries()) {
      const f = reflector.freshness;
      if (!f.synced) {
        problems.push(`${resource.plural}: not synced${f.lastError ? `: ${f.lastError}` : ""}`);
      } else if (f.lastActivityAt === undefined || now - f.lastActivityAt > staleAfter) {
        problems.push(`${resource.plural}: no watch activity for ${staleAfter / 1000}s`);
      }
    }
    return problems;
  }

  /**
   * What each cache holds: sizes and freshness, never object contents. The
   * keys of one cache are served page by page at `/debug/cache?cache=<name>`
   * (see lib/runtime/cache_debug.ts).
   */
  debugCache(): Record<string, unknown> {
    const now = this.#clock.now();
    const kinds: Record<string, unknown> = {};
    for (const { name, reflector } of this.caches.entries()) {
      const f = reflector.freshness;
      kinds[name] = {
        ...reflector.store.stats(),
        synced: f.synced,
        resourceVersion: f.resourceVersion,
        restarts: f.restarts,
        lastActivitySecondsAgo: f.lastActivityAt === undefined
          ? null
          : Math.round((now - f.lastActivityAt) / 1000),
      };
    }
    const memory = Deno.memoryUsage();
    return {
      phase: this.#phase,
      memory: {
        rssBytes: memory.rss,
        heapUsedBytes: memory.heapUsed,
        heapTotalBytes: memory.heapTotal,
        externalBytes: memory.external,
      },
      controllers: this.#controllers.map((c) => ({
        name: c.spec.name,
        queueDepth: c.queue.len,
        inFlight: c.inFlight,
      })),
      caches: kinds,
    };
  }
}

/** `routes`, each answered only once `auth` lets its request through. */
function protect(auth: EndpointAuth | undefined, routes: Record<string, Route>) {
  if (!auth) return routes;
  return Object.fromEntries(
    Object.entries(routes).map(([path, route]): [string, Route] => [
      path,
      async (request) => (await auth(request)) ?? await route(request),
    ]),
  );
}
