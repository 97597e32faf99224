/**
 * The scenarios, each a sequence of named phases over one run:
 *
 * - **idle**: the operator with no objects, for the idle period.
 * - **scale-N**: baseline, create N objects at a fixed rate, wait until all
 *   are Ready, hold, update a tenth and wait until they are Ready at the new
 *   generation, delete all and wait until they are gone.
 * - **budget-N**: scale-N with the cache capped at N/5 objects.
 * - **restart-N**: start the operator, create N objects and wait until all
 *   are Ready (children made, status written), stop it (SIGTERM), then spawn
 *   it again to find all N as its backlog; once its `/readyz` answers 200,
 *   and no sooner than 1 s after the spawn, edit the last object by name.
 *   Measures how long the edit waits behind the backlog, how long until the
 *   restarted operator has reconciled all N and the edit, and what that costs
 *   it in API calls, peak RSS and CPU (`restartFigures` in measure/figures.ts): every
 *   figure is of the restarted process (process 1) over the `restart` phase.
 * - **failover-N**: run two candidates of the target with leader election
 *   (its `leaderElection`), the first holding the Lease, create N objects and
 *   wait until all are Ready, SIGKILL the holder, and about 1 s later edit the
 *   last object by name. Measures how long until the Lease names the second
 *   candidate, how long the edit waits, how long until the successor has
 *   reconciled all N and the edit, and what the successor costs in API calls,
 *   peak RSS and CPU, and held as a standby (`failoverFigures` in
 *   measure/figures.ts). The recorder follows one process at a time: the first from
 *   its spawn until the second's, then the second, the successor (process 1),
 *   to the end; every figure is the successor's.
 * - **backlog-N** and **edited-N** (bench/harness/catch_up.ts): an operator spawned
 *   to find work that piled up while none ran, N objects created (their
 *   children absent) or N objects it had made Ready updated since, and an
 *   edit of the last object once it is up. Measures how long until the edit
 *   and every object are Ready at the generation in effect, and what that
 *   costs in API calls, request latency, CPU and peak RSS
 *   (`catchUpFigures` in measure/figures.ts): every figure is of the spawned process
 *   over the `catch-up` phase.
 * - **admission** (bench/harness/admission.ts): the operator serving its
 *   webhook, sent server-side dry-run creates at `--rate` per second for
 *   `--admission`: the admission latency its clients see, the errors, and
 *   its CPU and RSS over the `admission` phase (`admissionFigures` in
 *   measure/figures.ts). Only targets that serve a webhook run it.
 *
 * @example
 * ```ts
 * import { SCENARIOS } from "./scenarios.ts";
 * SCENARIOS.budget.cacheMaxObjects?.(1000); // 200
 * SCENARIOS.scale.window; // { from: "create", to: "delete" }
 * SCENARIOS.restart.window; // { from: "restart", to: "restart", process: 1 }
 * SCENARIOS.failover.window; // { from: "kill", to: "failover", process: 1 }
 * SCENARIOS.edited.window; // { from: "catch-up", to: "catch-up", process: 1 }
 * ```
 *
 * @module
 */
import { admission } from "./admission.ts";
import { backlog, edited } from "./catch_up.ts";
import { leaseHolder, type LeaseName, untilHolder } from "./lease_holder.ts";
import { scrapeMetrics, sumSeries } from "../measure/metrics_scraper.ts";
import { deleteObjects, updateObjects, updateShare } from "./load.ts";
import type { OperatorProcess } from "./operator_process.ts";
import type {
  AdmissionMarks,
  CatchUpMarks,
  FailoverMarks,
  RestartMarks,
  ScenarioName,
} from "../measure/results.ts";
import {
  createAndWait,
  EDIT_AFTER_MS,
  editOnceUp,
  type Scenario,
  type ScenarioContext,
  sleep,
  sleepUntil,
  startup,
  stop,
  waitFor,
} from "./scenario_steps.ts";
import { leaseOf } from "./target.ts";

/**
 * What `--scenarios` runs when not given. Failover runs two operators per
 * target and waits out a Lease; backlog and edited add two runs per size and
 * target, the longest of them all at 5,000 objects, whose children are all
 * made or written anew: they are asked for by name.
 */
export const DEFAULT_SCENARIOS: readonly ScenarioName[] = ["idle", "scale", "budget", "restart"];

