import assert from "node:assert/strict";
import { cells, resultsOf } from "./_bench_results.ts";
import { UsageError } from "../../lib/cli/flags.ts";
import { renderSvg, rssChart } from "../../bench/report/charts.ts";
import { parseOptions } from "../../bench/harness/options.ts";
import { renderReport, scenarioTable } from "../../bench/report/report.ts";
import {
  type Figures,
  type Results,
  type Run,
  SCENARIO_NAMES,
  type ScenarioName,
  type TargetRecord,
} from "../../bench/measure/results.ts";
import { planRuns } from "../../bench/harness/runner.ts";
import { seriesOf } from "../../bench/report/series.ts";
import { loadTarget, type Target } from "../../bench/harness/target.ts";

const MIB = 2 ** 20;

Deno.test("bench options take several targets in the order given", () => {
  const options = parseOptions(["--target", "kinglet, ../peers/go/target.json,../peers/rs.json"]);
  assert.deepEqual(options.targets, ["kinglet", "../peers/go/target.json", "../peers/rs.json"]);
  assert.deepEqual(parseOptions([]).targets, ["kinglet"]);
});

Deno.test("bench options refuse a target given twice and an empty target list", () => {
  assert.throws(
    () => parseOptions(["--target", "kinglet,peer.json,kinglet"]),
    (e: unknown) => e instanceof UsageError && /--target: kinglet is given twice/.test(e.message),
  );
  assert.throws(() => parseOptions(["--target", ","]), UsageError);
});

Deno.test("bench sizes default to an edge size, 1,000 and 5,000, and quick keeps 50", () => {
  assert.deepEqual(parseOptions([]).sizes, [100, 1000, 5000]);
  assert.deepEqual(parseOptions(["--quick"]).sizes, [50]);
  assert.deepEqual(parseOptions(["--sizes", "300"]).sizes, [300]);
});

Deno.test("plans of several targets run them back to back within each group, named by target", () => {
  const options = parseOptions(["--scenarios", "idle,scale", "--sizes", "100,1000"]);
  const plans = planRuns(options, [target("kinglet", ["--lite-mode"]), target("kube-rs", [])]);
  assert.deepEqual(plans.map((p) => p.id), [
    "idle kinglet lite",
    "idle kube-rs default",
    "scale-100 kinglet lite",
    "scale-100 kube-rs default",
    "scale-1000 kinglet lite",
    "scale-1000 kube-rs default",
  ]);
  assert.deepEqual(plans.map((p) => p.target.name).slice(0, 2), [
    "kinglet",
    "kube-rs",
  ]);
});

Deno.test("plans of one target keep their ids without the target's name", () => {
  const options = parseOptions(["--scenarios", "scale", "--sizes", "100"]);
  assert.deepEqual(planRuns(options, [target("kinglet", [])]).map((p) => p.id), [
    "scale-100 default",
  ]);
});

Deno.test("plans refuse the budget scenario naming the target that cannot take a budget", () => {
  const withBudget = target("kinglet", [], ["--cache-max-objects={cacheMaxObjects}"]);
  const options = parseOptions(["--scenarios", "budget", "--sizes", "100"]);
  assert.throws(
    () => planRuns(options, [withBudget, target("kube-rs", [])]),
    (e: unknown) =>
      e instanceof RangeError && /the target kube-rs has no \{cacheMaxObjects\}/.test(e.message),
  );
  assert.equal(planRuns(options, [withBudget]).length, 1);
});

Deno.test("a target that runs only idle is left out of the sized scenarios beside the others", () => {
  const options = parseOptions(["--scenarios", "idle,scale,budget", "--sizes", "100"]);
  const kinglet = target("kinglet", [], ["--cache-max-objects={cacheMaxObjects}"]);
  const plans = planRuns(options, [kinglet, target("floor", [], [], ["idle"])]);
  assert.deepEqual(plans.map((p) => p.id), [
    "idle kinglet default",
    "idle floor default",
    "scale-100 kinglet default",
    "budget-100 kinglet default",
  ]);
});

Deno.test("plans refuse a scenario that no target runs, saying what each runs", () => {
  const options = parseOptions(["--scenarios", "scale", "--sizes", "100"]);
  assert.throws(
    () => planRuns(options, [target("floor", [], [], ["idle"])]),
    (e: unknown) =>
      e instanceof RangeError &&
      /Cannot run 'scale': no target runs it \(floor runs idle\)/.test(e.message),
  );
});

