/**
 * What a scenario is ({@link Scenario}, and the {@link ScenarioContext} the
 * runner gives it) and the steps the scenarios are made of: start the
 * operator and wait for its `/readyz`, create the objects and wait until
 * they are Ready, edit one once a newly spawned operator is up, stop the
 * operator, wait for a milestone of every object. Each step takes the run's
 * context, and gives up at `--ready-timeout` or when the run is interrupted.
 * The scenarios themselves are in scenarios.ts and catch_up.ts, above this.
 *
 * @example
 * ```ts ignore
 * import { createAndWait, startup, stop } from "./scenario_steps.ts";
 * const operator = await startup(context);
 * const names = await createAndWait(context);
 * await stop(context, operator);
 * ```
 *
 * @module
 */
import type { MeasuredWindow } from "../measure/figures.ts";
import type { ReadinessTracker } from "../measure/readiness_tracker.ts";
import type { RunRecorder } from "../measure/recorder.ts";
import { createObjects, objectNames, updateObjects, type Workload } from "./load.ts";
import type { OperatorProcess } from "./operator_process.ts";

/** Durations and limits the scenarios run with. */
export interface ScenarioSettings {
  idleMs: number;
  /** Quiet time after startup and before the load, for the idle RSS of sized scenarios. */
  baselineMs: number;
  holdMs: number;
  readyTimeoutMs: number;
  ratePerSecond: number;
  /** How long the admission scenario sends its requests. */
  admissionMs: number;
}

/** What a scenario drives; the runner builds it and cleans up after it. */
export interface ScenarioContext {
  size: number;
  settings: ScenarioSettings;
  recorder: RunRecorder;
  tracker: ReadinessTracker;
  workload: Workload;
  /**
   * Spawns the operator with the run's variant and attaches the recorder
   * (which leaves the process it followed); does not wait. With a
   * `candidate`, the operator runs with the target's `leaderElection.args`
   * under that identity.
   */
  launch(options?: { candidate?: string }): Promise<OperatorProcess>;
  signal: AbortSignal;
}

/** One scenario; `Marks` are what it measures as it runs, beside the recorder's samples. */
export interface Scenario<Marks = undefined> {
  /** Whether it runs once per size (else once, with no objects). */
  sized: boolean;
  /** The cache budget it gives the operator for `size` objects. */
  cacheMaxObjects?: (size: number) => number;
  /** The phases whose span the CPU and counter figures cover. */
  window: MeasuredWindow;
  /** Runs the phases; the restart and failover scenarios return what they marked on the way. */
  run(context: ScenarioContext): Promise<Marks | undefined>;
}

/**
 * The edit waits for `/readyz` as well as this long after the spawn: an edit
 * the spawned operator's first list already holds would be one more of the
 * backlog, not a change that arrives while the operator works through it.
 */
export const EDIT_AFTER_MS = 1_000;

/** Spawns the operator and waits, as the phase `startup`, until its `/readyz` answers 200. */
export async function startup(c: ScenarioContext): Promise<OperatorProcess> {
  const operator = await c.launch();
  await c.recorder.phase(
    "startup",
    () => operator.waitReady({ timeoutMs: c.settings.readyTimeoutMs, signal: c.signal }),
  );
  return operator;
}

/**
 * Creates the run's N objects at `--rate` (phase `create`), then waits until
 * every one is Ready (phase `ready`); returns their names in creation order.
 */
export async function createAndWait(c: ScenarioContext): Promise<string[]> {
  const names = objectNames(c.size);
  await c.recorder.phase(
    "create",
    () => createObjects(c.workload, names, { ratePerSecond: c.settings.ratePerSecond }),
  );
  await c.recorder.phase("ready", () => waitFor(c, "ready"));
  return names;
}

/**
 * Waits until the operator spawned at `spawnedMs` answers `/readyz` and
 * {@link EDIT_AFTER_MS} has passed since the spawn, then sends the target's
 * update to `edited`.
 *
 * @returns milliseconds from the spawn until `/readyz` answered 200.
 */
export async function editOnceUp(
  c: ScenarioContext,
  operator: OperatorProcess,
  { spawnedMs, edited }: { spawnedMs: number; edited: string },
): Promise<number> {
  await operator.waitReady({ timeoutMs: c.settings.readyTimeoutMs, signal: c.signal });
  const readyzMs = c.recorder.now() - spawnedMs;
  await sleepUntil(c.recorder, spawnedMs + EDIT_AFTER_MS, c.signal);
  await updateObjects(c.workload, [edited], { ratePerSecond: c.settings.ratePerSecond });
  return readyzMs;
}

/** Takes a last sample, stops following the operator and stops it (SIGTERM). */
export async function stop(c: ScenarioContext, operator: OperatorProcess) {
  c.recorder.sample();
  await c.recorder.detach();
  return await operator.stop();
}

/**
 * Resolves once every object due for `milestone` has reached it.
 *
 * @throws {Error} after `--ready-timeout`, saying how many are missing.
 */
export function waitFor(
  c: ScenarioContext,
  milestone: "ready" | "updateReady" | "gone",
): Promise<void> {
  return c.tracker.waitAll(milestone, {
    timeoutMs: c.settings.readyTimeoutMs,
    signal: c.signal,
    onTick: () => c.recorder.status(),
  });
}

/**
 * Resolves once `clock.now()` has reached `dueMs`, or rejects with the
 * signal's reason when it aborts first. A `setTimeout` can fire a fraction
 * of a millisecond before `performance.now()` reaches its time: it waits
 * again until the clock says so.
 */
export async function sleepUntil(
  clock: { now(): number },
  dueMs: number,
  signal: AbortSignal,
): Promise<void> {
  for (let left = dueMs - clock.now(); left > 0; left = dueMs - clock.now()) {
    await sleep(Math.ceil(left), signal);
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
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
