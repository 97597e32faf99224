import assert from "node:assert/strict";
import { join } from "node:path";
import { outputFolders, parseOptions } from "../../bench/harness/options.ts";
import type { Run } from "../../bench/measure/results.ts";
import { compareRuns } from "../../bench/report/compare.ts";
import { renderReport } from "../../bench/report/report.ts";
import { readSummary, summarize, summaryText } from "../../bench/report/summary.ts";
import { UsageError } from "../../lib/cli/flags.ts";
import { resultsOf, sample } from "./_bench_results.ts";

const kinglet = { name: "kinglet", file: "bench/targets/kinglet.json", replicas: 0 };

function scaleRun(rssPeakMib: number): Run {
  return {
    id: "scale-100 default",
    group: "scale-100",
    scenario: "scale",
    size: 100,
    variant: { name: "default", v8Flags: [] },
    command: ["deno", "run", "dist/bundle/main.js"],
    startedAt: "2026-01-01T00:00:00.000Z",
    durationMs: 60_000,
    phases: [{ name: "create", startMs: 0, endMs: 10_000 }],
    samples: [sample(0, 40, 0), sample(1_000, rssPeakMib, 0.5)],
    scrapes: [{ t: 0, process: 0, series: [{ name: "up", labels: {}, value: 1 }] }],
    objects: [{ name: "bench-0", createdMs: 0, readyMs: 900 }],
    figures: { rssPeakBytes: rssPeakMib * 2 ** 20, apiCalls: 300 },
  };
}

Deno.test("a summary is the results without the raw samples of their runs", () => {
  const results = resultsOf([scaleRun(50)], [kinglet]);
  const summary = summarize(results);
  const [run] = summary.runs;
  assert.equal("samples" in run!, false);
  assert.equal("scrapes" in run!, false);
  assert.equal("objects" in run!, false);
  assert.deepEqual(run!.figures, results.runs[0]!.figures);
  assert.deepEqual(run!.phases, results.runs[0]!.phases);
  assert.deepEqual({ ...summary, runs: [] }, { ...results, runs: [] });
});

Deno.test("the report reads the same from the summary as from the results", () => {
  const results = resultsOf([scaleRun(50)], [kinglet]);
  assert.equal(renderReport(summarize(results), []), renderReport(results, []));
});

Deno.test("compare mode reads an earlier summary.json, or a results.json as one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-bench-summary-" });
  try {
    const before = resultsOf([scaleRun(50)], [kinglet]);
    await Deno.writeTextFile(join(dir, "summary.json"), summaryText(summarize(before)));
    await Deno.writeTextFile(join(dir, "results.json"), JSON.stringify(before));
    const after = summarize(resultsOf([scaleRun(40)], [kinglet]));
    for (const file of ["summary.json", "results.json"]) {
      const earlier = await readSummary(join(dir, file));
      const ratio = compareRuns(earlier.runs, after.runs).ratios.find((r) =>
        r.figure === "rssPeak"
      );
      assert.equal(ratio?.ratio, 0.8, file);
    }
    await Deno.writeTextFile(join(dir, "other.json"), JSON.stringify({ runs: [] }));
    await assert.rejects(readSummary(join(dir, "other.json")), TypeError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a run kept by --name keeps its raw results out of bench/latest", () => {
  assert.deepEqual(outputFolders(parseOptions(["--name", "front-door-15"])), {
    raw: "bench/results/front-door-15",
    report: "bench/latest/front-door-15",
  });
  assert.deepEqual(outputFolders(parseOptions(["--name", "idle-floor/after-abc1234"])), {
    raw: "bench/results/idle-floor/after-abc1234",
    report: "bench/latest/idle-floor/after-abc1234",
  });
  const at = new Date("2026-01-02T03:04:05.678Z");
  assert.deepEqual(outputFolders(parseOptions([]), at), {
    raw: "bench/results/2026-01-02T03-04-05-678Z",
    report: "bench/results/2026-01-02T03-04-05-678Z",
  });
  assert.deepEqual(outputFolders(parseOptions(["--out", "/tmp/b"])), {
    raw: "/tmp/b",
    report: "/tmp/b",
  });
  const from = ["--from", "bench/results/x/results.json"];
  assert.deepEqual(outputFolders(parseOptions([...from, "--name", "x"])), {
    raw: "bench/results/x",
    report: "bench/latest/x",
  });
  assert.deepEqual(outputFolders(parseOptions(from)), {
    raw: "bench/results/x",
    report: "bench/results/x",
  });
});

Deno.test("--name is a folder name under bench/latest, and not given with --out", () => {
  for (const name of ["..", "../x", "a/../b", "a b", "/abs", "a/", ""]) {
    assert.throws(() => parseOptions(["--name", name]), UsageError, name);
  }
  assert.throws(() => parseOptions(["--name", "x", "--out", "/tmp/b"]), UsageError);
  assert.equal(parseOptions(["--name", "side-by-side-v1.30"]).name, "side-by-side-v1.30");
});
