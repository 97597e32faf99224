import assert from "node:assert/strict";
import { cells, resultsOf as sharedResults, sample } from "./_bench_results.ts";
import type { KubeClient } from "../../lib/kube/client.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { type ControllerMetrics, RuntimeMetrics } from "../../lib/runtime/metrics/metrics.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";
import { writeCharts } from "../../bench/report/charts.ts";
import { catchUpFigures, computeFigures, convergedAt } from "../../bench/measure/figures.ts";
import { parseMetrics } from "../../bench/measure/metrics_scraper.ts";
import type { OperatorProcess } from "../../bench/harness/operator_process.ts";
import { parseOptions } from "../../bench/harness/options.ts";
import { Progress } from "../../bench/harness/progress.ts";
import { ReadinessTracker } from "../../bench/measure/readiness_tracker.ts";
import { RunRecorder } from "../../bench/measure/recorder.ts";
import { renderReport, scenarioTable } from "../../bench/report/report.ts";
import {
  type CatchUp,
  type CatchUpMarks,
  type ObjectTiming,
  parseResults,
  type Results,
  type Run,
  type Scrape,
} from "../../bench/measure/results.ts";
import { planRuns } from "../../bench/harness/runner.ts";
import { DEFAULT_SCENARIOS, SCENARIOS } from "../../bench/harness/scenarios.ts";
import { seriesOf } from "../../bench/report/series.ts";
import { loadTarget, type Target } from "../../bench/harness/target.ts";

const MIB = 2 ** 20;
const NAMESPACE = "bench";
const HOST = "127.0.0.1:6443";
/** Far past what a scenario takes on a busy machine (about 2 s): a phase that waits it out shows. */
const READY_TIMEOUT_MS = 60_000;

Deno.test("backlog creates every object with no operator running, then spawns one and edits the last 1 s after", async () => {
  const { marks, run, phases, lives, reconciles } = await drive("backlog", { size: 5 });
  assert.deepEqual(phases, ["create", "catch-up"]);
  assert.equal(lives, 1);
  assert.equal(marks.edited, "app-00005");
  const create = run.phases.find((p) => p.name === "create")!;
  assert.ok(create.endMs <= marks.spawnedMs, "the creates finished before the spawn");
  assert.ok(run.objects.every((o) => o.readyMs! > marks.spawnedMs), "none Ready before the spawn");
  assert.deepEqual(run.objects.filter((o) => o.updatedMs !== undefined).map((o) => o.name), [
    "app-00005",
  ]);
  const figures = catchUpFigures(run.objects, marks);
  // A timer and performance.now() may disagree by a fraction of a millisecond.
  assert.ok(figures.editSentMs! >= 999, JSON.stringify(figures));
  assert.ok(figures.editObservedMs! > figures.editSentMs!, JSON.stringify(figures));
  assert.ok(figures.convergedMs! >= figures.editObservedMs!, JSON.stringify(figures));
  // The stand-in writes observedGeneration and Ready at once: taken in when seen Ready.
  assert.equal(
    figures.editTakenMs,
    figures.editObservedMs! - figures.editSentMs!,
    JSON.stringify(figures),
  );
  // One per object and one for the edit, unless a slow machine let the edit in before app-00005's.
  assert.ok(reconciles === 5 || reconciles === 6, `${reconciles} reconciles`);
});

