import assert from "node:assert/strict";
import type { KubeClient } from "../../lib/kube/client.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";
import { writeCharts } from "../../bench/charts.ts";
import { computeFigures, restartFigures } from "../../bench/figures.ts";
import type { OperatorProcess } from "../../bench/operator_process.ts";
import { parseOptions } from "../../bench/options.ts";
import { Progress } from "../../bench/progress.ts";
import { ReadinessTracker } from "../../bench/readiness_tracker.ts";
import { RunRecorder } from "../../bench/recorder.ts";
import { renderReport, scenarioTable } from "../../bench/report.ts";
import {
  type ObjectTiming,
  parseResults,
  type Restart,
  type Results,
  RESULTS_FORMAT,
  type Run,
  type Scrape,
  type Series,
} from "../../bench/results.ts";
import { planRuns } from "../../bench/runner.ts";
import { SCENARIOS } from "../../bench/scenarios.ts";
import { seriesOf } from "../../bench/series.ts";
import { loadTarget, type Target } from "../../bench/target.ts";

const MIB = 2 ** 20;
const NAMESPACE = "bench";

Deno.test("restart edits the last object once /readyz answered and 1 s passed, and waits until all converged", async () => {
  const { marks, phases, objects, touchedBeforeSpawn } = await driveRestart({
    size: 5,
    readyzAfterMs: 200,
  });
  assert.deepEqual(phases, ["create", "startup", "converge"]);
  assert.equal(marks.edited, "app-00005");
  assert.equal(touchedBeforeSpawn, 0, "no object was reconciled before the operator started");
  const figures = restartFigures(objects, marks);
  // A timer and performance.now() may disagree by a fraction of a millisecond.
  assert.ok(figures.readyzMs >= 199, `readyz ${figures.readyzMs}`);
  assert.ok(figures.editSentMs! >= 1_000, `edit sent ${figures.editSentMs} ms after the spawn`);
  assert.ok(figures.editObservedMs! > 0);
  assert.ok(figures.convergedMs! >= figures.editSentMs! + figures.editObservedMs! - 1e-9);
  assert.ok(objects.every((o) => o.readyMs! > marks.spawnedMs), "every object Ready after spawn");
  assert.deepEqual(objects.filter((o) => o.updatedMs !== undefined).map((o) => o.name), [
    "app-00005",
  ]);
});

Deno.test("restart sends the edit only once /readyz answered when that takes longer than 1 s", async () => {
  const { marks, objects } = await driveRestart({ size: 3, readyzAfterMs: 1_300 });
  const figures = restartFigures(objects, marks);
  assert.ok(figures.readyzMs >= 1_299, `readyz ${figures.readyzMs}`);
  assert.ok(figures.editSentMs! >= figures.readyzMs, JSON.stringify(figures));
});

Deno.test("restart figures time the edit from its request and convergence from the spawn", () => {
  const objects: ObjectTiming[] = [
    { name: "app-00001", createdMs: 0, readyMs: 1_200 },
    { name: "app-00002", createdMs: 100, readyMs: 1_500 },
    { name: "app-00003", createdMs: 200, readyMs: 1_300, updatedMs: 1_400, updateReadyMs: 2_600 },
  ];
  const marks = { spawnedMs: 400, readyzMs: 300, edited: "app-00003" };
  assert.deepEqual(restartFigures(objects, marks), {
    spawnedMs: 400,
    readyzMs: 300,
    edited: "app-00003",
    firstReadyMs: 800,
    editSentMs: 1_000,
    editObservedMs: 1_200,
    convergedMs: 2_200,
  });
});

Deno.test("restart figures leave all converged out while an object is not Ready at its generation", () => {
  const marks = { spawnedMs: 0, readyzMs: 300, edited: "app-00002" };
  const notReady = restartFigures([
    { name: "app-00001", createdMs: 0 },
    { name: "app-00002", createdMs: 0, readyMs: 900, updatedMs: 1_000, updateReadyMs: 1_100 },
  ], marks);
  assert.equal(notReady.editObservedMs, 100);
  assert.equal(notReady.convergedMs, undefined);
  // A rule without observedGenerationPath never sees the new generation: Ready at the old is not converged.
  const unseen = restartFigures([
    { name: "app-00001", createdMs: 0, readyMs: 500 },
    { name: "app-00002", createdMs: 0, readyMs: 900, updatedMs: 1_000 },
  ], marks);
  assert.equal(unseen.editObservedMs, undefined);
  assert.equal(unseen.convergedMs, undefined);
  assert.equal(unseen.editSentMs, 1_000);
});

