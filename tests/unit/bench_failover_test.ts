import assert from "node:assert/strict";
import { cells, resultsOf as sharedResults, sample } from "./_bench_results.ts";
import { join } from "node:path";
import type { KubeClient } from "../../lib/kube/client.ts";
import { LEASES } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { LeaderElector, type Lease, leaseApi } from "../../lib/runtime/leader/leader.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";
import { computeFigures, failoverFigures } from "../../bench/measure/figures.ts";
import type { OperatorProcess } from "../../bench/harness/operator_process.ts";
import { parseOptions } from "../../bench/harness/options.ts";
import { Progress } from "../../bench/harness/progress.ts";
import { ReadinessTracker } from "../../bench/measure/readiness_tracker.ts";
import { RunRecorder } from "../../bench/measure/recorder.ts";
import { renderReport, scenarioTable } from "../../bench/report/report.ts";
import {
  type Failover,
  parseResults,
  type Results,
  type Run,
  type Scrape,
} from "../../bench/measure/results.ts";
import { planRuns } from "../../bench/harness/runner.ts";
import { SCENARIOS } from "../../bench/harness/scenarios.ts";
import { seriesOf } from "../../bench/report/series.ts";
import { expandCommand, leaseOf, loadTarget, type Target } from "../../bench/harness/target.ts";

const MIB = 2 ** 20;
const NAMESPACE = "bench";
/** The stand-ins' Lease: a dead holder's is taken over about 1 s after its last renewal. */
const ELECTION = { leaseDurationMs: 1_000, renewDeadlineMs: 500, retryPeriodMs: 100 };

Deno.test("failover kills the Lease holder and the second candidate takes the Lease and reconciles all and the edit", async () => {
  const { marks, phases, objects, run, lease, first } = await driveFailover({ size: 5 });
  assert.deepEqual(phases, ["startup", "create", "ready", "kill", "failover"]);
  assert.equal(marks.killed, "bench-a");
  assert.equal(marks.successor, "bench-b");
  assert.equal(marks.edited, "app-00005");
  assert.ok(first.exited, "the first candidate was killed");
  assert.equal(lease?.spec?.holderIdentity, "bench-b", "not released: the Lease was taken over");
  assert.ok(objects.every((o) => o.readyMs! < marks.killedMs), "all Ready before the kill");
  // The dead holder's Lease expires a lease duration after its last renewal, shortly before the kill.
  assert.ok(marks.takeoverMs! >= 700, `takeover ${marks.takeoverMs}`);
  const figures = computeFigures(run, SCENARIOS.failover.window, marks).failover!;
  assert.ok(figures.editSentMs! >= 999, `edit sent ${figures.editSentMs} ms after the kill`);
  assert.ok(figures.editObservedMs! > 0);
  assert.ok(figures.reconciledMs! >= figures.takeoverMs!, JSON.stringify(figures));
  assert.ok(figures.firstReconcileMs! >= figures.takeoverMs! - 100, JSON.stringify(figures));
  assert.ok(figures.standbyRssBytes! > 0, "the successor was sampled before the kill");
});

Deno.test("failover samples the second candidate from its spawn and takes every figure from it", async () => {
  const { run, marks } = await driveFailover({ size: 3 });
  const spawned = run.samples.find((s) => s.process === 1)!.t;
  const startup = run.phases.find((p) => p.name === "startup")!;
  assert.ok(spawned > startup.startMs && spawned < startup.endMs, "spawned inside startup");
  assert.ok(run.samples.filter((s) => s.process === 0).every((s) => s.t <= spawned));
  const figures = computeFigures(run, SCENARIOS.failover.window, marks);
  assert.equal(figures.reconciles, 4, "the successor's own: three objects and the edit");
});

Deno.test("failover refuses to go on when the first candidate never takes the Lease", async () => {
  await assert.rejects(
    () => driveFailover({ size: 2, firstElects: false, readyTimeoutMs: 600 }),
    /bench-a did not take the Lease bench\/kinglet-leader within 600 ms/,
  );
});

Deno.test("failover figures take the standby RSS from the successor's last sample before the kill", () => {
  const run = failoverRun();
  const marks = {
    killedMs: 2_400,
    killed: "bench-a",
    successor: "bench-b",
    edited: "app-00003",
    takeoverMs: 15_200,
    reconciledMs: 16_000,
  };
  assert.deepEqual(failoverFigures(run, marks), {
    ...marks,
    standbyRssBytes: 31 * MIB,
    editSentMs: 1_000,
    editObservedMs: 15_100,
  });
});

