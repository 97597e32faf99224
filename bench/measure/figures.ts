/**
 * The summary figures of a run, computed from its raw record alone: process
 * samples, metrics scrapes, phases and object timings. Pure functions, so a
 * `results.json` can be re-summarised after the fact and the figures checked
 * against the samples they come from.
 *
 * Counter figures (reconciles, API calls, evictions) and CPU time are deltas
 * over the run's measured window, from the start of one phase to the end of
 * another; the harness takes a sample and a scrape exactly at every phase
 * boundary, so the window's edges are exact. They, peak RSS and create→Ready
 * are of one process of the run, the first unless the window names another:
 * the restart scenario's is the restarted operator, spawned inside its
 * window, which had counted nothing and spent no CPU when the window opened,
 * so its figures are its totals at the window's end.
 *
 * create→Ready counts only objects created while that process was running:
 * an object created before it started waits for the harness, not for it.
 * The restart scenario, whose objects all predate the restarted process, has
 * figures of its own instead ({@link restartFigures}), and so has the
 * failover scenario ({@link failoverFigures}), whose window is the successor's
 * (process 1, spawned as a standby before the objects) from the kill on, and
 * so have the backlog and edited scenarios ({@link catchUpFigures}), whose
 * operator is spawned inside its window to find work that piled up, and so
 * has the admission scenario ({@link admissionFigures}), whose latencies are
 * of the requests it sent to the API server, not of objects.
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
import type {
  Admission,
  AdmissionMarks,
  CatchUp,
  CatchUpMarks,
  Failover,
  FailoverMarks,
  Figures,
  ObjectTiming,
  Percentiles,
  Phase,
  Restart,
  RestartMarks,
  Run,
  Scrape,
} from "./results.ts";

/**
 * The phases a run's deltas span, from the start of `from` to the end of
 * `to`, and the operator process whose samples and scrapes they read.
 */
