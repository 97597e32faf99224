/**
 * SVG charts of a benchmark, drawn with Vega-Lite and rendered headless by
 * Vega's SVG string renderer (no browser, no canvas): per group of runs, RSS
 * over time and, where objects were created with the operator running, the
 * create→Ready distribution, a line per variant (or per target, side by
 * side), and with several runs a trade-off chart of peak RSS against latency
 * (or CPU).
 *
 * @example
 * ```ts
 * import { renderSvg, rssChart } from "./charts.ts";
 * const svg = await renderSvg(rssChart("idle", [{
 *   name: "default",
 *   phases: [],
 *   samples: [{ t: 0, process: 0, rssBytes: 40 * 2 ** 20, hwmBytes: 0, cpuSeconds: 0, processes: 1 }],
 * }]));
 * svg.startsWith("<svg"); // true
 * ```
 *
 * @module
 */
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import { createReadyLatencies } from "../measure/figures.ts";
import type { Results, Run } from "../measure/results.ts";
import { type Series, seriesOf } from "./series.ts";

/** One chart file. */
export interface Chart {
  /** File name inside the output folder. */
  file: string;
  title: string;
  group: string;
}

const WIDTH = 560;
const HEIGHT = 260;
const MIB = 2 ** 20;

/** Renders a Vega-Lite spec to an SVG document. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** A run as a chart shows it: its series' name and what it measured. */
export type Line<K extends keyof Run> = { name: string } & Pick<Run, K>;

/** What the chart's legend names: variants, or targets side by side. */
export type Legend = Series["legend"];

/**
 * Colour by series, with room in the legend: Vega cuts labels at 160 px, and
 * targets' names run long (`controller-runtime…`).
 */
function colour(legend: Legend) {
  return {
    field: legend,
    type: "nominal" as const,
    title: legend,
    legend: { labelLimit: 320 },
  };
}

/**
 * RSS of each run's operator over the run, a line per process (a restarted
 * operator's second process has a line of its own in the same colour); the
 * phase starts are marked when there is one run.
 */
export function rssChart(
  group: string,
  runs: readonly Line<"samples" | "phases">[],
  legend: Legend = "variant",
): TopLevelSpec {
  const values = runs.flatMap((run) =>
    run.samples.map((s) => ({
      seconds: s.t / 1000,
      rss: s.rssBytes / MIB,
      [legend]: run.name,
      process: `${run.name}#${s.process}`,
    }))
  );
  const phases = runs.length === 1 ? phaseMarks(runs[0]!.phases) : [];
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: `${group}: operator RSS over time`,
    width: WIDTH,
    height: HEIGHT,
    layer: [
      {
        data: { values },
        mark: { type: "line", interpolate: "step-after" },
        encoding: {
          x: { field: "seconds", type: "quantitative", title: "seconds since the run started" },
          y: { field: "rss", type: "quantitative", title: "RSS (MiB)" },
          color: colour(legend),
          detail: { field: "process", type: "nominal" },
        },
      },
      ...(phases.length > 0
        ? [{
          data: { values: phases },
          mark: { type: "rule" as const, strokeDash: [3, 3], color: "#999" },
          encoding: { x: { field: "seconds", type: "quantitative" as const } },
        }, {
          data: { values: phases },
          mark: {
            type: "text" as const,
            angle: 270,
            align: "right" as const,
            baseline: "bottom" as const,
            dx: -4,
            dy: -2,
            fontSize: 9,
            color: "#666",
          },
          encoding: {
            x: { field: "seconds", type: "quantitative" as const },
            y: { value: 0 },
            text: { field: "phase", type: "nominal" as const },
          },
        }]
        : []),
    ],
  } as TopLevelSpec;
}