Deno.test("a failover run's counters and CPU are the successor's growth from the kill, its peak its own", () => {
  const run = failoverRun();
  const figures = computeFigures(run, SCENARIOS.failover.window, {
    killedMs: 2_400,
    killed: "bench-a",
    successor: "bench-b",
    edited: "app-00003",
  });
  assert.equal(figures.apiCalls, 120, "growth of the successor's counter, not the first's 600");
  assert.equal(figures.reconciles, 4);
  assert.ok(Math.abs(figures.cpuSeconds! - 1.5) < 1e-9, `${figures.cpuSeconds}`);
  assert.equal(figures.rssPeakBytes, 58 * MIB, "not the first candidate's 90 MiB");
  assert.equal(figures.failover?.standbyRssBytes, 31 * MIB);
});

Deno.test("a side-by-side failover table shows takeover, edit, reconciles, cost and standby RSS per target", () => {
  const results = resultsOf([
    failoverResult(
      "kinglet",
      { takeoverMs: 15_000, editObservedMs: 14_500, reconciledMs: 15_800 },
      30,
    ),
    failoverResult("kinglet-warm", {
      takeoverMs: 15_000,
      editObservedMs: 14_200,
      reconciledMs: 15_200,
    }, 45),
  ], ["deno-floor"]);
  const rows = cells(scenarioTable(results.runs, seriesOf(results)));
  assert.deepEqual(rows[0]!.slice(0, 7), [
    "target",
    "takeover (ms)",
    "edit observed (ms)",
    "all reconciled (ms)",
    "API calls",
    "RSS peak (MiB)",
    "CPU (s)",
  ]);
  assert.equal(rows[0]![7], "standby RSS (MiB)");
  assert.deepEqual(rows[3]!.slice(0, 4), [
    "kinglet-warm",
    "15,000 (1.00×)",
    "14,200 (0.98×)",
    "15,200 (0.96×)",
  ]);
  assert.equal(rows[3]![7], "45.0 (1.50×)");
  const report = renderReport(parseResults(JSON.stringify(results)), []);
  assert.match(report, /^## failover-100$/m);
  assert.match(
    report,
    /^- kinglet-warm: bench-a killed, `app-00100` edited 1,000 ms after the kill; bench-b held 45\.0 MiB as a standby\.$/m,
  );
  assert.match(
    report,
    /^- deno-floor is left out of failover \(it runs idle\): failover runs two candidates, which needs a `leaderElection` in the target file\.$/m,
  );
});

Deno.test("kinglet's targets run failover with a Lease in the run's namespace; the Deno floor is left out", async () => {
  const [kinglet, warm, floor] = await Promise.all(
    ["kinglet", "kinglet-warm", "deno-floor"].map(loadTarget),
  );
  assert.ok(kinglet!.scenarios.includes("failover"));
  assert.deepEqual(warm!.scenarios, ["failover"]);
  assert.deepEqual(leaseOf(kinglet!, "bench"), { namespace: "bench", name: "kinglet-leader" });
  const values = { kubeconfig: "/k", metricsPort: 1, probePort: 2, namespace: "bench" };
  const argv = expandCommand(kinglet!, { ...values, candidate: "bench-b" });
  assert.deepEqual(argv.slice(-5), [
    "--leader-elect",
    "--leader-election-id=bench-b",
    "--leader-election-namespace=bench",
    "--lease-name=kinglet-leader",
    "--standby=cold",
  ]);
  assert.equal(expandCommand(warm!, { ...values, candidate: "bench-a" }).at(-1), "--standby=warm");
  assert.ok(!expandCommand(kinglet!, values).includes("--leader-elect"));
  assert.throws(() => expandCommand(floor!, { ...values, candidate: "bench-a" }), RangeError);
  const options = parseOptions(["--scenarios", "failover", "--sizes", "20"]);
  assert.deepEqual(
    planRuns(options, [kinglet!, warm!, floor!]).map((p) => [p.group, p.target.name]),
    [["failover-20", "kinglet"], ["failover-20", "kinglet-warm"]],
  );
  assert.throws(
    () => planRuns(options, [floor!]),
    /Cannot run 'failover': no target runs it \(deno-floor runs idle\)/,
  );
});

Deno.test("failover runs only when asked for by name", () => {
  assert.deepEqual(parseOptions([]).scenarios, ["idle", "scale", "budget", "restart"]);
});

Deno.test("a target that lists failover without leaderElection is refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-bench-failover-" });
  try {
    const raw = JSON.parse(
      await Deno.readTextFile(new URL("../../bench/targets/kinglet.json", import.meta.url)),
    );
    delete raw.leaderElection;
    const file = join(dir, "target.json");
    await Deno.writeTextFile(file, JSON.stringify({ ...raw, scenarios: ["failover"] }));
    await assert.rejects(() => loadTarget(file), /'scenarios' names "failover", which needs/);
    await Deno.writeTextFile(file, JSON.stringify(raw));
    assert.ok(!(await loadTarget(file)).scenarios.includes("failover"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * Runs the failover scenario against an in-memory API server with two
 * stand-in candidates, each a real {@link LeaderElector} on the cluster's
 * Leases (1 s lease duration, no release when killed) that, while it leads,
 * reconciles one object per 20 ms (changed objects first), marking it Ready
 * at its generation and counting it on its `/metrics`. The recorder samples
 * this test's own process for each, so that the standby has an RSS.
 */
async function driveFailover(
  options: { size: number; firstElects?: boolean; readyTimeoutMs?: number },
) {
  const target = await loadTarget("kinglet");
  const cluster = new MemoryCluster({ namespaces: [NAMESPACE] });
  const client = cluster as unknown as KubeClient;
  const recorder = new RunRecorder({
    label: "failover",
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
  const candidates: Candidate[] = [];
  try {
    const marks = await SCENARIOS.failover.run({
      size: options.size,
      settings: {
        idleMs: 0,
        baselineMs: 0,
        holdMs: 0,
        readyTimeoutMs: options.readyTimeoutMs ?? 10_000,
        ratePerSecond: 1_000,
        admissionMs: 0,
      },
      recorder,
      tracker,
      workload: { client, target, namespace: NAMESPACE, tracker, replicas: 0 },
      launch: ({ candidate } = {}) => {
        const elects = candidates.length > 0 || (options.firstElects ?? true);
        const operator = new Candidate(cluster, target, candidate!, elects);
        candidates.push(operator);
        recorder.attach(operator as unknown as OperatorProcess);
        return Promise.resolve(operator as unknown as OperatorProcess);
      },
      signal: stop.signal,
    });
    assert.ok(marks, "the failover scenario returns its marks");
    await recorder.detach();
    const run: Omit<Run, "figures"> = {
      ...failoverRun(),
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
      objects: tracker.timings(),
      first: candidates[0]!,
      lease: cluster.object<Lease>(LEASES, `${NAMESPACE}/kinglet-leader`),
    };
  } finally {
    await recorder.detach();
    await Promise.all(candidates.map((c) => c.stop()));
    await Promise.all(candidates.map((c) => c.close()));
    stop.abort();
    await watching;
  }
}

/** What the scenario uses of an {@link OperatorProcess}, played by a leader elector and a loop. */
class Candidate {
  readonly pid = Deno.pid;
  readonly #cluster: MemoryCluster;
  readonly #target: Target;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #life = new AbortController();
  readonly #electing: Promise<void>;
  #exited = false;
  /** Reconciles so far, as its `/metrics` reports them. */
  reconciles = 0;

  constructor(cluster: MemoryCluster, target: Target, identity: string, elects: boolean) {
    this.#cluster = cluster;
    this.#target = target;
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () =>
        new Response(
          `controller_runtime_reconcile_total{controller="webapp",result="success"} ${this.reconciles}\n`,
        ),
    );
    const elector = new LeaderElector(leaseApi(cluster as unknown as KubeClient), {
      namespace: NAMESPACE,
      name: "kinglet-leader",
      identity,
      ...ELECTION,
      releaseOnCancel: false,
    });
    this.#electing = elects
      ? elector.run(this.#life.signal, { onStartedLeading: (leading) => this.#lead(leading) })
      : Promise.resolve();
  }

  get exited(): boolean {
    return this.#exited;
  }

  get metricsUrl(): string {
    return `http://127.0.0.1:${this.#server.addr.port}/metrics`;
  }

  waitReady(): Promise<void> {
    return Promise.resolve();
  }

  tail(): Promise<string> {
    return Promise.resolve("(stand-in)");
  }

  async kill(): Promise<{ ms: number; exit: string }> {
    this.#life.abort();
    await this.#electing;
    this.#exited = true;
    return { ms: 0, exit: "signal SIGKILL" };
  }

  stop(): Promise<{ ms: number; exit: string }> {
    return this.kill();
  }

  async close(): Promise<void> {
    await this.#server.shutdown();
  }

  #lead(leading: AbortSignal): void {
    const backlog = this.#cluster.objects(this.#target.resource).map((o) => o.metadata!.name!);
    const timer = setInterval(() => this.#reconcileOne(backlog), 20);
    leading.addEventListener("abort", () => clearInterval(timer), { once: true });
  }

  #reconcileOne(backlog: string[]): void {
    const objects = this.#cluster.objects(this.#target.resource);
    const changed = objects.find((o) =>
      (o as { status?: { observedGeneration?: number } }).status?.observedGeneration !==
        o.metadata?.generation
    );
    const queued = changed ? undefined : backlog.shift();
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

function scrape(t: number, requests: number, reconciles: number, process: number): Scrape {
  return {
    t,
    process,
    series: [
      { name: "rest_client_requests_total", labels: { method: "GET" }, value: requests },
      { name: "controller_runtime_reconcile_total", labels: {}, value: reconciles },
    ],
  };
}

/**
 * The first candidate sampled from 10 ms until the second's spawn at 200 ms;
 * the second sampled from then on, killed-over at 2,400 ms.
 */
function failoverRun(): Omit<Run, "figures"> {
  return {
    id: "failover-3 default",
    group: "failover-3",
    scenario: "failover",
    size: 3,
    variant: { name: "default", v8Flags: [] },
    command: [],
    startedAt: "2026-01-01T00:00:00.000Z",
    durationMs: 20_000,
    phases: [
      { name: "startup", startMs: 0, endMs: 300 },
      { name: "create", startMs: 301, endMs: 400 },
      { name: "ready", startMs: 401, endMs: 1_600 },
      { name: "kill", startMs: 2_390, endMs: 2_410 },
      { name: "failover", startMs: 2_411, endMs: 18_000 },
    ],
    samples: [
      sample(10, 40, 0.3, 0),
      sample(150, 90, 0.6, 0),
      sample(200, 30, 0.2, 1),
      sample(1_600, 30.5, 0.3, 1),
      sample(2_390, 31, 0.4, 1),
      sample(2_410, 31, 0.4, 1),
      sample(18_000, 58, 1.9, 1),
    ],
    scrapes: [
      scrape(10, 50, 0, 0),
      scrape(150, 600, 0, 0),
      scrape(2_390, 30, 0, 1),
      scrape(18_000, 150, 4, 1),
    ],
    objects: [
      { name: "app-00001", createdMs: 301, readyMs: 1_200 },
      { name: "app-00002", createdMs: 350, readyMs: 1_500 },
      {
        name: "app-00003",
        createdMs: 399,
        readyMs: 1_300,
        updatedMs: 3_400,
        updateReadyMs: 18_500,
      },
    ],
  };
}

function failoverResult(target: string, failover: Partial<Failover>, standbyMib: number): Run {
  return {
    id: `failover-100 ${target} default`,
    group: "failover-100",
    target,
    scenario: "failover",
    size: 100,
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
      apiCalls: 500,
      cpuSeconds: 1.5,
      failover: {
        killedMs: 20_000,
        killed: "bench-a",
        successor: "bench-b",
        edited: "app-00100",
        editSentMs: 1_000,
        standbyRssBytes: standbyMib * MIB,
        ...failover,
      },
    },
  };
}

function resultsOf(runs: Run[], others: string[]): Results {
  const names = [...new Set(runs.map((r) => r.target!))];
  const record = (name: string, scenarios: string[]) => ({
    name,
    file: `bench/targets/${name}.json`,
    replicas: 0,
    scenarios,
  });
  return sharedResults(runs, [
    ...names.map((n) => record(n, ["failover"])),
    ...others.map((n) => record(n, ["idle"])),
  ]);
}

/** The cells of a Markdown table's rows. */
