/**
 * `deno task bench`: the resource benchmark harness. Starts a local control
 * plane per run, installs the target's CRDs, runs the operator as its users
 * do, drives the scenarios, and writes `results.json`, `report.md` and SVG
 * charts into the output folder. Several targets run side by side in one
 * invocation, reported in one table per scenario. See bench/README.md.
 *
 * ```sh
 * deno task bench --quick                       # CI size: a few minutes
 * deno task bench                               # the full benchmark: 100, 1,000, 5,000 objects
 * deno task bench --target kinglet,../shared/peers/kube-rs-webapp/target.json --scenarios idle,scale
 * deno task bench --v8-flags-sets matrix --scenarios idle,scale --sizes 1000
 * deno task bench --compare bench/results/<earlier>/results.json
 * ```
 *
 * Exit codes: 0 when every run succeeded, 1 when a run failed (its error is
 * in the report), 2 on a usage error, 130 when interrupted.
 *
 * @module
 */
import { dirname, join, relative, resolve } from "node:path";
import { UsageError } from "../lib/cli/flags.ts";
import { BACKGROUNDS, describeBackground } from "./background.ts";
import { writeCharts } from "./charts.ts";
import { compareRuns, comparisonMarkdown } from "./compare.ts";
import { describeMachine, describeVersions } from "./environment.ts";
import { type BenchOptions, parseOptions, usage } from "./options.ts";
import { hasProcfs } from "./process_sampler.ts";
import { Progress } from "./progress.ts";
import { renderReport } from "./report.ts";
import {
  readResults,
  type Results,
  RESULTS_FORMAT,
  type Run,
  type TargetRecord,
} from "./results.ts";
import { planRuns, runAll } from "./runner.ts";
import { buildTarget, loadTarget, type Target } from "./target.ts";

const encoder = new TextEncoder();
const print = (text: string) => Deno.stdout.writeSync(encoder.encode(text));

async function main(args: string[]): Promise<number> {
  let options: BenchOptions;
  try {
    options = parseOptions(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    Deno.stderr.writeSync(encoder.encode(`bench: ${error.message} (see --help)\n`));
    return 2;
  }
  if (options.help) {
    print(`${usage()}\n`);
    return 0;
  }
  const progress = new Progress();
  let results: Results;
  let outDir: string;
  let interrupted = false;
  if (options.from !== undefined) {
    results = await readResults(options.from);
    outDir = options.out ?? dirname(options.from);
    if (resolve(outDir) !== resolve(dirname(options.from))) {
      await Deno.mkdir(outDir, { recursive: true });
      await Deno.copyFile(options.from, join(outDir, "results.json"));
    }
  } else {
    outDir = options.out ?? `bench/results/${new Date().toISOString().replace(/[:.]/g, "-")}`;
    const abort = new AbortController();
    const onSignal = () => {
      if (interrupted) Deno.exit(130);
      interrupted = true;
      progress.log(
        "interrupted: stopping the operator and the control plane (again to quit at once)",
      );
      abort.abort(new Error("interrupted"));
    };
    Deno.addSignalListener("SIGINT", onSignal);
    Deno.addSignalListener("SIGTERM", onSignal);
    try {
      const outcome = await benchmark(options, outDir, progress, abort.signal);
      if (typeof outcome === "number") return outcome;
      results = outcome;
    } finally {
      Deno.removeSignalListener("SIGINT", onSignal);
      Deno.removeSignalListener("SIGTERM", onSignal);
    }
  }
  await Deno.mkdir(outDir, { recursive: true });
  const charts = await writeCharts(results, outDir);
  let comparison: string | undefined;
  if (options.compare !== undefined) {
    const before = await readResults(options.compare);
    comparison = comparisonMarkdown(compareRuns(before.runs, results.runs), options.compare);
    print(`\n${comparison}`);
  }
  await Deno.writeTextFile(
    join(outDir, "report.md"),
    renderReport(results, charts, { ...(comparison && { comparison }) }),
  );
  const failed = results.runs.filter((run) => run.error);
  print(
    `\n${results.runs.length} runs, ${failed.length} failed: ${join(outDir, "report.md")}, ` +
      `${join(outDir, "results.json")} and ${charts.length} charts\n`,
  );
  if (interrupted) return 130;
  return failed.length > 0 ? 1 : 0;
}

/** Runs every planned run, saving `results.json` after each; a number is an exit code. */
async function benchmark(
  options: BenchOptions,
  outDir: string,
  progress: Progress,
  signal: AbortSignal,
): Promise<Results | number> {
  if (!hasProcfs()) {
    progress.log(
      "the harness reads the operator's memory and CPU from /proc, which this system lacks",
    );
    return 2;
  }
  const targets: Target[] = [];
  for (const nameOrPath of options.targets) targets.push(await loadTarget(nameOrPath));
  const names = targets.map((t) => t.name);
  let plans;
  try {
    plans = planRuns(options, targets);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    progress.log(error.message);
    return 2;
  }
  for (const target of targets) {
    if (!target.build) continue;
    progress.log(`building ${target.name}: ${target.build.join(" ")}`);
    try {
      await buildTarget(target);
    } catch (error) {
      progress.log((error as Error).message);
      return 1;
    }
  }
  await Deno.mkdir(outDir, { recursive: true });
  const machine = await describeMachine();
  const startedAt = new Date().toISOString();
  const runs: Run[] = [];
  let kubernetes = "unknown";
  let datastore = "unknown";
  // Read before the runs: the commit measured is the one checked out when they began.
  const versions = await describeVersions(kubernetes, names.join(", "));
  const records: TargetRecord[] = targets.map((target) => ({
    name: target.name,
    file: relative(Deno.cwd(), target.file),
    replicas: options.replicas,
    ...(target.description !== undefined && { description: target.description }),
    scenarios: [...target.scenarios],
  }));
  const recordedOptions = {
    ...options,
    help: undefined,
    targets: undefined,
    variants: [...new Set(plans.map((p) => p.variant.name))],
    target: records.map((record) => record.file).join(","),
  };
  const backgroundSpec = BACKGROUNDS[options.background];
  const background = backgroundSpec && describeBackground(backgroundSpec);
  const save = async (): Promise<Results> => {
    const results: Results = {
      format: RESULTS_FORMAT,
      startedAt,
      finishedAt: new Date().toISOString(),
      options: JSON.parse(JSON.stringify(recordedOptions)),
      machine,
      versions: { ...versions, kubernetes, datastore },
      target: records[0]!,
      targets: records,
      ...(background && { background }),
      runs,
    };
    await Deno.writeTextFile(join(outDir, "results.json"), JSON.stringify(results));
    return results;
  };
  progress.log(`${plans.length} runs of ${names.join(", ")}; results in ${outDir}`);
  await runAll(plans, { options, progress, outDir, signal }, async (run, cluster) => {
    if (cluster.kubernetes !== "unknown") kubernetes = cluster.kubernetes;
    if (cluster.datastore !== "unknown") datastore = cluster.datastore;
    runs.push(run);
    await save();
  });
  return await save();
}

if (import.meta.main) Deno.exit(await main(Deno.args));
