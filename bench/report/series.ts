/**
 * How the runs of one `results.json` are told apart in the report's tables
 * and in the charts: by variant when one target ran, by target when several
 * ran side by side (the variant added when some target ran several). One
 * function names a table's rows and a chart's lines, so the two always agree.
 *
 * Results written before several targets could share a file have no
 * `targets` list and no `target` on their runs: they read as one target.
 *
 * @example
 * ```ts
 * import { seriesOf } from "./series.ts";
 * const target = { name: "kinglet", file: "bench/targets/kinglet.json", replicas: 0 };
 * const peer = { name: "kube-rs", file: "../peers/kube-rs/target.json", replicas: 0 };
 * const variant = { name: "default", v8Flags: [] };
 * const series = seriesOf({
 *   target,
 *   targets: [target, peer],
 *   runs: [{ group: "idle", target: "kinglet", variant }, { group: "idle", target: "kube-rs", variant }],
 * });
 * series.legend; // "target"
 * series.name({ group: "idle", target: "kube-rs", variant }); // "kube-rs"
 * ```
 *
 * @module
 */
import type { Results, Run } from "../measure/results.ts";

/** What tells a run apart from the others of its group. */
export type SeriesRun = Pick<Run, "group" | "target" | "variant">;

/** The naming of one results file's runs. */
export interface Series {
  /** What the names stand for: the head of a table's first column and a chart's legend. */
  legend: "variant" | "target";
  /** The first target's name: side by side, every other target is divided by it. */
  reference: string;
  /** Whether several targets ran, so that tables show ratios against {@link Series.reference}. */
  sideBySide: boolean;
  /** The name of a run's table row and chart line. */
  name(run: SeriesRun): string;
  /** The name of the target a run measured. */
  targetOf(run: SeriesRun): string;
}

/** The naming of the runs of `results`; see the module documentation. */
export function seriesOf(
  results: Pick<Results, "target" | "targets"> & { runs: readonly SeriesRun[] },
): Series {
  const reference = results.target.name;
  const targetOf = (run: SeriesRun) => run.target ?? reference;
  const sideBySide = (results.targets ?? [results.target]).length > 1;
  if (!sideBySide) {
    return { legend: "variant", reference, sideBySide, targetOf, name: (run) => run.variant.name };
  }
  const perGroup = new Map<string, number>();
  for (const run of results.runs) {
    const key = JSON.stringify([run.group, targetOf(run)]);
    perGroup.set(key, (perGroup.get(key) ?? 0) + 1);
  }
  // Decided once for the whole file, so a target keeps one name in every table and chart.
  const withVariant = [...perGroup.values()].some((count) => count > 1);
  return {
    legend: "target",
    reference,
    sideBySide,
    targetOf,
    name: (run) => (withVariant ? `${targetOf(run)} ${run.variant.name}` : targetOf(run)),
  };
}
