/**
 * What a manager runs, in the order it starts (runnable.ts). On every
 * candidate: the endpoints, the manager's own client, the Events, the CRD
 * install and a warm standby's caches. While leading: a cold standby's
 * caches, the memory limit, the heap release and the controllers. Each
 * stops in reverse: the controllers drain first, the Events are flushed
 * once nothing can publish any more, and the endpoints answer until the
 * very end. A server the API server calls, whoever leads (a webhook
 * server), is one more runnable on every candidate, after the Events and
 * before the CRD install, so that it answers before a CRD names it.
 *
 * @module
 */
import { type Clock, type Deadline, deadline } from "../../async/clock.ts";
import { installCrds } from "../crds/install.ts";
import type { EventRecorder } from "../events/events.ts";
import { HeapRelease } from "../scheduling/heap_release.ts";
import type { ManagerParts, WebhookPlan } from "./_parts.ts";
import { type Listener, type RunningListener, serveEndpoints } from "./http.ts";
import { aborted, type Runnable, runnable } from "./runnable.ts";

/** What a run of the manager adds to its parts. */
export interface RunParts {
  /** What the endpoints serve. */
  routes: Listener[];
  /** The manager's shutdown: the drain deadline counts from it. */
  shutdown: AbortSignal;
  /** Hears the ports the endpoints listen on. */
  onListening(listeners: RunningListener[]): void;
  /**
   * Hears that every controller has returned: with none, at once (unless
   * webhooks are served, then once stopped). The lead is then over.
   */
  onControllersEnded(): void;
}

/** The runnables of a manager made of `parts`, in the order they start. */
export function managerRunnables(parts: ManagerParts, run: RunParts): Runnable[] {
  const { options, clock, controllers, memory } = parts;
  const { shutdown } = run;
  const drainMs = options.drainTimeoutMs ?? 10_000;
  return [
    runnable("endpoints", false, (signal) => {
      const listeners = serveEndpoints(run.routes, signal);
      run.onListening(listeners);
      return Promise.allSettled(listeners.map((l) => l.finished));
    }),
    oneShot("client", async () => await parts.ownClient?.connect()),
    eventsRunnable(parts.events, shutdown, clock, drainMs),
    ...(parts.webhooks?.added.length ? [webhooksRunnable(parts.webhooks, parts)] : []),
    oneShot("crds", async (signal) => {
      const serving = parts.webhooks?.serving;
      const crds = (options.crds ?? []).map((crd) => serving?.withConversion(crd) ?? crd);
      if (crds.length === 0) return;
      const fieldManager = options.reportingController ?? "kinglet";
      await installCrds(parts.client, crds, { fieldManager, clock, signal });
    }),
    runnable("caches", options.standby !== "warm", (signal) => parts.caches.run(signal)),
    ...(memory ? [runnable("memory limit", true, (signal) => memory.run(signal))] : []),
    runnable("heap release", true, (signal) =>
      new HeapRelease({
        heapBytes: () => Deno.memoryUsage().heapTotal,
        idle: () => controllers.every((c) => c.queue.len === 0 && c.inFlight === 0),
        clock,
      }).run(signal)),
    runnable("controllers", true, async (signal) => {
      // A shutdown drains; a lost Lease does not wait, since another leader may already act.
      const drain = () => shutdown.aborted ? drainMs : 0;
      await Promise.all(controllers.map((c) => c.run(signal, { drainMs: drain })));
      // A manager that only serves webhooks serves until it is stopped.
      if (controllers.length === 0 && parts.webhooks?.added.length) await aborted(signal);
      run.onControllersEnded();
    }),
  ];
}

/**
 * The webhook server on every candidate, started once it listens and its
 * CA bundle was injected, so that a CRD installed next can name it. Loaded
 * here, so that an operator without webhooks never loads the server.
 */
function webhooksRunnable(plan: WebhookPlan, parts: ManagerParts): Runnable {
  return {
    name: "webhooks",
    leaderElected: false,
    start: async (signal) => {
      const { WebhookServing } = await import("../webhook/serving.ts");
      const { client, metrics, options } = parts;
      const serving = plan.serving = new WebhookServing(plan.options, {
        client,
        metrics,
        ...(options.clock && { clock: options.clock }),
      });
      for (const webhook of plan.added) serving.add(webhook);
      const running = serving.run(signal);
      await Promise.race([serving.ready, running]);
      return { stopped: running };
    },
  };
}

/** A runnable on every candidate that is done once `step` is; nothing runs after it. */
function oneShot(name: string, step: (signal: AbortSignal) => Promise<void>): Runnable {
  return {
    name,
    leaderElected: false,
    start: async (signal) => {
      await step(signal);
      return { stopped: Promise.resolve() };
    },
  };
}

/**
 * The Events of every reconcile, flushed once stopped within what is left
 * of the drain deadline, which counts from the shutdown.
 */
function eventsRunnable(
  events: EventRecorder,
  shutdown: AbortSignal,
  clock: Clock,
  drainMs: number,
): Runnable {
  return runnable("events", false, async (signal) => {
    let flushBy: Deadline | undefined;
    const onShutdown = () => flushBy = deadline(clock, drainMs);
    shutdown.addEventListener("abort", onShutdown, { once: true });
    await aborted(signal);
    shutdown.removeEventListener("abort", onShutdown);
    flushBy ??= deadline(clock, drainMs);
    await events.flush(flushBy.signal).catch(() => {});
    flushBy[Symbol.dispose]();
  });
}