Deno.test("edited makes every object Ready, stops the operator, updates all but the last, and edits the last after the second spawn", async () => {
  const { marks, run, phases, lives, reconciles } = await drive("edited", { size: 5 });
  assert.deepEqual(phases, ["startup", "create", "ready", "stop", "update", "catch-up"]);
  assert.equal(lives, 2);
  assert.equal(marks.edited, "app-00005");
  const beforeSpawn = run.objects.filter((o) => o.updatedMs! < marks.spawnedMs);
  assert.deepEqual(beforeSpawn.map((o) => o.name), [
    "app-00001",
    "app-00002",
    "app-00003",
    "app-00004",
  ]);
  assert.ok(run.objects.every((o) => o.readyMs! < marks.spawnedMs), "all Ready under the first");
  assert.ok(
    run.objects.every((o) => o.updateReadyMs! > marks.spawnedMs),
    "every update is the spawned operator's work",
  );
  const figures = catchUpFigures(run.objects, marks);
  assert.ok(figures.editSentMs! >= 999, JSON.stringify(figures));
  assert.ok(figures.convergedMs! >= figures.editObservedMs!, JSON.stringify(figures));
  assert.equal(reconciles, 5, "four updates and the edit");
});

Deno.test("a catch-up run's figures are the spawned process', with its request latency from kinglet's histogram", async () => {
  for (const scenario of ["backlog", "edited"] as const) {
    const { marks, run, reconciles } = await drive(scenario, { size: 3 });
    const figures = computeFigures(run, SCENARIOS[scenario].window, marks);
    assert.equal(figures.restart, undefined, `${scenario} marks are not restart's`);
    assert.equal(figures.reconciles, reconciles, scenario);
    assert.equal(figures.apiCalls, 2 * reconciles, "a GET and a PATCH per reconcile");
    assert.ok(figures.cpuSeconds! > 0 && figures.rssPeakBytes! > 0, JSON.stringify(figures));
    assert.equal(figures.createReady, undefined, "the objects precede the spawned process");
    const catchUp = figures.catchUp!;
    // As many GETs in (0, 5 ms] as PATCHes in (5, 25 ms]: interpolated within the buckets.
    assert.equal(catchUp.requestP50Seconds, 0.005);
    assert.ok(
      Math.abs(catchUp.requestP99Seconds! - 0.0246) < 1e-12,
      `${catchUp.requestP99Seconds}`,
    );
    assert.ok(catchUp.convergedMs! >= catchUp.editObservedMs!, JSON.stringify(catchUp));
  }
});

Deno.test("catch-up figures count the edit and convergence from the spawn and read the request histogram", () => {
  const objects: ObjectTiming[] = [
    { name: "app-00001", createdMs: 0, readyMs: 2_900 },
    { name: "app-00002", createdMs: 100, readyMs: 3_600 },
    {
      name: "app-00003",
      createdMs: 200,
      readyMs: 3_100,
      updatedMs: 3_050,
      updateObservedMs: 3_250,
      updateReadyMs: 4_100,
    },
  ];
  const marks = { spawnedMs: 2_000, readyzMs: 600, edited: "app-00003" };
  const after = histogramScrape(5_000, { "0.005": 10, "0.025": 90, "0.1": 100, "+Inf": 100 });
  const { requestP50Seconds, requestP99Seconds, ...times } = catchUpFigures(objects, marks, {
    before: { t: 2_000, process: 0, series: [] },
    after,
  });
  assert.deepEqual(times, {
    ...marks,
    editSentMs: 1_050,
    editObservedMs: 2_100,
    editTakenMs: 200,
    convergedMs: 2_100,
  });
  // Ranks 50 and 99 of 100, interpolated within (5, 25] and (25, 100] ms.
  assert.ok(Math.abs(requestP50Seconds! - 0.015) < 1e-12, `${requestP50Seconds}`);
  assert.ok(Math.abs(requestP99Seconds! - 0.0925) < 1e-12, `${requestP99Seconds}`);
});

