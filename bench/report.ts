/**
 * `report.md`: what ran where (machine, versions, options), one table per
 * scenario group with a row per variant, the charts, the trade-off between
 * variants when there are several, and the comparison with earlier results
 * when asked for. Pure: everything comes from the results and the chart list.
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
import type { Results, Run } from "./results.ts";
import type { ScenarioName } from "./scenarios.ts";

const GIB = 2 ** 30;

/** Options of {@link renderReport}. */
export interface ReportOptions {
  /** Markdown of compare mode, appended as its own section. */
  comparison?: string;
}

/** The whole report. */
export function renderReport(
  results: Results,
  charts: readonly Chart[],
  options: ReportOptions = {},
): string {
  const out: string[] = [];
  const { machine, versions, target } = results;
  out.push(
    `# ${target.name} resource benchmark`,
    "",
    `Started ${results.startedAt}, finished ${results.finishedAt}.`,
    "",
    `- **Machine**: ${machine.cores} cores (${machine.cpuModel}), ${
      (machine.memoryBytes / GIB).toFixed(1)
    } GiB, ` +
      `${machine.os}, kernel ${machine.kernel}; load ${
        machine.loadAverage.map((l) => l.toFixed(2)).join(" / ")
      } at the start.`,
    `- **Versions**: Deno ${versions.deno} (V8 ${versions.v8}), Kubernetes ${versions.kubernetes}, ` +
      `kinglet ${versions.kinglet} at ${versions.commit}, target ${versions.target}.`,
    `- **Target**: ${target.name} (\`${target.file}\`), ${target.replicas} replica(s) per object.`,
    `- **Options**: ${describeOptions(results.options)}.`,
    "",
    "Every figure is explained in bench/README.md; lower is better for all of them. " +
      "`–` means not measured (the phase did not happen or the target does not export the metric).",
  );
  const groups = Map.groupBy(results.runs, (run) => run.group);
  for (const [group, runs] of groups) {
    out.push("", `## ${group}`, "", ...table(runs), ...failures(runs));
    const pictures = charts.filter((c) => c.group === group);
    if (pictures.length > 0) {
      out.push("", ...pictures.map((c) => `![${group}: ${c.title}](${c.file})`));
    }
  }
  const tradeoff = tradeoffSection(groups);
  if (tradeoff.length > 0) out.push("", "## Trade-off between variants", "", ...tradeoff);
  if (options.comparison) out.push("", "## Comparison", "", options.comparison.trimEnd());
  return out.join("\n") + "\n";
}

function table(runs: readonly Run[]): string[] {
  const keys = SCENARIO_COLUMNS[runs[0]!.scenario as ScenarioName] ?? [];
  const specs = keys.map(figureSpec);
  const rows = runs.map((run) => {
    const cells = specs.map((spec) => formatFigure(spec, spec.get(run.figures)));
    return `| ${run.variant.name}${run.error ? " (failed)" : ""} | ${cells.join(" | ")} |`;
  });
  return [
    `| variant | ${specs.map((s) => s.label).join(" | ")} |`,
    `| --- | ${specs.map(() => "---:").join(" | ")} |`,
    ...rows,
  ];
}

function failures(runs: readonly Run[]): string[] {
  const failed = runs.filter((r) => r.error);
  if (failed.length === 0) return [];
  return ["", ...failed.map((r) => `- **${r.id} failed**: ${r.error!.split("\n")[0]}`)];
}

/**
 * For each group with several variants: peak RSS, CPU and p99 latency of
 * each variant relative to the first, so the memory a flag saves can be
 * weighed against the CPU and latency it costs.
 */
function tradeoffSection(groups: Map<string, Run[]>): string[] {
  const lines: string[] = [];
  const keys = ["rssPeak", "rssSteady", "cpu", "cpuPer1000", "createReadyP99", "reconcileP99"];
  const specs = keys.map(figureSpec);
  for (const [group, runs] of groups) {
    if (runs.length < 2) continue;
    const base = runs[0]!;
    lines.push(
      `### ${group} (relative to ${base.variant.name})`,
      "",
      `| variant | V8 flags | concurrency | ${specs.map((s) => s.label).join(" | ")} |`,
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
        `| ${run.variant.name}${run.error ? " (failed)" : ""} | ${flags} | ${
          run.variant.concurrency ?? "default"
        } | ${cells.join(" | ")} |`,
      );
    }
    lines.push("");
  }
  return lines;
}

function describeOptions(options: Record<string, unknown>): string {
  return Object.entries(options)
    .filter(([key]) => key !== "help" && key !== "variants")
    .map(([key, value]) => `${key} ${Array.isArray(value) ? value.join(",") : String(value)}`)
    .join(", ");
}