Deno.test("a target file naming an unknown scenario is refused, naming the field", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-target-" });
  const kinglet = JSON.parse(
    await Deno.readTextFile(new URL("../../bench/targets/kinglet.json", import.meta.url)),
  );
  await Deno.writeTextFile(`${dir}/t.json`, JSON.stringify({ ...kinglet, scenarios: ["idel"] }));
  await assert.rejects(
    () => loadTarget(`${dir}/t.json`),
    /'scenarios' names "idel", not one of idle, scale, budget, restart/,
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the Deno floor's target runs only idle, with kinglet's flags and environment", async () => {
  const [floor, kinglet] = await Promise.all([loadTarget("deno-floor"), loadTarget("kinglet")]);
  assert.deepEqual(floor.scenarios, ["idle"]);
  // kinglet serves no webhook, so it runs every scenario but admission.
  assert.deepEqual(kinglet.scenarios, SCENARIO_NAMES.filter((s) => s !== "admission"));
  assert.deepEqual(floor.env, kinglet.env);
  assert.deepEqual(floor.defaultV8Flags, kinglet.defaultV8Flags);
  const flags = (t: Target) => t.command.slice(0, t.command.findIndex((a) => a.endsWith(".js")));
  assert.deepEqual(flags(floor), flags(kinglet));
});

Deno.test("plans refuse two targets of one name, whose rows could not be told apart", () => {
  assert.throws(
    () => planRuns(parseOptions([]), [target("kinglet", []), target("kinglet", [])]),
    (e: unknown) =>
      e instanceof RangeError &&
      /Cannot run two targets named kinglet side by side/.test(e.message),
  );
});

Deno.test("a side-by-side table has a row per target and each figure's ratio to the first", () => {
  const results = sideBySide([
    run("kinglet", "scale-100", { rssIdleBytes: 80 * MIB, rssPeakBytes: 100 * MIB }),
    run("controller-runtime", "scale-100", { rssIdleBytes: 40 * MIB, rssPeakBytes: 150 * MIB }),
    run("kube-rs", "scale-100", { rssIdleBytes: 10 * MIB }),
  ]);
  const rows = cells(scenarioTable(results.runs, seriesOf(results)));
  assert.deepEqual(rows[0]!.slice(0, 3), ["target", "RSS idle (MiB)", "RSS peak (MiB)"]);
  assert.deepEqual(rows.slice(2).map((r) => r.slice(0, 3)), [
    ["kinglet", "80.0", "100.0"],
    ["controller-runtime", "40.0 (0.50×)", "150.0 (1.50×)"],
    ["kube-rs", "10.0 (0.13×)", "–"],
  ]);
});

Deno.test("a side-by-side table names target and variant when a target ran several", () => {
  const results = sideBySide([
    run("kinglet", "idle", { rssIdleBytes: 60 * MIB }, "default"),
    run("kinglet", "idle", { rssIdleBytes: 50 * MIB }, "lite"),
    run("kube-rs", "idle", { rssIdleBytes: 10 * MIB }, "default"),
  ]);
  const rows = cells(scenarioTable(results.runs, seriesOf(results)));
  assert.deepEqual(rows.slice(2).map((r) => r.slice(0, 2)), [
    ["kinglet default", "60.0"],
    ["kinglet lite", "50.0 (0.83×)"],
    ["kube-rs default", "10.0 (0.17×)"],
  ]);
});

Deno.test("a one-target table has a row per variant and no ratios", () => {
  const one = run("kinglet", "idle", { rssIdleBytes: 60 * MIB }, "default");
  const other = run("kinglet", "idle", { rssIdleBytes: 30 * MIB }, "lite");
  const results = { ...sideBySide([one, other]), targets: [record("kinglet")] };
  const rows = cells(scenarioTable(results.runs, seriesOf(results)));
  assert.deepEqual(rows.map((r) => r.slice(0, 2)), [
    ["variant", "RSS idle (MiB)"],
    ["---", "---:"],
    ["default", "60.0"],
    ["lite", "30.0"],
  ]);
});

