/**
 * `summary.json`: what a run keeps beside its report, `results.json` without
 * the raw samples. Each run loses its `samples`, `scrapes` and `objects`
 * (every process sample, every metrics scrape, every object's timings) and
 * keeps the rest: its figures, phases, command and error, with the machine,
 * versions, options, targets and background of the whole benchmark. That is
 * every figure the report quotes and compare mode divides, in kilobytes
 * where `results.json` takes megabytes; the charts drawn from the samples
 * are kept as the SVG files beside it.
 *
 * `bench/latest/<run>/` holds a kept run's `report.md`, charts and
 * `summary.json` in git; its `results.json` and logs stay in the git-ignored
 * `bench/results/<run>/` (see bench/README.md).
 *
 * @example
 * ```ts ignore
 * import { readSummary, summarize } from "./summary.ts";
 * const summary = summarize(results);
 * summary.runs[0]!.figures.rssPeakBytes; // as in results
 * (await readSummary("bench/latest/front-door-14/summary.json")).runs.length;
 * ```
 *
 * @module
 */
import { z } from "zod";
import { parseResultsAs, type Results, resultsSchema, runSchema } from "../measure/results.ts";

/** The file name of a summary in its folder. */
export const SUMMARY_FILE = "summary.json";

/** One run of a summary: a run of `results.json` without its raw samples. */
export const runSummarySchema = runSchema.omit({ samples: true, scrapes: true, objects: true });
export type RunSummary = z.infer<typeof runSummarySchema>;

/** The whole `summary.json`; a `results.json` reads as one too, its raw samples dropped. */
export const summarySchema = resultsSchema.extend({ runs: z.array(runSummarySchema) });
export type Summary = z.infer<typeof summarySchema>;

/** `results` without the raw samples of its runs. */
export function summarize(results: Results): Summary {
  return {
    ...results,
    runs: results.runs.map(({ samples: _s, scrapes: _c, objects: _o, ...run }) => run),
  };
}

/** `summary` as written to `summary.json`: indented, so that a diff of two runs reads. */
export function summaryText(summary: Summary): string {
  return `${JSON.stringify(summary, null, 1)}\n`;
}

/**
 * Reads a `summary.json`, or a `results.json` as its summary.
 *
 * @throws {TypeError} naming the first fields that do not match the schema.
 */
export async function readSummary(path: string): Promise<Summary> {
  return parseResultsAs(summarySchema, await Deno.readTextFile(path), path);
}
