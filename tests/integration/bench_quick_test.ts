/**
 * `deno task bench --quick` end to end against the kinglet target: it starts
 * its own control planes, runs the operator as a process through every
 * scenario, and must leave a `results.json` that matches the schema and
 * agrees with itself, a `report.md` with a well-formed table per scenario,
 * SVG charts that are well-formed XML, and a `summary.json` with the
 * figures of `results.json` and none of its samples; and it measures an author's
 * operator of a cluster-scoped kind. Takes about two minutes.
 *
 *   deno test -A tests/integration/bench_quick_test.ts
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { figureSpec, formatFigure, SCENARIO_COLUMNS } from "../../bench/report/figure_catalog.ts";
import { percentiles } from "../../bench/measure/figures.ts";
import { readSummary } from "../../bench/report/summary.ts";
import { denoFlags, grantsFromEnv, kingletEnv, V8_FLAGS } from "../../hack/_permissions.ts";
import { BUNDLE_ENTRY } from "../../hack/build.ts";
import {
  parseResults,
  type Results,
  type Run,
  type ScenarioName,
} from "../../bench/measure/results.ts";
import { stringify } from "yaml";
import { z } from "zod";
import { defineKind } from "../../lib/crd/mod.ts";
import { SITES } from "../fixtures/cluster_scoped_operator.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const SIZE = 50;
const BUNDLE = relative(REPO, BUNDLE_ENTRY);

async function bench(args: string[]): Promise<{ code: number; stdout: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "bench", ...args],
    cwd: REPO,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).output();
  return { code: output.code, stdout: new TextDecoder().decode(output.stdout) };
}

Deno.test("the kinglet target builds the bundle and runs it with exactly the flags and environment of `deno task start`", async () => {
  const target = JSON.parse(
    await Deno.readTextFile(join(REPO, "bench/targets/kinglet.json")),
  ) as {
    build: string[];
    command: string[];
    env: Record<string, string>;
    defaultV8Flags: string[];
  };
  assert.deepEqual(target.build, ["{deno}", "task", "build"]);
  // As a user widens the start task's grants to read a kubeconfig of their own.
  const flags = denoFlags(grantsFromEnv({ KINGLET_ALLOW_READ: "{kubeconfig}" }))
    .map((flag) => (flag.startsWith("--v8-flags=") ? "--v8-flags={v8Flags}" : flag));
  const expected = ["{deno}", "run", ...flags, BUNDLE, "run", "--kubeconfig={kubeconfig}"];
  assert.deepEqual(target.command.slice(0, expected.length), expected);
  assert.deepEqual(target.defaultV8Flags, V8_FLAGS);
  assert.deepEqual(target.env, kingletEnv({}));
});

Deno.test("bench --quick writes results, a report, charts and a summary that agree with each other", async () => {
  const out = await Deno.makeTempDir({ prefix: "kinglet-bench-quick-" });
  const { code, stdout } = await bench(["--quick", "--out", out]);
  assert.equal(code, 0, `bench --quick exited with ${code}; outputs kept in ${out}:\n${stdout}`);

  const results = parseResults(await Deno.readTextFile(join(out, "results.json")));
  checkResults(results);
  const report = await Deno.readTextFile(join(out, "report.md"));
  const charts = checkReport(report, results);
  assert.ok(charts.length >= results.runs.length, `only ${charts.length} charts in the report`);
  for (const file of charts) {
    const svg = await Deno.readTextFile(join(out, file));
    assert.equal(wellFormedRoot(svg, file), "svg");
  }
  const summaryText = await Deno.readTextFile(join(out, "summary.json"));
  assert.ok(!summaryText.includes('"samples"'), "summary.json holds no samples");
  const summary = await readSummary(join(out, "summary.json"));
  assert.deepEqual(summary.runs.map((run) => run.figures), results.runs.map((run) => run.figures));

  const again = await bench([
    "--from",
    join(out, "results.json"),
    "--compare",
    join(out, "summary.json"),
  ]);
  assert.equal(again.code, 0);
  const ratios = [...again.stdout.matchAll(/\| ([\d.]+)× \|$/gm)].map((m) => Number(m[1]));
  assert.ok(ratios.length > 10, `compare printed ${ratios.length} ratios:\n${again.stdout}`);
  assert.ok(ratios.every((r) => r === 1), "results compared with themselves give 1.00×");
  await Deno.remove(out, { recursive: true });
});

Deno.test("the Deno floor runs beside kinglet in the idle scenario only", async () => {
  const out = await Deno.makeTempDir({ prefix: "kinglet-bench-floor-" });
  const { code, stdout } = await bench([
    "--quick",
    "--scenarios",
    "idle,scale",
    "--sizes",
    "10",
    "--target",
    "kinglet,deno-floor",
    "--out",
    out,
  ]);
  assert.equal(code, 0, `bench exited with ${code}; outputs kept in ${out}:\n${stdout}`);
  const results = parseResults(await Deno.readTextFile(join(out, "results.json")));
  assert.deepEqual(results.runs.map((r) => [r.group, r.target]), [
    ["idle", "kinglet"],
    ["idle", "deno-floor"],
    ["scale-10", "kinglet"],
  ]);
  const [kinglet, floor] = results.runs as [Run, Run];
  for (const run of [kinglet, floor]) assert.equal(run.error, undefined, `${run.id}: ${run.error}`);
  assert.ok(floor.command.includes("dist/floor/floor.js"), floor.command.join(" "));
  assert.ok(floor.samples.length >= 3 && floor.figures.rssIdleBytes! > 0, floor.id);
  assert.equal(floor.figures.reconciles, undefined, "the floor exports no reconcile metric");
  const report = await Deno.readTextFile(join(out, "report.md"));
  assert.match(report, /\| deno-floor \| [\d.]+ \([\d.]+×\) \|/);
  await Deno.remove(out, { recursive: true });
});

Deno.test("the harness measures an author's operator of a cluster-scoped kind, API calls included", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-bench-cluster-scoped-" });
  const sites = defineKind({
    group: SITES.group,
    version: SITES.version,
    kind: SITES.kind,
    scope: "Cluster",
    spec: z.object({ note: z.string() }),
    status: z.object({ phase: z.string(), observedGeneration: z.int() }).partial(),
  });
  const crd = join(dir, "sites.yaml");
  await Deno.writeTextFile(crd, stringify(sites.crd()));
  const target = join(dir, "site-operator.json");
  await Deno.writeTextFile(
    target,
    JSON.stringify({
      name: "site-operator",
      cwd: REPO,
      command: [
        "env",
        "KUBECONFIG={kubeconfig}",
        "METRICS_ADDRESS=127.0.0.1:{metricsPort}",
        "HEALTH_ADDRESS=127.0.0.1:{probePort}",
        "{deno}",
        "run",
        "--allow-all",
        "tests/fixtures/cluster_scoped_operator.ts",
      ],
      crds: [crd],
      plural: SITES.plural,
      // The run's namespace in the template is dropped for a cluster-scoped kind.
      object: {
        apiVersion: sites.apiVersion,
        kind: SITES.kind,
        metadata: { name: "{name}", namespace: "{namespace}" },
        spec: { note: "{namespace}/{index}" },
      },
      update: { spec: { note: "updated" } },
      ready: {
        path: "status.phase",
        equals: "Ready",
        observedGenerationPath: "status.observedGeneration",
      },
    }),
  );
  const size = 10;
  const out = join(dir, "out");
  const args = ["--quick", "--scenarios", "scale", "--sizes", `${size}`, "--target", target];
  const { code, stdout } = await bench([...args, "--out", out]);
  assert.equal(code, 0, `bench exited with ${code}; outputs kept in ${dir}:\n${stdout}`);
  const [run] = parseResults(await Deno.readTextFile(join(out, "results.json"))).runs as [Run];
  assert.equal(run.error, undefined, `${run.id}: ${run.error}`);
  assert.equal(run.objects.length, size);
  assert.ok(run.objects.every((o) => o.readyMs! > o.createdMs), "every Site Ready");
  assert.ok(run.objects.every((o) => o.goneMs !== undefined), "every Site gone");
  assert.ok(run.figures.reconciles! >= size, `${run.figures.reconciles} reconciles`);
  assert.ok(run.figures.apiCallsPerObject! > 0, "the author's Manager counts its API calls");
  await Deno.remove(dir, { recursive: true });
});

function checkResults(results: Results): void {
  assert.ok(results.machine.cores >= 1);
  assert.match(results.versions.kubernetes, /^v1\.\d+\.\d+/);
  assert.equal(results.versions.deno, Deno.version.deno);
  assert.deepEqual(results.runs.map((r) => r.group), [
    "idle",
    `scale-${SIZE}`,
    `budget-${SIZE}`,
    `restart-${SIZE}`,
  ]);
  for (const run of results.runs) {
    assert.equal(run.error, undefined, `${run.id} failed: ${run.error}`);
    assert.ok(run.samples.length >= 3, `${run.id} has ${run.samples.length} samples`);
    assert.ok(run.scrapes.length >= 2, `${run.id} has ${run.scrapes.length} scrapes`);
    assert.ok(run.samples.every((s) => s.rssBytes > 0 && s.hwmBytes >= s.rssBytes));
    assert.ok(run.command.includes(BUNDLE), run.command.join(" "));
    // A restart run's figures are the restarted process' (1), every other run's the only one's.
    const measured = run.scenario === "restart" ? 1 : 0;
    const peak = Math.max(
      ...run.samples.filter((s) => s.process === measured).map((s) => s.hwmBytes),
    );
    assert.equal(run.figures.rssPeakBytes, peak, `${run.id}: peak RSS is the highest VmHWM`);
    if (run.scenario === "restart") continue; // no idle phase: the restarted one starts among N
    assert.ok(run.figures.rssIdleBytes! > 0 && run.figures.rssIdleBytes! <= peak);
  }
  const [, scale, budget, restart] = results.runs as [Run, Run, Run, Run];
  for (const run of [scale, budget]) {
    assert.equal(run.objects.length, SIZE);
    assert.ok(run.objects.every((o) => o.readyMs! > o.createdMs), `${run.id}: every object Ready`);
    assert.ok(run.objects.every((o) => o.goneMs !== undefined), `${run.id}: every object gone`);
    const updated = run.objects.filter((o) => o.updatedMs !== undefined);
    assert.equal(updated.length, SIZE / 10);
    assert.ok(updated.every((o) => o.updateReadyMs! > o.updatedMs!));
    const latencies = run.objects.map((o) => o.readyMs! - o.createdMs);
    assert.deepEqual(run.figures.createReady, percentiles(latencies));
    assert.ok(run.figures.reconciles! >= SIZE, `${run.id}: ${run.figures.reconciles} reconciles`);
    assert.ok(run.figures.apiCallsPerObject! > 0);
    assert.ok(run.figures.reconcileP99Seconds! > 0);
    assert.ok(run.figures.cpuSecondsPer1000Reconciles! > 0);
    assert.deepEqual(
      run.phases.map((p) => p.name),
      ["startup", "baseline", "create", "ready", "hold", "update", "delete"],
    );
  }
  assert.equal(budget.cacheMaxObjects, SIZE / 5);
  assert.ok(budget.command.includes(`--cache-max-objects=${SIZE / 5}`), budget.command.join(" "));
  assert.ok(!scale.command.some((arg) => arg.startsWith("--cache-max-objects")));
  const r = restart.figures.restart!;
  assert.deepEqual(
    restart.phases.map((p) => p.name),
    ["startup", "create", "ready", "stop", "restart"],
  );
  assert.equal(restart.objects.length, SIZE);
  assert.ok(
    restart.objects.every((o) => o.readyMs! < r.spawnedMs),
    "every object was Ready before the restart",
  );
  assert.equal(r.edited, restart.objects.at(-1)!.name);
  assert.ok(r.editSentMs! >= Math.max(1_000, r.readyzMs), JSON.stringify(r));
  assert.ok(r.editObservedMs! > 0, JSON.stringify(r));
  assert.ok(r.firstReconcileMs! > 0 && r.reconciledMs! >= r.firstReconcileMs!, JSON.stringify(r));
  assert.ok(restart.figures.reconciles! >= SIZE + 1, `${restart.figures.reconciles} reconciles`);
  assert.ok(restart.figures.apiCalls! > 0);
  assert.ok(restart.figures.cpuSeconds! > 0);
  assert.equal(restart.figures.createReady, undefined, "its objects precede the restarted process");
  assert.deepEqual([...new Set(restart.samples.map((s) => s.process))], [0, 1]);
  assert.ok(
    restart.samples.every((s) => (s.process === 1) === (s.t >= r.spawnedMs)),
    "the first process is sampled before the restart, the second after it",
  );
  const phase = restart.phases.find((p) => p.name === "restart")!;
  assert.ok(
    phase.endMs - r.spawnedMs >= Math.max(r.editSentMs! + r.editObservedMs!, r.reconciledMs!) - 1,
    "the restart phase ends once the edit is observed and the count reached",
  );
}

/** Checks one table per group whose cells match the figures; returns the charts linked. */
function checkReport(report: string, results: Results): string[] {
  for (const run of results.runs) {
    const section = report.split(`\n## ${run.group}\n`)[1]?.split("\n## ")[0];
    assert.ok(section, `no section for ${run.group}`);
    const rows = section.split("\n").filter((line) => line.startsWith("|"));
    const cells = rows.map((row) => row.slice(1, -1).split("|").map((c) => c.trim()));
    const header = cells[0]!;
    assert.ok(cells.length >= 3, `${run.group}: header, separator and a row`);
    assert.ok(cells.every((row) => row.length === header.length), `${run.group}: ragged table`);
    assert.ok(cells[1]!.every((c) => /^-{3}:?$/.test(c)), `${run.group}: separator row`);
    const row = cells.find((r) => r[0] === run.variant.name);
    assert.ok(row, `${run.group}: no row for ${run.variant.name}`);
    const keys = SCENARIO_COLUMNS[run.scenario as ScenarioName];
    keys.forEach((key, i) => {
      const spec = figureSpec(key);
      assert.equal(header[i + 1], spec.label);
      assert.equal(row[i + 1], formatFigure(spec, spec.get(run.figures)), `${run.id}: ${key}`);
    });
  }
  return [...report.matchAll(/!\[[^\]]*\]\(([^)]+\.svg)\)/g)].map((m) => m[1]!);
}