/** Every scenario by name. */
export const SCENARIOS: {
  idle: Scenario;
  scale: Scenario;
  budget: Scenario;
  restart: Scenario<RestartMarks>;
  failover: Scenario<FailoverMarks>;
  backlog: Scenario<CatchUpMarks>;
  edited: Scenario<CatchUpMarks>;
  admission: Scenario<AdmissionMarks>;
} = {
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
    window: { from: "restart", to: "restart", process: 1 },
    run: restartWithBacklog,
  },
  failover: {
    sized: true,
    window: { from: "kill", to: "failover", process: 1 },
    run: failoverAfterKill,
  },
  backlog: {
    sized: true,
    window: { from: "catch-up", to: "catch-up" },
    run: backlog,
  },
  edited: {
    sized: true,
    window: { from: "catch-up", to: "catch-up", process: 1 },
    run: edited,
  },
  admission: {
    sized: false,
    window: { from: "admission", to: "admission" },
    run: admission,
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

async function baselineAndCreate(c: ScenarioContext): Promise<string[]> {
  await c.recorder.phase("baseline", () => sleep(c.settings.baselineMs, c.signal));
  return await createAndWait(c);
}

const RECONCILES = "controller_runtime_reconcile_total";
const RECONCILE_POLL_MS = 100;

async function restartWithBacklog(c: ScenarioContext): Promise<RestartMarks> {
  const first = await startup(c);
  const names = await createAndWait(c);
  await c.recorder.phase("stop", () => stop(c, first));
  const { operator, marks } = await c.recorder.phase("restart", () => restart(c, names.at(-1)!));
  await stop(c, operator);
  return marks;
}

/**
 * Spawns the second process, edits `edited` once `/readyz` has answered and
 * 1 s has passed, and returns when the edit is Ready at its new generation
 * and `/metrics` counts a reconcile per object plus one for the edit.
 */
async function restart(
  c: ScenarioContext,
  edited: string,
): Promise<{ operator: OperatorProcess; marks: RestartMarks }> {
  const spawnedMs = c.recorder.now();
  const operator = await c.launch();
  const polling = new AbortController();
  let editObserved = false;
  const counting = countReconciles(c, operator, {
    sinceMs: spawnedMs,
    goal: c.size + 1,
    editObserved: () => editObserved,
    signal: AbortSignal.any([c.signal, polling.signal]),
  });
  counting.catch(() => {}); // awaited below; a failure of the phase first must not go unhandled
  try {
    const readyzMs = await editOnceUp(c, operator, { spawnedMs, edited });
    await waitFor(c, "updateReady");
    editObserved = true;
    const counted = await counting;
    return { operator, marks: { spawnedMs, readyzMs, edited, ...counted } };
  } finally {
    polling.abort();
    await counting.catch(() => {});
  }
}

/**
 * Polls the operator's `/metrics` every 100 ms for the sum of
 * `controller_runtime_reconcile_total` over its series: milliseconds from
 * `sinceMs` (the spawn, or the kill) until it first exceeds 0 and until it
 * reaches `goal`. Gives up, leaving what it has not seen absent, at
 * `--ready-timeout` after `sinceMs`, when the process exits, or once the edit
 * was observed without any scrape having shown the metric (a target that
 * does not export it).
 */
async function countReconciles(
  c: ScenarioContext,
  operator: OperatorProcess,
  options: { sinceMs: number; goal: number; editObserved: () => boolean; signal: AbortSignal },
): Promise<{ firstReconcileMs?: number; reconciledMs?: number }> {
  const { sinceMs, goal, signal } = options;
  const deadline = sinceMs + c.settings.readyTimeoutMs;
  let firstReconcileMs: number | undefined;
  let exported = false;
  while (c.recorder.now() < deadline && !operator.exited) {
    const observed = options.editObserved();
    const series = await scrapeMetrics(operator.metricsUrl, { timeoutMs: 1_000, signal })
      .catch(() => undefined);
    signal.throwIfAborted();
    const total = series && sumSeries(series, RECONCILES);
    const since = c.recorder.now() - sinceMs;
    if (total !== undefined) exported = true;
    if (total !== undefined && total > 0) firstReconcileMs ??= since;
    if (total !== undefined && total >= goal) return { firstReconcileMs, reconciledMs: since };
    if (observed && !exported) break;
    await sleep(RECONCILE_POLL_MS, signal);
  }
  return firstReconcileMs === undefined ? {} : { firstReconcileMs };
}

/** The identities of the failover scenario's candidates: the first leads, the second stands by. */
const CANDIDATES = ["bench-a", "bench-b"] as const;

async function failoverAfterKill(c: ScenarioContext): Promise<FailoverMarks> {
  const target = c.workload.target;
  const lease = leaseOf(target, c.workload.namespace);
  if (!lease) {
    throw new RangeError(
      `Cannot run failover: the target ${target.name} has no 'leaderElection' in its file`,
    );
  }
  const [killed, successor] = CANDIDATES;
  const first = await c.launch({ candidate: killed });
  const second = await c.recorder.phase("startup", () => twoCandidates(c, first, lease));
  const names = await createAndWait(c);
  const killedMs = await c.recorder.phase("kill", async () => {
    const holder = await leaseHolder(c.workload.client, lease, c.signal);
    if (holder !== killed) {
      throw new Error(
        `Cannot kill the leader: the Lease ${lease.namespace}/${lease.name} names ` +
          `${holder ?? "no holder"}, not ${killed}`,
      );
    }
    const at = c.recorder.now();
    await first.kill();
    return at;
  });
  const edited = names.at(-1)!;
  const marks = await c.recorder.phase(
    "failover",
    () => failover(c, { successor: second, lease, edited, killedMs }),
  );
  await stop(c, second);
  return { killedMs, killed, successor, edited, ...marks };
}

/**
 * Waits until the first candidate answers `/readyz` and holds the Lease,
 * then spawns the second (the recorder follows it from now on) and waits for
 * its `/readyz`; the first must still hold the Lease then.
 *
 * @throws {Error} when the first does not take the Lease within `--ready-timeout`, or lost it.
 */
async function twoCandidates(
  c: ScenarioContext,
  first: OperatorProcess,
  lease: LeaseName,
): Promise<OperatorProcess> {
  const [leader, standby] = CANDIDATES;
  const wait = { timeoutMs: c.settings.readyTimeoutMs, signal: c.signal };
  await first.waitReady(wait);
  const took = await leaseMovesTo(c, lease, leader, {
    sinceMs: c.recorder.now(),
    signal: c.signal,
  });
  if (took === undefined) {
    throw new Error(
      `${leader} did not take the Lease ${lease.namespace}/${lease.name} within ` +
        `${c.settings.readyTimeoutMs} ms:
${await first.tail()}`,
    );
  }
  const second = await c.launch({ candidate: standby });
  await second.waitReady(wait);
  const holder = await leaseHolder(c.workload.client, lease, c.signal);
  if (holder !== leader) {
    throw new Error(
      `the Lease ${lease.namespace}/${lease.name} names ${holder ?? "no holder"} once ` +
        `${standby} answered /readyz, not ${leader}`,
    );
  }
  return second;
}

/**
 * From the kill: edits `edited` about 1 s after it, and returns when the
 * edit is Ready at its new generation and the successor's `/metrics` counts
 * a reconcile per object plus one for the edit, with when the Lease named
 * the successor.
 */
async function failover(
  c: ScenarioContext,
  options: { successor: OperatorProcess; lease: LeaseName; edited: string; killedMs: number },
): Promise<Pick<FailoverMarks, "takeoverMs" | "firstReconcileMs" | "reconciledMs">> {
  const { successor, lease, edited, killedMs } = options;
  const polling = new AbortController();
  const signal = AbortSignal.any([c.signal, polling.signal]);
  let editObserved = false;
  const counting = countReconciles(c, successor, {
    sinceMs: killedMs,
    goal: c.size + 1,
    editObserved: () => editObserved,
    signal,
  });
  const takeover = leaseMovesTo(c, lease, CANDIDATES[1], { sinceMs: killedMs, signal });
  // Both are awaited below; a failure of the phase first must not go unhandled.
  counting.catch(() => {});
  takeover.catch(() => {});
  try {
    await sleepUntil(c.recorder, killedMs + EDIT_AFTER_MS, c.signal);
    await updateObjects(c.workload, [edited], { ratePerSecond: c.settings.ratePerSecond });
    await waitFor(c, "updateReady");
    editObserved = true;
    const counted = await counting;
    // The edit was reconciled, so the successor leads: the next read of the Lease says so.
    const takeoverMs = await takeover;
    return { ...counted, ...(takeoverMs !== undefined && { takeoverMs }) };
  } finally {
    polling.abort();
    await Promise.allSettled([counting, takeover]);
  }
}

/** Reads the Lease every 100 ms from `sinceMs` until it names `identity`, for `--ready-timeout`. */
function leaseMovesTo(
  c: ScenarioContext,
  lease: LeaseName,
  identity: string,
  options: { sinceMs: number; signal: AbortSignal },
): Promise<number | undefined> {
  return untilHolder(c.workload.client, lease, identity, {
    ...options,
    now: () => c.recorder.now(),
    timeoutMs: c.settings.readyTimeoutMs,
  });
}
