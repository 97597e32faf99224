/**
 * The scenarios, each a sequence of named phases over one run:
 *
 * - **idle**: the operator with no objects, for the idle period.
 * - **scale-N**: baseline, create N objects at a fixed rate, wait until all
 *   are Ready, hold, update a tenth and wait until they are Ready at the new
 *   generation, delete all and wait until they are gone.
 * - **budget-N**: scale-N with the cache capped at N/5 objects.
 * - **restart-N**: N objects created while the operator is not running, then
 *   the operator started; once its `/readyz` answers 200, and no sooner than
 *   1 s after the spawn, the last object by name is edited. Measures how long
 *   the edit waits behind the backlog of N, how long until all N converge,
 *   and the API calls and peak RSS that costs (`restartFigures` in figures.ts).
 *
 * @example
 * ```ts
 * import { SCENARIOS } from "./scenarios.ts";
 * SCENARIOS.budget.cacheMaxObjects?.(1000); // 200
 * SCENARIOS.scale.window; // { from: "create", to: "delete" }
 * SCENARIOS.restart.window; // { from: "startup", to: "converge" }
 * ```
 *
 * @module
 */
import type { MeasuredWindow } from "./figures.ts";
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
import type { RestartMarks } from "./results.ts";

/** The scenarios there are. */
export const SCENARIO_NAMES = ["idle", "scale", "budget", "restart"] as const;
export type ScenarioName = typeof SCENARIO_NAMES[number];

/** Durations and limits the scenarios run with. */
export interface ScenarioSettings {
  idleMs: number;
  /** Quiet time after startup and before the load, for the idle RSS of sized scenarios. */
  baselineMs: number;
  holdMs: number;
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
  /** Runs the phases; the restart scenario returns what it marked on the way. */
  run(context: ScenarioContext): Promise<RestartMarks | undefined>;
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
    window: { from: "startup", to: "converge" },
    run: restartWithObjectsPresent,
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

/**
 * The edit waits for `/readyz` as well as this long after the spawn: an edit
 * the operator's first list already holds would be one more of the N, not a
 * change that arrives while the operator works through them.
 */
const EDIT_AFTER_MS = 1_000;

async function restartWithObjectsPresent(c: ScenarioContext): Promise<RestartMarks> {
  const names = objectNames(c.size);
  const edited = names.at(-1)!;
  const pace = { ratePerSecond: c.settings.ratePerSecond };
  await c.recorder.phase("create", () => createObjects(c.workload, names, pace));
  const { operator, spawnedMs, readyzMs } = await c.recorder.phase("startup", async () => {
    const spawnedMs = c.recorder.now();
    const operator = await c.launch();
    await operator.waitReady({ timeoutMs: c.settings.readyTimeoutMs, signal: c.signal });
    return { operator, spawnedMs, readyzMs: c.recorder.now() - spawnedMs };
  });
  await c.recorder.phase("converge", async () => {
    await sleep(Math.max(0, spawnedMs + EDIT_AFTER_MS - c.recorder.now()), c.signal);
    await updateObjects(c.workload, [edited], pace);
    await waitFor(c, "ready");
    await waitFor(c, "updateReady");
  });
  await stop(c, operator);
  return { spawnedMs, readyzMs, edited };
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