Deno.test("the tracker marks an edit taken in at its observedGeneration before it is Ready again", async () => {
  const target = await loadTarget("kinglet");
  const cluster = new MemoryCluster({ namespaces: [NAMESPACE] });
  let now = 0;
  const tracker = new ReadinessTracker({
    client: cluster as unknown as KubeClient,
    resource: target.resource,
    namespace: NAMESPACE,
    rule: target.ready,
    now: () => now,
  });
  const stop = new AbortController();
  const watching = tracker.run(stop.signal);
  const app = (image: string, observedGeneration: number, ready: string): KubeObject => ({
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    metadata: { name: "app", namespace: NAMESPACE },
    spec: { image, replicas: 0, port: 8080 },
    status: { observedGeneration, conditions: [{ type: "Ready", status: ready }] },
  } as KubeObject);
  const step = async (at: number, object: KubeObject) => {
    now = at;
    cluster.put(target.resource, object);
    await new Promise((resolve) => setTimeout(resolve, 20));
  };
  tracker.created("app");
  await step(10, app("a", 1, "True"));
  tracker.updated("app");
  await step(20, app("b", 1, "True"));
  await step(30, app("b", 2, "False"));
  await step(40, app("b", 2, "True"));
  stop.abort();
  await watching;
  const [timing] = tracker.timings();
  assert.equal(timing!.readyMs, 10);
  assert.equal(timing!.updateObservedMs, 30, "taken in when observedGeneration reached 2");
  assert.equal(timing!.updateReadyMs, 40, "Ready at 2 only later");
});

Deno.test("catch-up figures leave out what the rule or the exporter cannot show", () => {
  const marks = { spawnedMs: 2_000, readyzMs: 600, edited: "app-00002" };
  const figures = catchUpFigures(
    [
      { name: "app-00001", createdMs: 0, readyMs: 2_500 },
      { name: "app-00002", createdMs: 0, readyMs: 2_600, updatedMs: 3_000 },
    ],
    marks,
    { before: { t: 2_000, process: 0, series: [] }, after: histogramScrape(5_000, {}) },
  );
  assert.deepEqual(figures, { ...marks, editSentMs: 1_000 });
});

Deno.test("all converged is when the last object was Ready at the generation in effect", () => {
  const ready = { name: "a", createdMs: 0, readyMs: 500 };
  const updated = { name: "b", createdMs: 0, readyMs: 300, updatedMs: 800, updateReadyMs: 1_200 };
  assert.equal(convergedAt([ready, updated]), 1_200);
  assert.equal(convergedAt([{ ...ready, readyMs: 1_500 }, updated]), 1_500);
  assert.equal(convergedAt([ready, { ...updated, updateReadyMs: undefined }]), undefined);
  assert.equal(convergedAt([{ ...ready, readyMs: undefined }]), undefined);
  assert.equal(convergedAt([]), undefined);
});

