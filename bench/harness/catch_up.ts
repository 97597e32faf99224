/**
 * The backlog and edited scenarios: an operator spawned to find work that
 * piled up while none ran, and a user who changes one object once it is up.
 * Does the change wait behind the backlog, how long until every object is
 * Ready at the generation in effect, and what does the catching up cost?
 *
 * - **backlog-N**: with no operator running, create N objects (so their
 *   children are absent) and let the creates finish; then spawn the operator.
 * - **edited-N**: start the operator, create N objects and wait until all are
 *   Ready, stop it (SIGTERM), then send the target's update to every object
 *   but the last and let the patches be answered; then spawn it again, so
 *   that N − 1 objects and their children must be written anew.
 *
 * In both, once the spawned operator's `/readyz` has answered 200 and no
 * sooner than 1 s after its spawn, the last object by name gets the target's
 * update, as restart's edit (in edited it is the N-th update, a change that
 * arrives while the operator works through the other N − 1: the target's
 * update is one fixed patch, which sent twice changes nothing the second
 * time). The `catch-up` phase, from the spawn, ends once the edit is Ready
 * at its new generation and every object Ready at its generation, by the
 * target's rule as the scale scenario reads it. A rule without an
 * `observedGenerationPath` cannot see generations: then the phase waits only
 * until every object has been Ready once, and the edit and convergence are
 * not timed. Every figure is of the spawned process over that phase
 * (`catchUpFigures` in measure/figures.ts).
 *
 * @example
 * ```ts
 * import { SCENARIOS } from "./scenarios.ts";
 * SCENARIOS.backlog.window; // { from: "catch-up", to: "catch-up" }
 * SCENARIOS.edited.window; // { from: "catch-up", to: "catch-up", process: 1 }
 * ```
 *
 * @module
 */
import { createObjects, objectNames, updateObjects } from "./load.ts";
import type { OperatorProcess } from "./operator_process.ts";
import type { CatchUpMarks } from "../measure/results.ts";
import {
  createAndWait,
  editOnceUp,
  type ScenarioContext,
  startup,
  stop,
  waitFor,
} from "./scenario_steps.ts";

/** Runs backlog-N: N objects created while no operator runs, then one spawned to find them. */
export async function backlog(c: ScenarioContext): Promise<CatchUpMarks> {
  const names = objectNames(c.size);
  await c.recorder.phase("create", () => createObjects(c.workload, names, paceOf(c)));
  const { operator, marks } = await c.recorder.phase("catch-up", () => catchUp(c, names.at(-1)!));
  await stop(c, operator);
  return marks;
}

/**
 * Runs edited-N: N objects made Ready, the operator stopped, all but the
 * last updated, then the operator spawned again to find them.
 */
export async function edited(c: ScenarioContext): Promise<CatchUpMarks> {
  const first = await startup(c);
  const names = await createAndWait(c);
  await c.recorder.phase("stop", () => stop(c, first));
  await c.recorder.phase("update", () => updateObjects(c.workload, names.slice(0, -1), paceOf(c)));
  const { operator, marks } = await c.recorder.phase("catch-up", () => catchUp(c, names.at(-1)!));
  await stop(c, operator);
  return marks;
}

/**
 * Spawns the operator, edits `edited` once `/readyz` has answered and 1 s
 * has passed, and returns once the edit and every object are Ready at the
 * generation in effect.
 */
async function catchUp(
  c: ScenarioContext,
  edited: string,
): Promise<{ operator: OperatorProcess; marks: CatchUpMarks }> {
  const spawnedMs = c.recorder.now();
  const operator = await c.launch();
  const readyzMs = await editOnceUp(c, operator, { spawnedMs, edited });
  await waitFor(c, "updateReady");
  await waitFor(c, "ready");
  return { operator, marks: { spawnedMs, readyzMs, edited } };
}

function paceOf(c: ScenarioContext): { ratePerSecond: number } {
  return { ratePerSecond: c.settings.ratePerSecond };
}