export interface MeasuredWindow {
  from: string;
  to: string;
  /**
   * Which process of the run, counting restarts from 0; its peak RSS and
   * create→Ready are its own as well.
   *
   * @default 0
   */
  process?: number;
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

/** What the restart, the failover, the backlog, the edited or the admission scenario marked. */
export type ScenarioMarks = RestartMarks | FailoverMarks | CatchUpMarks | AdmissionMarks;

/** The scenarios whose marks are {@link CatchUpMarks}, told apart from restart's by name. */
const CATCH_UP_SCENARIOS: readonly string[] = ["backlog", "edited"];

/** Computes every figure of `run` over `window`; `marks` are what its scenario marked. */
export function computeFigures(
  run: Omit<Run, "figures">,
  window: MeasuredWindow,
  marks?: ScenarioMarks,
): Figures {
  const start = phaseNamed(run.phases, window.from)?.startMs;
  const end = phaseNamed(run.phases, window.to)?.endMs;
  const process = window.process ?? 0;
  const measured = run.samples.filter((s) => s.process === process);
  const idlePhase = phaseNamed(run.phases, "idle") ?? phaseNamed(run.phases, "baseline");
  const holdPhase = phaseNamed(run.phases, "hold");
  // Spawned inside the window (no sample before it opened): nothing counted, no CPU spent yet.
  const spawnedInside = start !== undefined && !measured.some((s) => s.t <= start);
  const cpuAtEnd = end === undefined ? undefined : nearest(measured, end)?.cpuSeconds;
  const cpuSeconds = start === undefined
    ? undefined
    : spawnedInside
    ? cpuAtEnd
    : delta(nearest(measured, start)?.cpuSeconds, cpuAtEnd);

  const scrapes = run.scrapes.filter((s) => s.process === process);
  const before = start === undefined
    ? undefined
    : spawnedInside
    ? { t: start, process, series: [] }
    : nearest(scrapes, start);
  const after = end === undefined ? undefined : nearest(scrapes, end);
  const counter = (name: string) => {
    if (!before || !after) return undefined;
    const total = sumSeries(after.series, name);
    return spawnedInside ? total : delta(sumSeries(before.series, name), total);
  };
  const reconciles = counter("controller_runtime_reconcile_total");
  const apiCalls = counter("rest_client_requests_total");
  const edges = before && after ? { before, after } : undefined;
  const catchingUp = CATCH_UP_SCENARIOS.includes(run.scenario);

  const figures: Figures = {
    rssIdleBytes: idlePhase ? meanRss(measured, idlePhase) : undefined,
    rssPeakBytes: max(measured.map((s) => s.hwmBytes)),
    rssSteadyBytes: holdPhase ? meanRss(measured, holdPhase) : undefined,
    cpuSeconds,
    reconciles,
    cpuSecondsPer1000Reconciles: cpuSeconds !== undefined && reconciles
      ? (cpuSeconds / reconciles) * 1000
      : undefined,
    createReady: percentiles(createReadyLatencies(run, process)),
    updateReady: percentiles(latencies(run.objects, "updatedMs", "updateReadyMs")),
    reconcileP99Seconds: edges && windowQuantile(RECONCILE_TIME, 0.99, edges),
    apiCalls,
    apiCallsPerObject: apiCalls !== undefined && run.size > 0 ? apiCalls / run.size : undefined,
    cacheEvictions: counter("kinglet_cache_evictions_total"),
    restart: marks && "spawnedMs" in marks && !catchingUp
      ? restartFigures(run.objects, marks as RestartMarks)
      : undefined,
    failover: marks && "killedMs" in marks ? failoverFigures(run, marks, process) : undefined,
    catchUp: marks && "spawnedMs" in marks && catchingUp
      ? catchUpFigures(run.objects, marks, edges)
      : undefined,
    admission: marks && "latenciesMs" in marks
      ? admissionFigures(
        marks,
        measured,
        phaseNamed(run.phases, ADMISSION_PHASE),
        edges,
        phaseEdges(scrapes, phaseNamed(run.phases, CONTROL_PHASE)),
      )
      : undefined,
  };
  return withoutUndefined(figures);
}

/**
 * Per object created while the operator was running (after the first sample
 * of `process`, by default the first), milliseconds from the create request
 * to Ready.
 */
export function createReadyLatencies(
  run: Pick<Run, "objects" | "samples">,
  process = 0,
): number[] {
  const running = run.samples.find((s) => s.process === process)?.t;
  if (running === undefined) return [];
  return latencies(run.objects.filter((o) => o.createdMs >= running), "createdMs", "readyMs");
}

/**
 * The restart scenario's figures from its marks and the objects' timings:
 * when the edit was sent (from the spawn) and how long until the edited
 * object was seen Ready at its new generation (absent when the rule cannot
 * see generations). The reconcile counts were marked as they happened.
 */
export function restartFigures(
  objects: readonly ObjectTiming[],
  marks: RestartMarks,
): Restart {
  const edited = objects.find((o) => o.name === marks.edited);
  return withoutUndefined({
    ...marks,
    editSentMs: delta(marks.spawnedMs, edited?.updatedMs),
    editObservedMs: delta(edited?.updatedMs, edited?.updateReadyMs),
  });
}

/**
 * The failover scenario's figures from its marks, the objects' timings and
 * the successor's samples: its RSS in the last sample before the kill (the
 * harness samples at the start of the `kill` phase), when the edit was sent
 * (from the kill) and how long until the edited object was seen Ready at its
 * new generation. Takeover and the reconcile counts were marked as they
 * happened.
 */
export function failoverFigures(
  run: Pick<Run, "objects" | "samples">,
  marks: FailoverMarks,
  successor = 1,
): Failover {
  const edited = run.objects.find((o) => o.name === marks.edited);
  const standby = run.samples.filter((s) => s.process === successor && s.t <= marks.killedMs).at(
    -1,
  );
  return withoutUndefined({
    ...marks,
    standbyRssBytes: standby?.rssBytes,
    editSentMs: delta(marks.killedMs, edited?.updatedMs),
    editObservedMs: delta(edited?.updatedMs, edited?.updateReadyMs),
  });
}

/**
 * The backlog and edited scenarios' figures from their marks, the objects'
 * timings and the spawned process' scrapes at the window's edges: when the
 * edit was sent and when it was seen Ready at its new generation, when every
 * object had converged ({@link convergedAt}), all from the spawn, and the
 * median and 0.99 quantile of `rest_client_request_duration_seconds` over
 * the window (absent when the target exports no such histogram).
 */
export function catchUpFigures(
  objects: readonly ObjectTiming[],
  marks: CatchUpMarks,
  edges?: { before: Scrape; after: Scrape },
): CatchUp {
  const edited = objects.find((o) => o.name === marks.edited);
  const quantile = (q: number) => edges && windowQuantile(REQUEST_DURATION, q, edges);
  return withoutUndefined({
    ...marks,
    editSentMs: delta(marks.spawnedMs, edited?.updatedMs),
    editObservedMs: delta(marks.spawnedMs, edited?.updateReadyMs),
    editTakenMs: delta(edited?.updatedMs, edited?.updateObservedMs),
    convergedMs: delta(marks.spawnedMs, convergedAt(objects)),
    requestP50Seconds: quantile(0.5),
    requestP99Seconds: quantile(0.99),
  });
}

/** The phase in which the admission scenario sends its requests. */
export const ADMISSION_PHASE = "admission";

/** The phase in which it sends the same requests where no webhook is called. */
export const CONTROL_PHASE = "control";

/**
 * The admission scenario's figures from its marks, the operator's samples
 * and its scrapes at the window's edges: the latency percentiles of the
 * requests answered with success, the count of those that failed, the
 * operator's mean RSS over `phase`, and the calls its webhook counted and
 * its own latency quantiles over the window (absent when it exports no
 * webhook metrics); for the control phase, its requests' percentiles and
 * the calls the webhook counted over it (`controlEdges`), which should be none.
 */
export function admissionFigures(
  marks: AdmissionMarks,
  samples: readonly { t: number; rssBytes: number }[],
  phase?: Phase,
  edges?: { before: Scrape; after: Scrape },
  controlEdges: { before?: Scrape; after?: Scrape } = {},
): Admission {
  const { latenciesMs, control, ...counts } = marks;
  const calls = ({ before, after }: { before?: Scrape; after?: Scrape }) =>
    before && after &&
    delta(
      sumSeries(before.series, WEBHOOK_REQUESTS) ?? 0,
      sumSeries(after.series, WEBHOOK_REQUESTS),
    );
  const served = edges && calls(edges);
  return withoutUndefined({
    ...counts,
    latency: percentiles(latenciesMs),
    rssMeanBytes: phase && meanRss(samples, phase),
    served,
    serverP50Seconds: edges && windowQuantile(WEBHOOK_LATENCY, 0.5, edges),
    serverP99Seconds: edges && windowQuantile(WEBHOOK_LATENCY, 0.99, edges),
    control: control && withoutUndefined({
      sent: control.sent,
      errors: control.errors,
      served: calls(controlEdges),
      latency: percentiles(control.latenciesMs),
    }),
  });
}

/**
 * When the last of `objects` was first seen Ready at the generation in
 * effect: an object never updated when it was first Ready, an updated one
 * when it was first Ready at its new generation. `undefined` while any has
 * not been seen so, or when there are none.
 */
export function convergedAt(objects: readonly ObjectTiming[]): number | undefined {
  let last: number | undefined;
  for (const o of objects) {
    const at = o.updatedMs === undefined ? o.readyMs : o.updateReadyMs;
    if (at === undefined) return undefined;
    last = Math.max(last ?? at, at);
  }
  return last;
}

/** The scrapes nearest the start and the end of `phase`, if it happened. */
function phaseEdges(
  scrapes: readonly Scrape[],
  phase: Phase | undefined,
): { before?: Scrape; after?: Scrape } {
  if (!phase) return {};
  return { before: nearest(scrapes, phase.startMs), after: nearest(scrapes, phase.endMs) };
}

/** The first phase called `name`. */
export function phaseNamed(phases: readonly Phase[], name: string): Phase | undefined {
  return phases.find((p) => p.name === name);
}

function latencies(
  objects: readonly ObjectTiming[],
  from: "createdMs" | "updatedMs",
  to: "readyMs" | "updateReadyMs",
): number[] {
  const values: number[] = [];
  for (const o of objects) {
    const [a, b] = [o[from], o[to]];
    if (a !== undefined && b !== undefined) values.push(b - a);
  }
  return values;
}

const RECONCILE_TIME = "controller_runtime_reconcile_time_seconds";
const REQUEST_DURATION = "rest_client_request_duration_seconds";
const WEBHOOK_REQUESTS = "controller_runtime_webhook_requests_total";
const WEBHOOK_LATENCY = "controller_runtime_webhook_latency_seconds";

/** The `q` quantile of histogram `base` over what it counted between two scrapes. */
function windowQuantile(
  base: string,
  q: number,
  { before, after }: { before: Scrape; after: Scrape },
): number | undefined {
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

/** `value` without its undefined fields, as the schema's optional fields expect. */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(
    Object.entries(value).filter(([, field]) => field !== undefined),
  ) as T;
}
