/**
 * The summary figures of a run, computed from its raw record alone: process
 * samples, metrics scrapes, phases and object timings. Pure functions, so a
 * `results.json` can be re-summarised after the fact and the figures checked
 * against the samples they come from.
 *
 * Counter figures (reconciles, API calls, evictions) and CPU time are deltas
 * over the run's measured window, from the start of one phase to the end of
 * another; the harness takes a sample and a scrape exactly at every phase
 * boundary, so the window's edges are exact.
 *
 * @example
 * ```ts
 * import { histogramQuantile, percentiles } from "./figures.ts";
 * percentiles([5, 1, 4, 2, 3]); // { count: 5, p50: 3, p90: 5, p99: 5, max: 5 }
 * histogramQuantile(0.5, [{ le: 0.1, count: 50 }, { le: 0.2, count: 100 }, { le: Infinity, count: 100 }]);
 * // 0.1
 * ```
 *
 * @module
 */
import { histogramBuckets, sumSeries } from "./metrics_scraper.ts";
import type { Figures, Percentiles, Phase, Restart, Run, Scrape } from "./results.ts";

/** The phases a run's deltas span, from the start of `from` to the end of `to`. */
export interface MeasuredWindow {
  from: string;
  to: string;
}

/** Nearest-rank percentiles of `values`, or `undefined` when there are none. */
export function percentiles(values: readonly number[]): Percentiles | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
  return {
    count: sorted.length,
    p50: rank(0.5),
    p90: rank(0.9),
    p99: rank(0.99),
    max: sorted[sorted.length - 1]!,
  };
}

/**
 * The `q` quantile of a cumulative histogram, interpolated linearly inside
 * the bucket it falls in, as Prometheus' `histogram_quantile` does; the
 * lower bound of the first bucket is 0, and a quantile in the `+Inf` bucket
 * is the highest finite bound. `undefined` when the histogram is empty.
 */
export function histogramQuantile(
  q: number,
  buckets: readonly { le: number; count: number }[],
): number | undefined {
  const total = buckets.at(-1)?.count ?? 0;
  if (total <= 0) return undefined;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const { le, count } of buckets) {
    if (count >= rank) {
      if (le === Infinity) return lowerBound;
      if (count === lowerCount) return le;
      return lowerBound + (le - lowerBound) * ((rank - lowerCount) / (count - lowerCount));
    }
    lowerBound = le;
    lowerCount = count;
  }
  return lowerBound;
}

/** Computes every figure of `run` over `window`; `restart` is the restart scenario's own record. */
export function computeFigures(
  run: Omit<Run, "figures">,
  window: MeasuredWindow,
  restart?: Restart,
): Figures {
  const start = phaseNamed(run.phases, window.from)?.startMs;
  const end = phaseNamed(run.phases, window.to)?.endMs;
  const first = run.samples.filter((s) => s.process === 0);
  const idlePhase = phaseNamed(run.phases, "idle") ?? phaseNamed(run.phases, "baseline");
  const holdPhase = phaseNamed(run.phases, "hold");
  const cpuSeconds = start !== undefined && end !== undefined
    ? delta(nearest(first, start)?.cpuSeconds, nearest(first, end)?.cpuSeconds)
    : undefined;

  const scrapes = run.scrapes.filter((s) => s.process === 0);
  const before = start === undefined ? undefined : nearest(scrapes, start);
  const after = end === undefined ? undefined : nearest(scrapes, end);
  const counter = (name: string) =>
    before && after
      ? delta(sumSeries(before.series, name), sumSeries(after.series, name))
      : undefined;
  const reconciles = counter("controller_runtime_reconcile_total");
  const apiCalls = counter("rest_client_requests_total");

  const figures: Figures = {
    rssIdleBytes: idlePhase ? meanRss(first, idlePhase) : undefined,
    rssPeakBytes: max(run.samples.map((s) => s.hwmBytes)),
    rssSteadyBytes: holdPhase ? meanRss(first, holdPhase) : undefined,
    cpuSeconds,
    reconciles,
    cpuSecondsPer1000Reconciles: cpuSeconds !== undefined && reconciles
      ? (cpuSeconds / reconciles) * 1000
      : undefined,
    createReady: percentiles(latencies(run, "createdMs", "readyMs")),
    updateReady: percentiles(latencies(run, "updatedMs", "updateReadyMs")),
    reconcileP99Seconds: before && after ? reconcileQuantile(0.99, before, after) : undefined,
    apiCalls,
    apiCallsPerObject: apiCalls !== undefined && run.size > 0 ? apiCalls / run.size : undefined,
    cacheEvictions: counter("kinglet_cache_evictions_total"),
    restart,
  };
  return Object.fromEntries(
    Object.entries(figures).filter(([, value]) => value !== undefined),
  ) as Figures;
}

/** The first phase called `name`. */
export function phaseNamed(phases: readonly Phase[], name: string): Phase | undefined {
  return phases.find((p) => p.name === name);
}

function latencies(
  run: Omit<Run, "figures">,
  from: "createdMs" | "updatedMs",
  to: "readyMs" | "updateReadyMs",
): number[] {
  const values: number[] = [];
  for (const o of run.objects) {
    const [a, b] = [o[from], o[to]];
    if (a !== undefined && b !== undefined) values.push(b - a);
  }
  return values;
}

function reconcileQuantile(q: number, before: Scrape, after: Scrape): number | undefined {
  const base = "controller_runtime_reconcile_time_seconds";
  const earlier = new Map(histogramBuckets(before.series, base).map((b) => [b.le, b.count]));
  const buckets = histogramBuckets(after.series, base).map((b) => ({
    le: b.le,
    count: b.count - (earlier.get(b.le) ?? 0),
  }));
  return histogramQuantile(q, buckets);
}

function meanRss(
  samples: readonly { t: number; rssBytes: number }[],
  phase: Phase,
): number | undefined {
  const inside = samples.filter((s) => s.t >= phase.startMs && s.t <= phase.endMs);
  if (inside.length === 0) return undefined;
  return inside.reduce((sum, s) => sum + s.rssBytes, 0) / inside.length;
}

function nearest<T extends { t: number }>(items: readonly T[], t: number): T | undefined {
  let best: T | undefined;
  for (const item of items) {
    if (best === undefined || Math.abs(item.t - t) < Math.abs(best.t - t)) best = item;
  }
  return best;
}

function delta(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : b - a;
}

function max(values: readonly number[]): number | undefined {
  return values.length === 0 ? undefined : values.reduce((a, b) => Math.max(a, b));
}