/** Phase starts; short phases get no label, which would only overprint its neighbour's. */
function phaseMarks(
  phases: Run["phases"],
): { seconds: number; phase: string; labelled: boolean }[] {
  const span = Math.max(1, ...phases.map((p) => p.endMs));
  return phases.map((p) => ({
    seconds: p.startMs / 1000,
    phase: p.name,
    labelled: p.endMs - p.startMs >= span * 0.03,
  }));
}

/**
 * Cumulative distribution of create→Ready latency, one line per run, over
 * the objects the create→Ready figures count.
 */
export function latencyChart(
  group: string,
  runs: readonly Line<"objects" | "samples">[],
  legend: Legend = "variant",
): TopLevelSpec {
  const values = runs.flatMap((run) => {
    const latencies = createReadyLatencies(run).sort((a, b) => a - b);
    return latencies.map((ms, i) => ({
      ms,
      share: (i + 1) / latencies.length,
      [legend]: run.name,
    }));
  });
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: `${group}: create→Ready latency (share of objects Ready within)`,
    width: WIDTH,
    height: HEIGHT,
    data: { values },
    mark: { type: "line", interpolate: "step-after" },
    encoding: {
      x: { field: "ms", type: "quantitative", title: "create→Ready (ms)" },
      y: { field: "share", type: "quantitative", title: "share of objects", axis: { format: "%" } },
      color: colour(legend),
    },
  };
}

/** Peak RSS against create→Ready p99 (or CPU seconds without objects), one point per run. */
export function tradeoffChart(
  group: string,
  runs: readonly Line<"figures">[],
  legend: Legend = "variant",
): TopLevelSpec {
  const latency = runs.some((r) => r.figures.createReady !== undefined);
  const values = runs.map((run) => ({
    [legend]: run.name,
    rss: (run.figures.rssPeakBytes ?? 0) / MIB,
    cost: latency ? run.figures.createReady?.p99 ?? null : run.figures.cpuSeconds ?? null,
  }));
  const y = latency ? "create→Ready p99 (ms)" : "CPU (s)";
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: `${group}: memory against ${latency ? "latency" : "CPU"} per ${legend}`,
    width: WIDTH,
    height: HEIGHT,
    data: { values },
    encoding: {
      x: { field: "rss", type: "quantitative", title: "peak RSS (MiB)", scale: { zero: false } },
      y: { field: "cost", type: "quantitative", title: y, scale: { zero: false } },
    },
    layer: [
      { mark: { type: "point", filled: true, size: 60 } },
      {
        mark: { type: "text", align: "left", dx: 6, fontSize: 10 },
        encoding: { text: { field: legend } },
      },
    ],
  };
}

/**
 * Renders and writes every chart of `results` into `dir`, its runs named as
 * the report's tables name them.
 *
 * @returns the charts written, in group order.
 */
export async function writeCharts(
  results: Pick<Results, "target" | "targets" | "runs">,
  dir: string,
): Promise<Chart[]> {
  const series = seriesOf(results);
  const charts: Chart[] = [];
  const lines = results.runs.map((run) => ({ ...run, name: series.name(run) }));
  const groups = Map.groupBy(lines, (run) => run.group);
  const write = async (file: string, title: string, group: string, spec: TopLevelSpec) => {
    await Deno.writeTextFile(`${dir}/${file}`, await renderSvg(spec));
    charts.push({ file, title, group });
  };
  for (const [group, members] of groups) {
    if (members.some((r) => r.samples.length > 0)) {
      await write(
        `rss-${group}.svg`,
        "RSS over time",
        group,
        rssChart(group, members, series.legend),
      );
    }
    if (members.some((r) => r.figures.createReady !== undefined)) {
      await write(
        `create-ready-${group}.svg`,
        "create→Ready distribution",
        group,
        latencyChart(group, members, series.legend),
      );
    }
    if (members.length > 1) {
      await write(
        `tradeoff-${group}.svg`,
        "trade-off",
        group,
        tradeoffChart(group, members, series.legend),
      );
    }
  }
  return charts;
}