Deno.test("a restart run's API calls, reconciles and CPU are the operator's totals from its spawn", () => {
  const figures = computeFigures(restartRun(), SCENARIOS.restart.window, {
    spawnedMs: 400,
    readyzMs: 300,
    edited: "app-00003",
  });
  assert.equal(figures.apiCalls, 150);
  assert.equal(figures.apiCallsPerObject, 50);
  assert.equal(figures.reconciles, 25);
  assert.equal(figures.cpuSeconds, 1.8);
  assert.equal(figures.rssPeakBytes, 62 * MIB);
  assert.equal(figures.createReady, undefined, "objects created before the operator have none");
  assert.equal(figures.rssIdleBytes, undefined);
  assert.equal(figures.restart?.convergedMs, 2_200);
  assert.equal(figures.restart?.editObservedMs, 1_200);
});

Deno.test("counters of an operator running before the window are the window's growth", () => {
  const run: Omit<Run, "figures"> = {
    ...restartRun(),
    scenario: "scale",
    group: "scale-3",
    phases: [
      { name: "startup", startMs: 0, endMs: 300 },
      { name: "create", startMs: 900, endMs: 1_000 },
      { name: "delete", startMs: 2_000, endMs: 3_000 },
    ],
    samples: [sample(10, 30, 0.2), sample(900, 50, 0.9), sample(3_000, 62, 1.8)],
    objects: [{ name: "app-00001", createdMs: 950, readyMs: 1_450 }],
  };
  const figures = computeFigures(run, SCENARIOS.scale.window);
  assert.equal(figures.apiCalls, 100);
  assert.equal(figures.reconciles, 20);
  assert.ok(Math.abs(figures.cpuSeconds! - 0.9) < 1e-9, `${figures.cpuSeconds}`);
  assert.deepEqual(figures.createReady, { count: 1, p50: 500, p90: 500, p99: 500, max: 500 });
});

