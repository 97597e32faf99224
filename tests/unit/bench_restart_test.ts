import assert from "node:assert/strict";
import { cells, resultsOf as sharedResults, sample } from "./_bench_results.ts";
import type { KubeClient } from "../../lib/kube/client.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";
import { writeCharts } from "../../bench/report/charts.ts";
import { computeFigures, restartFigures } from "../../bench/measure/figures.ts";
import type { OperatorProcess } from "../../bench/harness/operator_process.ts";
import { parseOptions } from "../../bench/harness/options.ts";
import { Progress } from "../../bench/harness/progress.ts";
import { ReadinessTracker } from "../../bench/measure/readiness_tracker.ts";
import { RunRecorder } from "../../bench/measure/recorder.ts";
import { renderReport, scenarioTable } from "../../bench/report/report.ts";
import {
  type ObjectTiming,
  parseResults,
  type Restart,
  type Results,
  type Run,
  type Scrape,
  type Series,
} from "../../bench/measure/results.ts";
import { planRuns } from "../../bench/harness/runner.ts";
import { SCENARIOS } from "../../bench/harness/scenarios.ts";
import { seriesOf } from "../../bench/report/series.ts";
import { loadTarget, type Target } from "../../bench/harness/target.ts";

const MIB = 2 ** 20;
const NAMESPACE = "bench";
/** Far past what the scenario takes on a busy machine (about 1 s): a phase that waits it out shows. */
const READY_TIMEOUT_MS = 60_000;

Deno.test("restart makes every object Ready, stops the operator and edits the last object 1 s after the second spawn", async () => {
  const { marks, phases, objects, lives } = await driveRestart({ size: 5, readyzAfterMs: 200 });
  assert.deepEqual(phases, ["startup", "create", "ready", "stop", "restart"]);
  assert.equal(lives, 2);
  assert.equal(marks.edited, "app-00005");
  assert.ok(
    objects.every((o) => o.readyMs! < marks.spawnedMs),
    "every object was Ready before the restart",
  );
  const figures = restartFigures(objects, marks);
  // A timer and performance.now() may disagree by a fraction of a millisecond.
  assert.ok(figures.readyzMs >= 199, `readyz ${figures.readyzMs}`);
  assert.ok(figures.editSentMs! >= 999, `edit sent ${figures.editSentMs} ms after the spawn`);
  assert.ok(figures.editObservedMs! > 0);
  assert.deepEqual(objects.filter((o) => o.updatedMs !== undefined).map((o) => o.name), [
    "app-00005",
  ]);
});

Deno.test("restart counts reconciles of the restarted process until one per object and one for the edit", async () => {
  const { marks, counted, restartPhaseMs } = await driveRestart({ size: 5, readyzAfterMs: 200 });
  const figures = restartFigures([], marks);
  assert.ok(figures.firstReconcileMs! > 0, JSON.stringify(figures));
  // The stand-in is through its backlog of 5 long before the edit, so the sixth is the edit's.
  assert.ok(figures.reconciledMs! >= 999, JSON.stringify(figures));
  assert.ok(figures.reconciledMs! > figures.firstReconcileMs!, JSON.stringify(figures));
  assert.ok(counted >= 6, `the restarted stand-in reconciled ${counted}`);
  assert.ok(restartPhaseMs >= figures.reconciledMs!, `the phase took ${restartPhaseMs} ms`);
});

Deno.test("restart sends the edit only once /readyz answered when that takes longer than 1 s", async () => {
  const { marks, objects } = await driveRestart({ size: 3, readyzAfterMs: 1_300 });
  const figures = restartFigures(objects, marks);
  assert.ok(figures.readyzMs >= 1_299, `readyz ${figures.readyzMs}`);
  assert.ok(figures.editSentMs! >= figures.readyzMs, JSON.stringify(figures));
});

