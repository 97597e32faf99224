/**
 * `report.md`: what ran where (machine, versions, options), one table per
 * scenario group with a row per variant (or, with several targets, a row per
 * target and each figure's ratio against the first target; under a restart
 * table, when each run sent its edit; under a failover table, each run's
 * kill, edit and standby; under a backlog or edited table, what awaited the
 * operator and when each run sent its edit; and the targets left out), the
 * charts, the trade-off between variants when a target ran several, and the
 * comparison with earlier results when asked for. Pure: everything comes
 * from the results' summary (summary.ts: no raw sample is read) and the
 * chart list.
 *
 * @example
 * ```ts ignore
 * import { renderReport } from "./report.ts";
 * const markdown = renderReport(results, charts);
 * ```
 *
 * @module
 */
import { figureSpec, formatFigure, SCENARIO_COLUMNS } from "./figure_catalog.ts";
import type { Chart } from "./charts.ts";
import {
  type BackgroundRecord,
  leftOutNote,
  type ScenarioName,
  type TargetRecord,
} from "../measure/results.ts";
import type { RunSummary, Summary } from "./summary.ts";
import { type Series, seriesOf } from "./series.ts";

const GIB = 2 ** 30;
const MIB = 2 ** 20;
const KIB = 2 ** 10;

/** Options of {@link renderReport}. */
export interface ReportOptions {
  /** Markdown of compare mode, appended as its own section. */
  comparison?: string;
}

/** The whole report. */
export function renderReport(
  results: Summary,
  charts: readonly Chart[],
  options: ReportOptions = {},
): string {
  const out: string[] = [];
  const { machine, versions, target } = results;
  const series = seriesOf(results);
  const targets = results.targets ?? [target];
  out.push(
    series.sideBySide
      ? `# ${listed(targets.map((t) => t.name))} side by side: resource benchmark`
      : `# ${target.name} resource benchmark`,
    "",
    `Started ${results.startedAt}, finished ${results.finishedAt}.`,
    "",
    `- **Machine**: ${machine.cores} cores (${machine.cpuModel}), ${
      (machine.memoryBytes / GIB).toFixed(1)
    } GiB, ` +
      `${machine.os}, kernel ${machine.kernel}; load ${
        machine.loadAverage.map((l) => l.toFixed(2)).join(" / ")
      } at the start.`,
    `- **Versions**: Deno ${versions.deno} (V8 ${versions.v8}), Kubernetes ${versions.kubernetes}` +
      `${versions.datastore ? ` on ${versions.datastore}` : ""}, ` +
      `kinglet ${versions.kinglet} at ${versions.commit}, target ${versions.target}.`,
    ...(series.sideBySide
      ? [
        `- **Targets**, each run on a control plane of its own, ${target.replicas} replica(s) per ` +
        `object; ratios are against ${target.name}:`,
        ...targets.map(describeTarget),
      ]
      : [
        `- **Target**: ${target.name} (\`${target.file}\`), ${target.replicas} replica(s) per object.`,
      ]),
    ...describeBackground(results),
    `- **Options**: ${describeOptions(results.options)}.`,
    "",
    "Every figure is explained in bench/README.md; lower is better for all of them. " +
      "`–` means not measured (the phase did not happen or the target does not export the metric).",
  );
  const groups = Map.groupBy(results.runs, (run) => run.group);
  for (const [group, runs] of groups) {
    out.push(
      "",
      `## ${group}`,
      "",
      ...scenarioTable(runs, series),
      ...restartEdits(runs, series),
      ...failoverEdits(runs, series),
      ...catchUpEdits(runs, series),
      ...leftOut(runs, targets),
      ...failures(runs),
    );
    const pictures = charts.filter((c) => c.group === group);
    if (pictures.length > 0) {
      out.push("", ...pictures.map((c) => `![${group}: ${c.title}](${c.file})`));
    }
  }
  const tradeoff = tradeoffSection(groups, series);
  if (tradeoff.length > 0) out.push("", "## Trade-off between variants", "", ...tradeoff);
  if (options.comparison) out.push("", "## Comparison", "", options.comparison.trimEnd());
  return out.join("\n") + "\n";
}

/**
 * The table of one group: a row per run named by `series`, a column per
 * figure of its scenario. Side by side, every other target's figure is
 * followed by its ratio to the reference target's, e.g. `46.3 (0.62×)`.
 */