/**
 * Checks that `xml` is well-formed (one root, tags nested and closed,
 * attributes quoted, entities complete) and returns the root's name.
 */
function wellFormedRoot(xml: string, file: string): string {
  const text = xml.replace(/^<\?xml[^?]*\?>/, "").trim();
  const token =
    /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>|([^<]+)|(<)/g;
  const open: string[] = [];
  let root: string | undefined;
  for (const m of text.matchAll(token)) {
    const [whole, closing, name, , selfClosing, chars, stray] = m;
    assert.equal(
      stray,
      undefined,
      `${file}: stray '<' at ${m.index}: ${text.slice(m.index, m.index + 40)}`,
    );
    if (chars !== undefined) {
      assert.ok(open.length > 0 || chars.trim() === "", `${file}: text outside the root`);
      const bad = /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[\da-fA-F]+);)/.exec(chars);
      assert.equal(bad, null, `${file}: bare '&' in text`);
      continue;
    }
    if (name === undefined) continue;
    if (closing) {
      assert.equal(open.pop(), name, `${file}: </${name}> closes the wrong element`);
    } else {
      if (open.length === 0) {
        assert.equal(root, undefined, `${file}: a second root <${name}>`);
        root = name;
      }
      if (!selfClosing) open.push(name);
    }
    assert.ok(
      !/&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[\da-fA-F]+);)/.test(whole),
      `${file}: bare '&' in <${name}>`,
    );
  }
  assert.deepEqual(open, [], `${file}: unclosed elements`);
  assert.ok(root, `${file}: no root element`);
  return root;
}