Deno.test("restart ends at the observed edit, without reconcile figures, for a target without the metric", async () => {
  const { marks, restartPhaseMs } = await driveRestart({
    size: 3,
    readyzAfterMs: 200,
    exportsReconciles: false,
  });
  assert.equal(marks.firstReconcileMs, undefined);
  assert.equal(marks.reconciledMs, undefined);
  assert.ok(
    restartPhaseMs < READY_TIMEOUT_MS / 2,
    `the phase took ${restartPhaseMs} ms, as if it waited out the ready timeout`,
  );
});

Deno.test("restart figures time the edit from its request and pass the reconcile marks on", () => {
  const objects: ObjectTiming[] = [
    { name: "app-00001", createdMs: 0, readyMs: 1_200 },
    { name: "app-00002", createdMs: 100, readyMs: 1_500 },
    { name: "app-00003", createdMs: 200, readyMs: 1_300, updatedMs: 3_400, updateReadyMs: 4_600 },
  ];
  const marks = {
    spawnedMs: 2_400,
    readyzMs: 300,
    edited: "app-00003",
    firstReconcileMs: 450,
    reconciledMs: 2_500,
  };
  assert.deepEqual(restartFigures(objects, marks), {
    ...marks,
    editSentMs: 1_000,
    editObservedMs: 1_200,
  });
});

Deno.test("restart figures leave edit observed out when the rule cannot see the new generation", () => {
  const marks = { spawnedMs: 2_000, readyzMs: 300, edited: "app-00002" };
  const unseen = restartFigures([
    { name: "app-00001", createdMs: 0, readyMs: 500 },
    { name: "app-00002", createdMs: 0, readyMs: 900, updatedMs: 3_000 },
  ], marks);
  assert.equal(unseen.editObservedMs, undefined);
  assert.equal(unseen.editSentMs, 1_000);
  assert.equal(unseen.reconciledMs, undefined);
});

Deno.test("a restart run's figures are the restarted process' alone, its totals from its spawn", () => {
  const figures = computeFigures(restartRun(), SCENARIOS.restart.window, {
    spawnedMs: 2_400,
    readyzMs: 300,
    edited: "app-00003",
    reconciledMs: 2_500,
  });
  assert.equal(figures.apiCalls, 150);
  assert.equal(figures.apiCallsPerObject, 50);
  assert.equal(figures.reconciles, 25);
  assert.equal(figures.cpuSeconds, 1.8);
  assert.equal(figures.rssPeakBytes, 62 * MIB, "not the first process' 90 MiB");
  assert.equal(figures.createReady, undefined, "the objects precede the restarted process");
  assert.equal(figures.rssIdleBytes, undefined);
  assert.equal(figures.restart?.reconciledMs, 2_500);
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
    scrapes: [scrape(901, 40, 10, 0, 5), scrape(3_000, 80, 40, 30, 25)],
    objects: [{ name: "app-00001", createdMs: 950, readyMs: 1_450 }],
  };
  const figures = computeFigures(run, SCENARIOS.scale.window);
  assert.equal(figures.apiCalls, 100);
  assert.equal(figures.reconciles, 20);
  assert.ok(Math.abs(figures.cpuSeconds! - 0.9) < 1e-9, `${figures.cpuSeconds}`);
  assert.deepEqual(figures.createReady, { count: 1, p50: 500, p90: 500, p99: 500, max: 500 });
});