export function scenarioTable(runs: readonly RunSummary[], series: Series): string[] {
  const keys = SCENARIO_COLUMNS[runs[0]!.scenario as ScenarioName] ?? [];
  const specs = keys.map(figureSpec);
  const reference = series.sideBySide
    ? runs.find((run) => series.targetOf(run) === series.reference)
    : undefined;
  const rows = runs.map((run) => {
    const cells = specs.map((spec) => {
      const value = spec.get(run.figures);
      const base = reference && reference !== run ? spec.get(reference.figures) : undefined;
      const ratio = base && value !== undefined ? ` (${(value / base).toFixed(2)}×)` : "";
      return `${formatFigure(spec, value)}${ratio}`;
    });
    return `| ${series.name(run)}${run.error ? " (failed)" : ""} | ${cells.join(" | ")} |`;
  });
  return [
    `| ${series.legend} | ${specs.map((s) => s.label).join(" | ")} |`,
    `| --- | ${specs.map(() => "---:").join(" | ")} |`,
    ...rows,
  ];
}

/**
 * Under a restart table: how many objects the restarted operator found and
 * when each run sent its edit, which waits for `/readyz` and so differs
 * between targets.
 */
function restartEdits(runs: readonly RunSummary[], series: Series): string[] {
  const edits = runs.flatMap((run) => {
    const restart = run.figures.restart;
    if (restart?.editSentMs === undefined) return [];
    const sent = Math.round(restart.editSentMs).toLocaleString("en-US");
    return [`- ${series.name(run)}: \`${restart.edited}\` edited ${sent} ms after the restart.`];
  });
  if (edits.length === 0) return [];
  return [
    "",
    `${runs[0]!.size.toLocaleString("en-US")} objects, all Ready, awaited the restarted ` +
    "operator; the last by name was edited once `/readyz` had answered 200 and 1 s had passed:",
    "",
    ...edits,
  ];
}

/**
 * Under a failover table: what each run killed, when it sent its edit and
 * what its successor held as a standby.
 */
function failoverEdits(runs: readonly RunSummary[], series: Series): string[] {
  const lines = runs.flatMap((run) => {
    const failover = run.figures.failover;
    if (failover === undefined) return [];
    const sent = failover.editSentMs === undefined
      ? "never edited"
      : `\`${failover.edited}\` edited ${ms(failover.editSentMs)} ms after the kill`;
    const standby = failover.standbyRssBytes === undefined
      ? ""
      : `; ${failover.successor} held ${
        (failover.standbyRssBytes / MIB).toFixed(1)
      } MiB as a standby`;
    return [`- ${series.name(run)}: ${failover.killed} killed, ${sent}${standby}.`];
  });
  if (lines.length === 0) return [];
  return [
    "",
    `Two candidates ran with leader election while ${runs[0]!.size.toLocaleString("en-US")} ` +
    "objects were made Ready; the Lease holder was killed (SIGKILL) and, about 1 s later, the " +
    "last object by name was edited. Every figure but takeover is the successor's:",
    "",
    ...lines,
  ];
}

/**
 * Under a backlog or edited table: what awaited the spawned operator, and
 * when each run sent its edit, which waits for `/readyz` and so differs
 * between targets; the table's times count from the spawn and include it.
 */
function catchUpEdits(runs: readonly RunSummary[], series: Series): string[] {
  const lines = runs.flatMap((run) => {
    const catchUp = run.figures.catchUp;
    if (catchUp?.editSentMs === undefined) return [];
    return [
      `- ${series.name(run)}: \`${catchUp.edited}\` edited ${
        ms(catchUp.editSentMs)
      } ms after the spawn.`,
    ];
  });
  if (lines.length === 0) return [];
  const size = runs[0]!.size;
  const count = size.toLocaleString("en-US");
  const awaited = runs[0]!.scenario === "backlog"
    ? `${count} objects were created while no operator ran (their children absent), then the ` +
      "operator was spawned"
    : `${count} objects were made Ready, the operator stopped, ` +
      `${(size - 1).toLocaleString("en-US")} of them updated, then the operator spawned again`;
  return [
    "",
    `${awaited}; the last object by name was edited once \`/readyz\` had answered 200 and 1 s ` +
    "had passed:",
    "",
    ...lines,
  ];
}