Deno.test("a side-by-side backlog table shows the catch-up figures per target, and the edit under it", () => {
  const results = resultsOf([
    catchUpResult("backlog", "kinglet", {
      editTakenMs: 300,
      editObservedMs: 1_900,
      convergedMs: 9_000,
      requestP50Seconds: 0.004,
      requestP99Seconds: 0.2,
    }, 3_000),
    catchUpResult("backlog", "controller-runtime", {
      editTakenMs: 600,
      editObservedMs: 3_800,
      convergedMs: 18_000,
      requestP50Seconds: 0.008,
      requestP99Seconds: 0.1,
    }, 6_000),
    catchUpResult("backlog", "kube-rs", { editObservedMs: 950, convergedMs: 4_500 }, undefined),
  ]);
  const rows = cells(scenarioTable(results.runs, seriesOf(results)));
  assert.deepEqual(rows[0], [
    "target",
    "edit→observedGeneration (ms)",
    "spawn→edit observed (ms)",
    "spawn→all converged (ms)",
    "API calls",
    "request p50 (ms)",
    "request p99 (ms)",
    "CPU (s)",
    "RSS peak (MiB)",
    "to /readyz (ms)",
    "reconciles",
  ]);
  assert.deepEqual(rows.slice(2).map((r) => r.slice(0, 7)), [
    ["kinglet", "300", "1,900", "9,000", "3,000", "4.0", "200"],
    [
      "controller-runtime",
      "600 (2.00×)",
      "3,800 (2.00×)",
      "18,000 (2.00×)",
      "6,000 (2.00×)",
      "8.0 (2.00×)",
      "100 (0.50×)",
    ],
    ["kube-rs", "–", "950 (0.50×)", "4,500 (0.50×)", "–", "–", "–"],
  ]);
  const report = renderReport(parseResults(JSON.stringify(results)), []);
  assert.match(report, /^## backlog-1000$/m);
  assert.match(
    report,
    /^1,000 objects were created while no operator ran \(their children absent\), then the operator was spawned; the last object by name was edited/m,
  );
  assert.match(report, /^- kube-rs: `app-01000` edited 1,050 ms after the spawn\.$/m);
});

Deno.test("an edited table says how many objects were updated while no operator ran", () => {
  const results = resultsOf([catchUpResult("edited", "kinglet", { convergedMs: 9_000 }, 3_000)]);
  const rows = cells(scenarioTable(results.runs, seriesOf(results)));
  assert.deepEqual(rows[2]!.slice(0, 5), ["default", "–", "–", "9,000", "3,000"]);
  const report = renderReport(parseResults(JSON.stringify(results)), []);
  assert.match(report, /^## edited-1000$/m);
  assert.match(
    report,
    /^1,000 objects were made Ready, the operator stopped, 999 of them updated, then the operator spawned again;/m,
  );
});

Deno.test("backlog and edited run only when asked for by name, for every target that reconciles", async () => {
  assert.ok(!DEFAULT_SCENARIOS.includes("backlog") && !DEFAULT_SCENARIOS.includes("edited"));
  assert.deepEqual(parseOptions([]).scenarios, [...DEFAULT_SCENARIOS]);
  const [kinglet, floor] = await Promise.all([loadTarget("kinglet"), loadTarget("deno-floor")]);
  const options = parseOptions(["--scenarios", "backlog,edited", "--sizes", "20,100"]);
  assert.deepEqual(planRuns(options, [kinglet, floor]).map((p) => [p.group, p.target.name]), [
    ["backlog-20", "kinglet"],
    ["backlog-100", "kinglet"],
    ["edited-20", "kinglet"],
    ["edited-100", "kinglet"],
  ]);
});

Deno.test("a catch-up group has an RSS chart but no create→Ready chart", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-bench-catch-up-" });
  try {
    const run: Omit<Run, "figures"> = {
      ...catchUpResult("backlog", "kinglet", {}, 10),
      size: 3,
      group: "backlog-3",
      phases: [{ name: "create", startMs: 0, endMs: 100 }, {
        name: "catch-up",
        startMs: 101,
        endMs: 3_000,
      }],
      samples: [sample(110, 30, 0.1), sample(1_000, 50, 0.5), sample(3_000, 55, 0.9)],
      objects: [{ name: "app-00001", createdMs: 10, readyMs: 600 }],
    };
    const marks = { spawnedMs: 101, readyzMs: 300, edited: "app-00001" };
    const figures = computeFigures(run, SCENARIOS.backlog.window, marks);
    assert.equal(figures.cpuSeconds, 0.9, "spawned inside its window: its total at the end");
    assert.equal(figures.rssPeakBytes, 55 * MIB);
    const charts = await writeCharts(resultsOf([{ ...run, figures }]), dir);
    assert.deepEqual(charts.map((c) => c.file), ["rss-backlog-3.svg"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * Runs a catch-up scenario against an in-memory API server with a stand-in
 * operator the recorder follows (sampling this test's own process), then
 * returns the run as the runner records it.
 */
async function drive(scenario: "backlog" | "edited", options: { size: number }) {
  const target = await loadTarget("kinglet");
  const cluster = new MemoryCluster({ namespaces: [NAMESPACE] });
  const client = cluster as unknown as KubeClient;
  const recorder = new RunRecorder({
    label: scenario,
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
  await using operator = new StandIn(cluster, target, { readyzAfterMs: 200 });
  try {
    const marks = await SCENARIOS[scenario].run({
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
        recorder.attach(operator as unknown as OperatorProcess);
        return Promise.resolve(operator as unknown as OperatorProcess);
      },
      signal: stop.signal,
    });
    assert.ok(marks, `the ${scenario} scenario returns its marks`);
    const run: Omit<Run, "figures"> = {
      ...catchUpResult(scenario, "kinglet", {}, 0),
      size: options.size,
      phases: recorder.phases,
      samples: recorder.samples,
      scrapes: recorder.scrapes,
      objects: tracker.timings(),
    };
    return {
      marks,
      run,
      phases: recorder.phases.map((p) => p.name),
      lives: operator.lives,
      reconciles: operator.reconciles,
    };
  } finally {
    await recorder.detach();
    stop.abort();
    await watching;
  }
}

/**
 * What the scenarios use of an {@link OperatorProcess}: each life answers
 * `/readyz` `readyzAfterMs` after its spawn and reconciles one changed object
 * (its generation not yet observed) per 20 ms, marking it Ready at its
 * generation, with a GET of 3 ms and a PATCH of 20 ms observed by kinglet's
 * own {@link RuntimeMetrics}, which its `/metrics` renders.
 */
class StandIn {
  readonly pid = Deno.pid;
  readonly #cluster: MemoryCluster;
  readonly #target: Target;
  readonly #readyzAfterMs: number;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  #metrics = new RuntimeMetrics();
  #controller: ControllerMetrics | undefined;
  #spawned = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Lives so far, counting the one running. */
  lives = 0;
  /** Reconciles of the current life. */
  reconciles = 0;

  constructor(cluster: MemoryCluster, target: Target, options: { readyzAfterMs: number }) {
    this.#cluster = cluster;
    this.#target = target;
    this.#readyzAfterMs = options.readyzAfterMs;
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response(this.#metrics.render()),
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
    this.#metrics = new RuntimeMetrics();
    this.#controller = this.#metrics.controller("webapp", 1);
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

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
    await this.#server.shutdown();
  }

  #reconcileOne(): void {
    const next = this.#cluster.objects(this.#target.resource).find((o) =>
      (o as { status?: { observedGeneration?: number } }).status?.observedGeneration !==
        o.metadata?.generation
    );
    if (!next) return;
    this.reconciles++;
    this.#metrics.observeRequest({ code: "200", method: "GET", host: HOST, seconds: 0.003 });
    this.#metrics.observeRequest({ code: "200", method: "PATCH", host: HOST, seconds: 0.02 });
    this.#controller!.reconciled("success", 0.023);
    this.#cluster.put(this.#target.resource, {
      ...next,
      status: {
        observedGeneration: next.metadata?.generation,
        conditions: [{ type: "Ready", status: "True" }],
      },
    } as KubeObject);
  }
}

/** A scrape holding only the request duration histogram, cumulative counts by `le`. */
function histogramScrape(t: number, buckets: Record<string, number>): Scrape {
  const text = Object.entries(buckets).map(([le, count]) =>
    `rest_client_request_duration_seconds_bucket{verb="GET",host="${HOST}",le="${le}"} ${count}`
  ).join("\n");
  return { t, process: 0, series: parseMetrics(text) };
}

function catchUpResult(
  scenario: "backlog" | "edited",
  target: string,
  catchUp: Partial<CatchUp>,
  apiCalls: number | undefined,
): Run {
  const marks: CatchUpMarks = { spawnedMs: 20_000, readyzMs: 700, edited: "app-01000" };
  return {
    id: `${scenario}-1000 ${target} default`,
    group: `${scenario}-1000`,
    target,
    scenario,
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
      rssPeakBytes: 60 * MIB,
      cpuSeconds: 4,
      ...(apiCalls !== undefined && { apiCalls }),
      catchUp: { ...marks, editSentMs: 1_050, ...catchUp },
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