Deno.test("a side-by-side restart table shows edit observed, all reconciled, API calls and peak RSS per target", () => {
  const results = resultsOf([
    restartResult("kinglet", { editObservedMs: 900, reconciledMs: 4_000 }, 3_000, 80),
    restartResult("controller-runtime", { editObservedMs: 450, reconciledMs: 8_000 }, 6_000, 40),
    restartResult("kube-rs", { editObservedMs: 1_800, reconciledMs: 2_000 }, undefined, 20),
  ]);
  const rows = cells(scenarioTable(results.runs, seriesOf(results)));
  assert.deepEqual(rows[0]!.slice(0, 5), [
    "target",
    "edit observed (ms)",
    "all reconciled (ms)",
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
  assert.match(
    report,
    /^1,000 objects, all Ready, awaited the restarted operator; the last by name/m,
  );
  assert.match(report, /^- controller-runtime: `app-01000` edited 1,050 ms after the restart\.$/m);
});

Deno.test("results with a restart record of either earlier kind still load, without it", () => {
  const results = resultsOf([restartResult("kinglet", {}, 3_000, 80)]);
  const raw = JSON.parse(JSON.stringify(results));
  const earlier = [
    {
      stopMs: 20.6,
      exit: "code 0",
      readyzMs: 5_278,
      firstReconcileMs: 5_418,
      reconcilesAfter: 1_460,
      settleMs: 15_000,
    },
    {
      spawnedMs: 2_000,
      readyzMs: 300,
      edited: "app-01000",
      firstReadyMs: 800,
      editSentMs: 1_000,
      editObservedMs: 4_000,
      convergedMs: 9_000,
    },
  ];
  for (const restart of earlier) {
    raw.runs[0].figures.restart = restart;
    const parsed = parseResults(JSON.stringify(raw));
    assert.equal(parsed.runs[0]!.figures.restart, undefined);
    assert.equal(parsed.runs[0]!.figures.apiCalls, 3_000);
  }
  raw.runs[0].figures.restart = { spawnedMs: 1, readyzMs: 2 };
  assert.throws(() => parseResults(JSON.stringify(raw)), /figures\.restart\.edited/);
});

Deno.test("a restart group has an RSS chart but no create→Ready chart", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-bench-restart-" });
  try {
    const run = restartRun();
    const figures = computeFigures(run, SCENARIOS.restart.window, {
      spawnedMs: 2_400,
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
 * operator: each life answers `/readyz` `readyzAfterMs` after its spawn,
 * takes its first list of objects as a backlog and reconciles one object per
 * 20 ms (a changed object before the backlog), marking it Ready at its
 * generation and counting it on `/metrics` as controller-runtime does.
 */
async function driveRestart(
  options: { size: number; readyzAfterMs: number; exportsReconciles?: boolean },
) {
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
  await using operator = new StandIn(cluster, target, {
    readyzAfterMs: options.readyzAfterMs,
    exportsReconciles: options.exportsReconciles ?? true,
  });
  try {
    const marks = await SCENARIOS.restart.run({
      size: options.size,
      settings: {
        idleMs: 0,
        baselineMs: 0,
        holdMs: 0,
        readyTimeoutMs: READY_TIMEOUT_MS,
        ratePerSecond: 1_000,
        admissionMs: 0,
      },
      recorder,
      tracker,
      workload: { client, target, namespace: NAMESPACE, tracker, replicas: 0 },
      launch: () => {
        operator.spawn();
        return Promise.resolve(operator as unknown as OperatorProcess);
      },
      signal: stop.signal,
    });
    assert.ok(marks, "the restart scenario returns its marks");
    const restart = recorder.phases.find((p) => p.name === "restart")!;
    return {
      marks,
      phases: recorder.phases.map((p) => p.name),
      objects: tracker.timings(),
      lives: operator.lives,
      counted: operator.reconciles,
      restartPhaseMs: restart.endMs - restart.startMs,
    };
  } finally {
    stop.abort();
    await watching;
  }
}

/** What the scenario uses of an {@link OperatorProcess}, played by a loop over the cluster. */
class StandIn {
  readonly #cluster: MemoryCluster;
  readonly #target: Target;
  readonly #readyzAfterMs: number;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  #spawned = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #backlog: string[] = [];
  /** Lives so far, counting the one running. */
  lives = 0;
  /** Reconciles of the current life, as its `/metrics` reports them. */
  reconciles = 0;

  constructor(
    cluster: MemoryCluster,
    target: Target,
    options: { readyzAfterMs: number; exportsReconciles: boolean },
  ) {
    this.#cluster = cluster;
    this.#target = target;
    this.#readyzAfterMs = options.readyzAfterMs;
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () =>
        new Response(
          options.exportsReconciles
            ? `controller_runtime_reconcile_total{controller="webapp",result="success"} ${this.reconciles}\n`
            : "process_cpu_seconds_total 0.1\n",
        ),
    );
  }

  get exited(): boolean {
    return false;
  }

  get metricsUrl(): string {
    return `http://127.0.0.1:${this.#server.addr.port}/metrics`;
  }

  spawn(): void {
    this.lives++;
    this.reconciles = 0;
    this.#spawned = performance.now();
    this.#backlog = this.#cluster.objects(this.#target.resource).map((o) => o.metadata!.name!);
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

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
    await this.#server.shutdown();
  }

  #reconcileOne(): void {
    const objects = this.#cluster.objects(this.#target.resource);
    const changed = objects.find((o) =>
      (o as { status?: { observedGeneration?: number } }).status?.observedGeneration !==
        o.metadata?.generation
    );
    const queued = changed ? undefined : this.#backlog.shift();
    const next = changed ?? objects.find((o) => o.metadata?.name === queued);
    if (!next) return;
    this.reconciles++;
    this.#cluster.put(this.#target.resource, {
      ...next,
      status: {
        observedGeneration: next.metadata?.generation,
        conditions: [{ type: "Ready", status: "True" }],
      },
    } as KubeObject);
  }
}

function scrape(
  t: number,
  get: number,
  patch: number,
  post: number,
  reconciles: number,
  process = 0,
): Scrape {
  const requests = (method: string, value: number): Series => ({
    name: "rest_client_requests_total",
    labels: { method, code: "200" },
    value,
  });
  return {
    t,
    process,
    series: [
      requests("GET", get),
      requests("PATCH", patch),
      requests("POST", post),
      { name: "controller_runtime_reconcile_total", labels: {}, value: reconciles },
    ],
  };
}

/**
 * Three objects created and made Ready by a first process, stopped at
 * 2,390 ms; the second is spawned at 2,400 ms, inside the `restart` phase.
 */
function restartRun(): Omit<Run, "figures"> {
  return {
    id: "restart-3 default",
    group: "restart-3",
    scenario: "restart",
    size: 3,
    variant: { name: "default", v8Flags: [] },
    command: [],
    startedAt: "2026-01-01T00:00:00.000Z",
    durationMs: 5_100,
    phases: [
      { name: "startup", startMs: 0, endMs: 300 },
      { name: "create", startMs: 301, endMs: 400 },
      { name: "ready", startMs: 401, endMs: 1_600 },
      { name: "stop", startMs: 2_380, endMs: 2_390 },
      { name: "restart", startMs: 2_399.5, endMs: 5_000 },
    ],
    samples: [
      sample(10, 40, 0.3),
      sample(1_600, 90, 2.5),
      sample(2_380, 90, 2.6),
      sample(2_410, 30, 0.2, 1),
      sample(3_000, 50, 0.9, 1),
      sample(5_000, 62, 1.8, 1),
    ],
    scrapes: [
      scrape(300, 10, 0, 0, 0),
      scrape(2_380, 500, 100, 90, 60),
      scrape(5_000, 80, 40, 30, 25, 1),
    ],
    objects: [
      { name: "app-00001", createdMs: 301, readyMs: 1_200 },
      { name: "app-00002", createdMs: 350, readyMs: 1_500 },
      { name: "app-00003", createdMs: 399, readyMs: 1_300, updatedMs: 3_400, updateReadyMs: 4_600 },
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
  return sharedResults(
    runs,
    names.map((name) => ({ name, file: `peers/${name}.json`, replicas: 0 })),
  );
}

/** The cells of a Markdown table's rows. */