/** A line for each target of the results that does not run the group's scenario. */
function leftOut(runs: readonly RunSummary[], targets: readonly TargetRecord[]): string[] {
  const scenario = runs[0]!.scenario;
  const lines = targets.flatMap((t) => {
    const note = t.scenarios && leftOutNote(t.name, t.scenarios, scenario);
    return note === undefined ? [] : [`- ${note}.`];
  });
  return lines.length === 0 ? [] : ["", ...lines];
}

function ms(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

function failures(runs: readonly RunSummary[]): string[] {
  const failed = runs.filter((r) => r.error);
  if (failed.length === 0) return [];
  return ["", ...failed.map((r) => `- **${r.id} failed**: ${r.error!.split("\n")[0]}`)];
}

/**
 * For each group in which a target ran several variants: peak RSS, CPU and
 * p99 latency of each variant relative to the target's first, so the memory
 * a flag saves can be weighed against the CPU and latency it costs.
 */
function tradeoffSection(groups: Map<string, RunSummary[]>, series: Series): string[] {
  const lines: string[] = [];
  const keys = ["rssPeak", "rssSteady", "cpu", "cpuPer1000", "createReadyP99", "reconcileP99"];
  const specs = keys.map(figureSpec);
  for (const [group, members] of groups) {
    for (const runs of Map.groupBy(members, (run) => series.targetOf(run)).values()) {
      if (runs.length < 2) continue;
      const base = runs[0]!;
      lines.push(
        `### ${group} (relative to ${series.name(base)})`,
        "",
        `| ${series.legend} | V8 flags | concurrency | ${specs.map((s) => s.label).join(" | ")} |`,
        `| --- | --- | ---: | ${specs.map(() => "---:").join(" | ")} |`,
      );
      for (const run of runs) {
        const cells = specs.map((spec) => {
          const [a, b] = [spec.get(base.figures), spec.get(run.figures)];
          if (b === undefined) return "–";
          const ratio = a ? ` (${(b / a).toFixed(2)}×)` : "";
          return `${formatFigure(spec, b)}${ratio}`;
        });
        const flags = run.variant.v8Flags.length ? `\`${run.variant.v8Flags.join(" ")}\`` : "none";
        lines.push(
          `| ${series.name(run)}${run.error ? " (failed)" : ""} | ${flags} | ${
            run.variant.concurrency ?? "default"
          } | ${cells.join(" | ")} |`,
        );
      }
      lines.push("");
    }
  }
  return lines;
}

function describeTarget(target: TargetRecord): string {
  const about = target.description ? `: ${target.description}` : "";
  return `  - ${target.name} (\`${target.file}\`)${about}`;
}

/**
 * The line on what each run's cluster held before its operator started;
 * none for results written before there was a choice.
 */
export function describeBackground(results: Summary): string[] {
  const background: BackgroundRecord | undefined = results.background;
  if (background === undefined) {
    return results.options.background === "none"
      ? ["- **Background**: none: the cluster held nothing but the run's own objects."]
      : [];
  }
  const kinds = background.kinds.filter((k) => k.kind !== "Namespace").map((k) =>
    `${k.count} ${k.kind}s (${size(k.bytes)}${
      k.kind === "Deployment" ? `, ${background.replicas} replica(s) each` : ""
    })`
  );
  const fills = results.runs.flatMap((run) =>
    run.background ? [run.background.createMs + run.background.availableMs] : []
  ).sort((a, b) => a - b);
  const median = fills[Math.floor((fills.length - 1) / 2)];
  return [
    `- **Background**: \`${background.name}\`, created before each operator started, the same ` +
    `objects for every run (seed ${background.seed}), in ${background.namespaces.length} ` +
    `namespaces (${background.namespaces.join(", ")}) at ${background.ratePerSecond} per ` +
    `second: ${listed(kinds)}, sizes as JSON sent` +
    (median === undefined ? "." : `; created and available in ${(median / 1000).toFixed(1)} s ` +
      `(median of ${fills.length} run(s)).`),
  ];
}

function size(bytes: number): string {
  return bytes >= MIB ? `${(bytes / MIB).toFixed(1)} MiB` : `${(bytes / KIB).toFixed(0)} KiB`;
}

/** `a`, `a and b`, `a, b and c`. */
function listed(names: readonly string[]): string {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

function describeOptions(options: Record<string, unknown>): string {
  return Object.entries(options)
    .filter(([key]) => key !== "help" && key !== "variants")
    .map(([key, value]) => `${key} ${Array.isArray(value) ? value.join(",") : String(value)}`)
    .join(", ");
}
