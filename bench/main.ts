/**
 * `deno task bench`: the resource benchmark harness, its one entry point.
 * Starts a local control plane per run, installs the target's CRDs, runs the
 * operator as its users do, drives the scenarios, and writes the raw
 * `results.json` and logs, then `report.md`, SVG charts and `summary.json`
 * (see harness/options.ts' `outputFolders`: a run kept with `--name` puts
 * the raw results under the git-ignored `bench/results/<name>/` and the rest
 * under `bench/latest/<name>/`). Several targets run side by side in one
 * invocation, reported in one table per scenario. See bench/README.md.
 *
 * ```sh
 * deno task bench --quick                       # CI size: a few minutes
 * deno task bench                               # the full benchmark: 100, 1,000, 5,000 objects
 * deno task bench --target kinglet,../shared/peers/kube-rs-webapp/target.json --scenarios idle,scale
 * deno task bench --v8-flags-sets matrix --scenarios idle,scale --sizes 1000 --name flags-2
 * deno task bench --compare bench/latest/<earlier>/summary.json
 * ```
 *
 * The folders beside this file: `harness/` starts and drives the runs
 * (options, targets, control plane, operator process, load, scenarios),
 * `measure/` reads the operator and computes the figures (samplers,
 * scrapers, recorder, readiness, the results' schema), `report/` writes what
 * a run leaves (report, charts, summary, comparison), and `probes/` holds
 * the programs run by hand against one operator or one store (CPU and
 * memory profiles, cache and store memory). `targets/` holds the target
 * files and the programs they build.
 *
 * Exit codes: 0 when every run succeeded, 1 when a run failed (its error is
 * in the report), 2 on a usage error, 130 when interrupted.
 *
 * @module
 */
import { join, relative, resolve } from "node:path";
import { UsageError } from "../lib/cli/flags.ts";
import { BACKGROUNDS, describeBackground } from "./harness/background.ts";
import {
  type BenchOptions,
  type OutputFolders,
  outputFolders,
  parseOptions,
  usage,
} from "./harness/options.ts";
import { Progress } from "./harness/progress.ts";
import { planRuns, runAll } from "./harness/runner.ts";
import { buildTarget, loadTarget, type Target } from "./harness/target.ts";
import { describeMachine, describeVersions } from "./measure/environment.ts";
import { hasProcfs } from "./measure/process_sampler.ts";
import {
  leftOutNote,
  readResults,
  type Results,
  RESULTS_FORMAT,
  type Run,
  type TargetRecord,
} from "./measure/results.ts";
import { writeCharts } from "./report/charts.ts";
import { compareRuns, comparisonMarkdown } from "./report/compare.ts";
import { renderReport } from "./report/report.ts";
import { readSummary, summarize, SUMMARY_FILE, summaryText } from "./report/summary.ts";

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
  const folders = outputFolders(options);
  let results: Results;
  let interrupted = false;
  if (options.from !== undefined) {
    results = await readResults(options.from);
    if (options.out !== undefined && resolve(options.out) !== resolve(folders.raw)) {
      await Deno.mkdir(options.out, { recursive: true });
      await Deno.copyFile(options.from, join(options.out, "results.json"));
    }
  } else {
    if (options.name !== undefined && await taken(folders)) {
      progress.log(
        `a run named ${options.name} is kept already (${folders.report}, ${folders.raw}): ` +
          "choose another --name, or remove them",
      );
      return 2;
    }
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
      const outcome = await benchmark(options, folders.raw, progress, abort.signal);
      if (typeof outcome === "number") return outcome;
      results = outcome;
    } finally {
      Deno.removeSignalListener("SIGINT", onSignal);
      Deno.removeSignalListener("SIGTERM", onSignal);
    }
  }
  const report = folders.report;
  await Deno.mkdir(report, { recursive: true });
  const charts = await writeCharts(results, report);
  const summary = summarize(results);
  let comparison: string | undefined;
  if (options.compare !== undefined) {
    const before = await readSummary(options.compare);
    comparison = comparisonMarkdown(compareRuns(before.runs, summary.runs), options.compare);
    print(`\n${comparison}`);
  }
  await Deno.writeTextFile(
    join(report, "report.md"),
    renderReport(summary, charts, { ...(comparison && { comparison }) }),
  );
  await Deno.writeTextFile(join(report, SUMMARY_FILE), summaryText(summary));
  const failed = results.runs.filter((run) => run.error);
  print(
    `\n${results.runs.length} runs, ${failed.length} failed: ${join(report, "report.md")}, ` +
      `${charts.length} charts and ${join(report, SUMMARY_FILE)}; every sample in ` +
      `${join(folders.raw, "results.json")}\n`,
  );
  if (interrupted) return 130;
  return failed.length > 0 ? 1 : 0;
}

/** Whether a kept run's folders exist already: a new run of that name would overwrite it. */
async function taken(folders: OutputFolders): Promise<boolean> {
  for (const folder of [folders.raw, folders.report]) {
    if (await Deno.stat(folder).then(() => true, () => false)) return true;
  }
  return false;
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
  for (const scenario of options.scenarios) {
    for (const target of targets) {
      const note = leftOutNote(target.name, target.scenarios, scenario);
      if (note !== undefined) progress.log(note);
    }
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
