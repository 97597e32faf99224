/**
 * Compare mode: each figure of a run divided by the same figure of the run
 * with the same id (scenario, size and variant) in an earlier
 * `results.json`. Every figure is better when lower, so a ratio below 1 is
 * an improvement.
 *
 * @example
 * ```ts
 * import { compareRuns } from "./compare.ts";
 * const before = [{ id: "idle default", figures: { rssPeakBytes: 100 } }];
 * const after = [{ id: "idle default", figures: { rssPeakBytes: 80 } }];
 * compareRuns(before, after).ratios[0]?.ratio; // 0.8
 * ```
 *
 * @module
 */
import { FIGURE_SPECS, formatFigure } from "./figure_catalog.ts";
import type { Run } from "../measure/results.ts";

/** One figure of one run, before and after. */
export interface FigureRatio {
  run: string;
  figure: string;
  label: string;
  before: number;
  after: number;
  /** `after / before`. */
  ratio: number;
}

/** What {@link compareRuns} found. */
export interface Comparison {
  ratios: FigureRatio[];
  /** Runs of the new results with no counterpart in the old. */
  unmatched: string[];
}

/** Ratios of every figure both runs of an id have; a figure at 0 before is skipped. */
export function compareRuns(
  before: readonly Pick<Run, "id" | "figures">[],
  after: readonly Pick<Run, "id" | "figures">[],
): Comparison {
  const earlier = new Map(before.map((run) => [run.id, run]));
  const ratios: FigureRatio[] = [];
  const unmatched: string[] = [];
  for (const run of after) {
    const old = earlier.get(run.id);
    if (!old) {
      unmatched.push(run.id);
      continue;
    }
    for (const spec of FIGURE_SPECS) {
      const [a, b] = [spec.get(old.figures), spec.get(run.figures)];
      if (a === undefined || b === undefined || a === 0) continue;
      ratios.push({
        run: run.id,
        figure: spec.key,
        label: spec.label,
        before: a,
        after: b,
        ratio: b / a,
      });
    }
  }
  return { ratios, unmatched };
}

/** The comparison as a Markdown table (also readable on a terminal). */
export function comparisonMarkdown(comparison: Comparison, beforeName: string): string {
  const lines = [`Compared with ${beforeName} (ratio = now / before; below 1 is better).`, ""];
  if (comparison.ratios.length === 0) {
    lines.push("No run has a counterpart with the same scenario, size and variant.");
  } else {
    lines.push("| run | figure | before | now | ratio |", "| --- | --- | ---: | ---: | ---: |");
    for (const r of comparison.ratios) {
      const spec = FIGURE_SPECS.find((s) => s.key === r.figure)!;
      lines.push(
        `| ${r.run} | ${r.label} | ${formatFigure(spec, r.before)} | ${
          formatFigure(spec, r.after)
        } | ` +
          `${r.ratio.toFixed(2)}× |`,
      );
    }
  }
  if (comparison.unmatched.length > 0) {
    lines.push("", `Not in the earlier results: ${comparison.unmatched.join(", ")}.`);
  }
  return lines.join("\n") + "\n";
}
