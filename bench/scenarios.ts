/**
 * The scenarios, each a sequence of named phases over one run:
 *
 * - **idle**: the operator with no objects, for the idle period.
 * - **scale-N**: baseline, create N objects at a fixed rate, wait until all
 *   are Ready, hold, update a tenth and wait until they are Ready at the new
 *   generation, delete all and wait until they are gone.
 * - **budget-N**: scale-N with the cache capped at N/5 objects.
 * - **restart-N**: N objects Ready, then stop the operator (SIGTERM) and
 *   start it again: time to `/readyz`, to the first reconcile, and the
 *   reconciles a restart costs.
 *
 * @example
 * ```ts
 * import { SCENARIOS } from "./scenarios.ts";
 * SCENARIOS.budget.cacheMaxObjects?.(1000); // 200
 * SCENARIOS.scale.window; // { from: "create", to: "delete" }
 * ```
 *
 * @module
 */
import type { MeasuredWindow } from "./figures.ts";
import { scrapeMetrics, sumSeries } from "./metrics_scraper.ts";
import {
  createObjects,
  deleteObjects,
  objectNames,
  updateObjects,
  updateShare,
  type Workload,
} from "./load.ts";
import type { OperatorProcess } from "./operator_process.ts";
import type { ReadinessTracker } from "./readiness_tracker.ts";
import type { RunRecorder } from "./recorder.ts";
import type { Restart } from "./results.ts";

/** The scenarios there are. */
export const SCENARIO_NAMES = ["idle", "scale", "budget", "restart"] as const;
export type ScenarioName = typeof SCENARIO_NAMES[number];

/** Durations and limits the scenarios run with. */
export interface ScenarioSettings {
  idleMs: number;
  /** Quiet time after startup and before the load, for the idle RSS of sized scenarios. */
  baselineMs: number;
  holdMs: number;
  /** How long the restarted operator runs before its reconciles are counted. */
  settleMs: number;
  readyTimeoutMs: number;
  ratePerSecond: number;
}

/** What a scenario drives; the runner builds it and cleans up after it. */
export interface ScenarioContext {
  size: number;
  settings: ScenarioSettings;
  recorder: RunRecorder;
  tracker: ReadinessTracker;
  workload: Workload;
  /** Spawns the operator with the run's variant and attaches the recorder; does not wait. */
  launch(): Promise<OperatorProcess>;
  signal: AbortSignal;
}

/** One scenario. */
export interface Scenario {
  /** Whether it runs once per size (else once, with no objects). */
  sized: boolean;
  /** The cache budget it gives the operator for `size` objects. */
  cacheMaxObjects?: (size: number) => number;
  /** The phases whose span the CPU and counter figures cover. */
  window: MeasuredWindow;
  /** Runs the phases; the restart scenario returns its restart record. */
  run(context: ScenarioContext): Promise<Restart | undefined>;
}

/** Every scenario by name. */
export const SCENARIOS: Record<ScenarioName, Scenario> = {
  idle: {
    sized: false,
    window: { from: "idle", to: "idle" },
    async run(c) {
      const operator = await startup(c);
      await c.recorder.phase("idle", () => sleep(c.settings.idleMs, c.signal));
      await stop(c, operator);
      return undefined;
    },
  },
  scale: {
    sized: true,
    window: { from: "create", to: "delete" },
    run: scaleUpdateDelete,
  },
  budget: {
    sized: true,
    cacheMaxObjects: (size) => Math.max(1, Math.floor(size / 5)),
    window: { from: "create", to: "delete" },
    run: scaleUpdateDelete,
  },
  restart: {
    sized: true,
    window: { from: "create", to: "hold" },
    async run(c) {
      const operator = await startup(c);
      await baselineAndCreate(c);
      await c.recorder.phase("hold", () => sleep(c.settings.holdMs, c.signal));
      return await restart(c, operator);
    },
  },
};