Deno.test("a side-by-side restart table shows edit observed, all converged, API calls and peak RSS per target", () => {
  const results = resultsOf([
    restartResult("kinglet", { editObservedMs: 900, convergedMs: 4_000 }, 3_000, 80),
    restartResult("controller-runtime", { editObservedMs: 450, convergedMs: 8_000 }, 6_000, 40),
    restartResult("kube-rs", { editObservedMs: 1_800, convergedMs: 2_000 }, undefined, 20),
  ]);
  const rows = cells(scenarioTable(results.runs, seriesOf(results)));
  assert.deepEqual(rows[0]!.slice(0, 5), [
    "target",
    "edit observed (ms)",
    "all converged (ms)",
    "API calls",
    "RSS peak (MiB)",
  ]);
  assert.deepEqual(rows.slice(2).map((r) => r.slice(0, 5)), [
    ["kinglet", "900", "4,000", "3,000", "80.0"],
    ["controller-runtime", "450 (0.50×)", "8,000 (2.00×)", "6,000 (2.00×)", "40.0 (0.50×)"],
    ["kube-rs", "1,800 (2.00×)", "2,000 (0.50×)", "–", "20.0 (0.25×)"],
  ]);
  const report = renderReport(parseResults(JSON.stringify(results)), []);
  assert.match(report, /^## restart-1000$/m);
  assert.match(report, /^1,000 objects existed before the operator started; the last by name/m);
  assert.match(report, /^- controller-runtime: `app-01000` edited 1,050 ms after the spawn\.$/m);
});

Deno.test("results with a restart record from the stop-and-start scenario still load, without it", () => {
  const old = restartResult("kinglet", {}, 3_000, 80);
  const results = resultsOf([old]);
  const raw = JSON.parse(JSON.stringify(results));
  raw.runs[0].figures.restart = {
    stopMs: 20.6,
    exit: "code 0",
    readyzMs: 5_278,
    firstReconcileMs: 5_418,
    reconcilesAfter: 1_460,
    settleMs: 15_000,
  };
  const parsed = parseResults(JSON.stringify(raw));
  assert.equal(parsed.runs[0]!.figures.restart, undefined);
  assert.equal(parsed.runs[0]!.figures.apiCalls, 3_000);
  raw.runs[0].figures.restart = { spawnedMs: 1, readyzMs: 2 };
  assert.throws(() => parseResults(JSON.stringify(raw)), /figures\.restart\.edited/);
});

Deno.test("a restart group has an RSS chart but no create→Ready chart", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-bench-restart-" });
  try {
    const run = restartRun();
    const figures = computeFigures(run, SCENARIOS.restart.window, {
      spawnedMs: 400,
      readyzMs: 300,
      edited: "app-00003",
    });
    const results = resultsOf([{ ...run, target: "kinglet", figures }]);
    const charts = await writeCharts(results, dir);
    assert.deepEqual(charts.map((c) => c.file), ["rss-restart-3.svg"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the Deno floor is left out of restart beside kinglet and refused alone", async () => {
  const [kinglet, floor] = await Promise.all([loadTarget("kinglet"), loadTarget("deno-floor")]);
  const options = parseOptions(["--scenarios", "restart", "--sizes", "20"]);
  assert.deepEqual(
    planRuns(options, [kinglet, floor]).map((p) => [p.group, p.target.name]),
    [["restart-20", "kinglet"]],
  );
  assert.throws(
    () => planRuns(options, [floor]),
    (e: unknown) =>
      e instanceof RangeError &&
      /Cannot run 'restart': no target runs it \(deno-floor runs idle\)/.test(e.message),
  );
});

/**
 * Runs the restart scenario against an in-memory API server with a stand-in
 * operator: once spawned it answers `/readyz` after `readyzAfterMs` and marks
 * one object per 20 ms Ready at its generation, as a controller works through
 * a backlog.
 */
async function driveRestart(options: { size: number; readyzAfterMs: number }) {
  const target = await loadTarget("kinglet");
  const cluster = new MemoryCluster({ namespaces: [NAMESPACE] });
  const client = cluster as unknown as KubeClient;
  const recorder = new RunRecorder({
    label: "restart",
    progress: new Progress({ tty: false, write: () => {} }),
    scrapeIntervalMs: 60_000,
  });
  const tracker = new ReadinessTracker({
    client,
    resource: target.resource,
    namespace: NAMESPACE,
    rule: target.ready,
    now: () => recorder.now(),
  });
  const stop = new AbortController();
  const watching = tracker.run(stop.signal);
  const operator = new StandIn(cluster, target, options.readyzAfterMs);
  let touchedBeforeSpawn = 0;
  try {
    const marks = await SCENARIOS.restart.run({
      size: options.size,
      settings: {
        idleMs: 0,
        baselineMs: 0,
        holdMs: 0,
        readyTimeoutMs: 10_000,
        ratePerSecond: 1_000,
      },
      recorder,
      tracker,
      workload: { client, target, namespace: NAMESPACE, tracker, replicas: 0 },
      launch: () => {
        touchedBeforeSpawn = cluster.objects(target.resource).filter((o) => "status" in o).length;
        operator.spawn();
        return Promise.resolve(operator as unknown as OperatorProcess);
      },
      signal: stop.signal,
    });
    assert.ok(marks, "the restart scenario returns its marks");
    return {
      marks,
      phases: recorder.phases.map((p) => p.name),
      objects: tracker.timings(),
      touchedBeforeSpawn,
    };
  } finally {
    await operator.stop();
    stop.abort();
    await watching;
  }
}

/** What the scenario uses of an {@link OperatorProcess}, played by a loop over the cluster. */
class StandIn {
  readonly #cluster: MemoryCluster;
  readonly #target: Target;
  readonly #readyzAfterMs: number;
  #spawned = 0;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(cluster: MemoryCluster, target: Target, readyzAfterMs: number) {
    this.#cluster = cluster;
    this.#target = target;
    this.#readyzAfterMs = readyzAfterMs;
  }

  get exited(): boolean {
    return false;
  }

  spawn(): void {
    this.#spawned = performance.now();
    this.#timer = setInterval(() => this.#reconcileOne(), 20);
  }

  async waitReady(): Promise<void> {
    const wait = this.#spawned + this.#readyzAfterMs - performance.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));
  }

  stop(): Promise<{ ms: number; exit: string }> {
    clearInterval(this.#timer);
    return Promise.resolve({ ms: 0, exit: "code 0" });
  }

  #reconcileOne(): void {
    const stale = this.#cluster.objects(this.#target.resource).find((o) =>
      (o as { status?: { observedGeneration?: number } }).status?.observedGeneration !==
        o.metadata?.generation
    );
    if (!stale) return;
    this.#cluster.put(this.#target.resource, {
      ...stale,
      status: {
        observedGeneration: stale.metadata?.generation,
        conditions: [{ type: "Ready", status: "True" }],
      },
    } as KubeObject);
  }
}