Deno.test("a side-by-side report is headed by every target and has one table per group", () => {
  const results = sideBySide([
    run("kinglet", "idle", { rssIdleBytes: 80 * MIB }),
    run("kube-rs", "idle", { rssIdleBytes: 10 * MIB }),
    run("kinglet", "scale-100", { rssSteadyBytes: 90 * MIB }),
    run("kube-rs", "scale-100", { rssSteadyBytes: 18 * MIB }),
  ]);
  const report = renderReport(results, []);
  assert.match(report, /^# kinglet and kube-rs side by side: resource benchmark$/m);
  assert.match(report, /^ {2}- kube-rs \(`peers\/kube-rs\.json`\): the kube-rs peer$/m);
  assert.match(report, /ratios are against kinglet/);
  assert.equal([...report.matchAll(/^\| target \|/gm)].length, 2);
  assert.match(report, /^\| kube-rs \| – \| – \| 18\.0 \(0\.20×\) \|/m);
  assert.doesNotMatch(report, /Trade-off between variants/);
});

Deno.test("a report says which Kubernetes version and datastore its runs had, and omits a datastore never recorded", () => {
  const runs = [run("kinglet", "idle", { rssIdleBytes: 80 * MIB })];
  const recorded = sideBySide(runs);
  recorded.versions = { ...recorded.versions, kubernetes: "v1.30.14", datastore: "kine" };
  assert.match(renderReport(recorded, []), /Kubernetes v1\.30\.14 on kine, kinglet/);
  const older = sideBySide(runs);
  assert.match(renderReport(older, []), /Kubernetes v1\.36\.3, kinglet/);
});

Deno.test("an RSS chart side by side draws a line per target, coloured and named by target", async () => {
  const samples = (mib: number) =>
    [0, 1000].map((t) => ({
      t,
      process: 0,
      rssBytes: mib * MIB,
      hwmBytes: mib * MIB,
      cpuSeconds: 0,
      processes: 1,
    }));
  const spec = rssChart("scale-100", [
    { name: "kinglet", samples: samples(80), phases: [] },
    { name: "controller-runtime-webapp", samples: samples(10), phases: [] },
  ], "target") as unknown as {
    layer: { data: { values: { target: string; rss: number }[] }; encoding: ChartEncoding }[];
  };
  assert.equal(spec.layer.length, 1, "no phase marks for several runs' phases");
  const [lines] = spec.layer as [typeof spec.layer[0]];
  assert.deepEqual([...new Set(lines.data.values.map((v) => v.target))], [
    "kinglet",
    "controller-runtime-webapp",
  ]);
  assert.deepEqual(lines.data.values.map((v) => v.rss), [80, 80, 10, 10]);
  assert.deepEqual(lines.encoding.color, {
    field: "target",
    type: "nominal",
    title: "target",
    legend: { labelLimit: 320 },
  });
  const svg = await renderSvg(spec as never);
  assert.ok(svg.startsWith("<svg"));
  for (const name of ["kinglet", "controller-runtime-webapp", "target"]) {
    assert.ok(svg.includes(`>${name}</text>`), `the legend names ${name} in full`);
  }
});

interface ChartEncoding {
  color: unknown;
}

function target(
  name: string,
  defaultV8Flags: string[],
  extra: string[] = [],
  scenarios: ScenarioName[] = [...SCENARIO_NAMES],
): Target {
  return {
    name,
    file: `/peers/${name}.json`,
    scenarios,
    cwd: "/peers",
    command: ["./operator", "--kubeconfig={kubeconfig}", "--v8-flags={v8Flags}", ...extra],
    env: {},
    defaultV8Flags,
    crds: ["/peers/crd.yaml"],
    resource: { group: "g", version: "v1", plural: "things", kind: "Thing", namespaced: true },
    object: {},
    update: {},
    ready: { path: "status.ready", equals: "True" },
    readyzPath: "/readyz",
    metricsPath: "/metrics",
  };
}

function run(targetName: string, group: string, figures: Figures, variant = "default"): Run {
  const [scenario, size] = group.split("-");
  return {
    id: `${group} ${targetName} ${variant}`,
    group,
    target: targetName,
    scenario: scenario!,
    size: Number(size ?? 0),
    variant: { name: variant, v8Flags: [] },
    command: [],
    startedAt: "2026-01-01T00:00:00.000Z",
    durationMs: 0,
    phases: [],
    samples: [],
    scrapes: [],
    objects: [],
    figures,
  };
}

function record(name: string): TargetRecord {
  return { name, file: `peers/${name}.json`, replicas: 0, description: `the ${name} peer` };
}

function sideBySide(runs: Run[]): Results {
  return resultsOf(runs, [...new Set(runs.map((r) => r.target!))].map(record));
}

/** The cells of a Markdown table's rows. */