async function scaleUpdateDelete(c: ScenarioContext): Promise<undefined> {
  const operator = await startup(c);
  const names = await baselineAndCreate(c);
  const pace = { ratePerSecond: c.settings.ratePerSecond };
  await c.recorder.phase("hold", () => sleep(c.settings.holdMs, c.signal));
  await c.recorder.phase("update", async () => {
    await updateObjects(c.workload, updateShare(names), pace);
    await waitFor(c, "updateReady");
  });
  await c.recorder.phase("delete", async () => {
    await deleteObjects(c.workload, names, pace);
    await waitFor(c, "gone");
  });
  await stop(c, operator);
  return undefined;
}

async function startup(c: ScenarioContext): Promise<OperatorProcess> {
  const operator = await c.launch();
  await c.recorder.phase(
    "startup",
    () => operator.waitReady({ timeoutMs: c.settings.readyTimeoutMs, signal: c.signal }),
  );
  return operator;
}

async function baselineAndCreate(c: ScenarioContext): Promise<string[]> {
  const names = objectNames(c.size);
  await c.recorder.phase("baseline", () => sleep(c.settings.baselineMs, c.signal));
  await c.recorder.phase(
    "create",
    () => createObjects(c.workload, names, { ratePerSecond: c.settings.ratePerSecond }),
  );
  await c.recorder.phase("ready", () => waitFor(c, "ready"));
  return names;
}

async function restart(c: ScenarioContext, old: OperatorProcess): Promise<Restart> {
  const stopped = await c.recorder.phase("stop", () => stop(c, old));
  const timings = await c.recorder.phase("restart", async () => {
    const spawned = performance.now();
    const operator = await c.launch();
    let readyzMs: number | undefined;
    const ready = operator.waitReady({ timeoutMs: c.settings.readyTimeoutMs, signal: c.signal })
      .then(() => (readyzMs = performance.now() - spawned));
    const firstReconcileMs = await firstReconcile(c, operator, spawned, () => readyzMs);
    await ready;
    return { readyzMs, firstReconcileMs };
  });
  await c.recorder.phase("settle", () => sleep(c.settings.settleMs, c.signal));
  const last = c.recorder.scrapes.at(-1);
  const reconcilesAfter = last && last.process > 0
    ? sumSeries(last.series, "controller_runtime_reconcile_total")
    : undefined;
  return {
    stopMs: stopped.ms,
    exit: stopped.exit,
    ...(timings.readyzMs !== undefined && { readyzMs: timings.readyzMs }),
    ...(timings.firstReconcileMs !== undefined && { firstReconcileMs: timings.firstReconcileMs }),
    ...(reconcilesAfter !== undefined && { reconcilesAfter }),
    settleMs: c.settings.settleMs,
  };
}

/**
 * Milliseconds from `spawned` until `/metrics` first counts a reconcile,
 * polled every 100 ms; gives up a settle period after `/readyz` turned 200
 * (an operator may rightly skip unchanged objects) or when the process exits.
 */
async function firstReconcile(
  c: ScenarioContext,
  operator: OperatorProcess,
  spawned: number,
  readyzMs: () => number | undefined,
): Promise<number | undefined> {
  const deadline = spawned + c.settings.readyTimeoutMs;
  while (performance.now() < deadline && !operator.exited) {
    const ready = readyzMs();
    if (ready !== undefined && performance.now() - spawned > ready + c.settings.settleMs) break;
    const series = await scrapeMetrics(operator.metricsUrl, { timeoutMs: 1_000 }).catch(() => []);
    if ((sumSeries(series, "controller_runtime_reconcile_total") ?? 0) > 0) {
      return performance.now() - spawned;
    }
    await sleep(100, c.signal);
  }
  return undefined;
}

async function stop(c: ScenarioContext, operator: OperatorProcess) {
  c.recorder.sample();
  await c.recorder.detach();
  return await operator.stop();
}

function waitFor(c: ScenarioContext, milestone: "ready" | "updateReady" | "gone"): Promise<void> {
  return c.tracker.waitAll(milestone, {
    timeoutMs: c.settings.readyTimeoutMs,
    signal: c.signal,
    onTick: () => c.recorder.status(),
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal.removeEventListener("abort", abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal.reason);
    }
    signal.addEventListener("abort", abort, { once: true });
  });
}