function sample(t: number, rssMib: number, cpuSeconds: number) {
  return {
    t,
    process: 0,
    rssBytes: rssMib * MIB,
    hwmBytes: rssMib * MIB,
    cpuSeconds,
    processes: 1,
  };
}

function scrape(t: number, get: number, patch: number, post: number, reconciles: number): Scrape {
  const requests = (method: string, value: number): Series => ({
    name: "rest_client_requests_total",
    labels: { method, code: "200" },
    value,
  });
  return {
    t,
    process: 0,
    series: [
      requests("GET", get),
      requests("PATCH", patch),
      requests("POST", post),
      { name: "controller_runtime_reconcile_total", labels: {}, value: reconciles },
    ],
  };
}

/** Three objects created with no operator running, which is spawned at 400 ms. */
function restartRun(): Omit<Run, "figures"> {
  return {
    id: "restart-3 default",
    group: "restart-3",
    scenario: "restart",
    size: 3,
    variant: { name: "default", v8Flags: [] },
    command: [],
    startedAt: "2026-01-01T00:00:00.000Z",
    durationMs: 3_100,
    phases: [
      { name: "create", startMs: 0, endMs: 399 },
      { name: "startup", startMs: 399.5, endMs: 700 },
      { name: "converge", startMs: 701, endMs: 3_000 },
    ],
    samples: [sample(410, 30, 0.2), sample(1_000, 50, 0.9), sample(3_000, 62, 1.8)],
    scrapes: [scrape(701, 40, 10, 0, 5), scrape(3_000, 80, 40, 30, 25)],
    objects: [
      { name: "app-00001", createdMs: 0, readyMs: 1_200 },
      { name: "app-00002", createdMs: 100, readyMs: 1_500 },
      { name: "app-00003", createdMs: 200, readyMs: 1_300, updatedMs: 1_400, updateReadyMs: 2_600 },
    ],
  };
}

function restartResult(
  target: string,
  restart: Partial<Restart>,
  apiCalls: number | undefined,
  rssPeakMib: number,
): Run {
  return {
    id: `restart-1000 ${target} default`,
    group: "restart-1000",
    target,
    scenario: "restart",
    size: 1_000,
    variant: { name: "default", v8Flags: [] },
    command: [],
    startedAt: "2026-01-01T00:00:00.000Z",
    durationMs: 0,
    phases: [],
    samples: [],
    scrapes: [],
    objects: [],
    figures: {
      rssPeakBytes: rssPeakMib * MIB,
      ...(apiCalls !== undefined && { apiCalls }),
      ...(Object.keys(restart).length > 0 && {
        restart: {
          spawnedMs: 20_000,
          readyzMs: 1_050,
          edited: "app-01000",
          editSentMs: 1_050,
          ...restart,
        },
      }),
    },
  };
}

function resultsOf(runs: Run[]): Results {
  const names = [...new Set(runs.map((r) => r.target!))];
  const record = (name: string) => ({ name, file: `peers/${name}.json`, replicas: 0 });
  return {
    format: RESULTS_FORMAT,
    startedAt: "2026-01-01T00:00:00.000Z",
    finishedAt: "2026-01-01T01:00:00.000Z",
    options: {},
    machine: {
      cores: 2,
      memoryBytes: 2 ** 34,
      cpuModel: "test",
      os: "linux x86_64",
      kernel: "6",
      loadAverage: [0, 0, 0],
    },
    versions: {
      deno: "2",
      v8: "14",
      typescript: "5",
      kubernetes: "v1.36.3",
      kinglet: "0.1.0",
      commit: "abc",
      target: names.join(", "),
    },
    target: record(names[0]!),
    targets: names.map(record),
    runs,
  };
}

/** The cells of a Markdown table's rows. */
function cells(lines: readonly string[]): string[][] {
  return lines.map((line) => line.slice(1, -1).split("|").map((c) => c.trim()));
}
