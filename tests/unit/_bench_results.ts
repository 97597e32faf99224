/**
 * Recorded benchmark results made by hand, for the bench tests that render
 * or compute from them: a process sample, a results file around some runs,
 * and the cells of a rendered table.
 *
 * @module
 */
import {
  type Results,
  RESULTS_FORMAT,
  type Run,
  type TargetRecord,
} from "../../bench/measure/results.ts";

const MIB = 2 ** 20;

/** A process sample at `t` ms of `rssMib` resident (its peak too) and `cpuSeconds` used. */
export function sample(t: number, rssMib: number, cpuSeconds: number, process = 0) {
  return {
    t,
    process,
    rssBytes: rssMib * MIB,
    hwmBytes: rssMib * MIB,
    cpuSeconds,
    processes: 1,
  };
}

/** A results file holding `runs` of `targets` (the first is the run's main target) on a test machine. */
export function resultsOf(runs: Run[], targets: TargetRecord[]): Results {
  return {
    format: RESULTS_FORMAT,
    startedAt: "2026-01-01T00:00:00.000Z",
    finishedAt: "2026-01-01T01:00:00.000Z",
    options: {},
    machine: {
      cores: 2,
      memoryBytes: 2 ** 34,
      cpuModel: "test",
      os: "linux x86_64",
      kernel: "6",
      loadAverage: [0, 0, 0],
    },
    versions: {
      deno: "2",
      v8: "14",
      typescript: "5",
      kubernetes: "v1.36.3",
      kinglet: "0.1.0",
      commit: "abc",
      target: targets.map((t) => t.name).join(", "),
    },
    target: targets[0]!,
    targets,
    runs,
  };
}

/** The cells of each line of a Markdown table. */
export function cells(lines: readonly string[]): string[][] {
  return lines.map((line) => line.slice(1, -1).split("|").map((c) => c.trim()));
}
