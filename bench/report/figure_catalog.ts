/**
 * The figures the report shows and compare mode divides: a key, a column
 * label, how to read it from a run's figures and how to print it, and which
 * figures each scenario's table has. One list, so the report and compare
 * mode can never disagree on what a figure is.
 *
 * @example
 * ```ts
 * import { figureSpec, formatFigure } from "./figure_catalog.ts";
 * const spec = figureSpec("rssPeak");
 * formatFigure(spec, spec.get({ rssPeakBytes: 50 * 2 ** 20 })); // "50.0"
 * ```
 *
 * @module
 */
import type { Figures, ScenarioName } from "../measure/results.ts";

/** How a figure is printed. */
export type FigureUnit = "MiB" | "s" | "ms" | "count";

/** One figure. All of them are better when lower. */
export interface FigureSpec {
  key: string;
  /** Column header, unit included. */
  label: string;
  unit: FigureUnit;
  get(figures: Figures): number | undefined;
}

const MIB = 2 ** 20;

/** Every figure, in report column order. */
export const FIGURE_SPECS: readonly FigureSpec[] = [
  { key: "rssIdle", label: "RSS idle (MiB)", unit: "MiB", get: (f) => f.rssIdleBytes },
  { key: "rssPeak", label: "RSS peak (MiB)", unit: "MiB", get: (f) => f.rssPeakBytes },
  { key: "rssSteady", label: "RSS steady (MiB)", unit: "MiB", get: (f) => f.rssSteadyBytes },
  { key: "cpu", label: "CPU (s)", unit: "s", get: (f) => f.cpuSeconds },
  { key: "reconciles", label: "reconciles", unit: "count", get: (f) => f.reconciles },
  {
    key: "cpuPer1000",
    label: "CPU s / 1,000 reconciles",
    unit: "s",
    get: (f) => f.cpuSecondsPer1000Reconciles,
  },
  {
    key: "createReadyP50",
    label: "create→Ready p50 (ms)",
    unit: "ms",
    get: (f) => f.createReady?.p50,
  },
  {
    key: "createReadyP90",
    label: "create→Ready p90 (ms)",
    unit: "ms",
    get: (f) => f.createReady?.p90,
  },
  {
    key: "createReadyP99",
    label: "create→Ready p99 (ms)",
    unit: "ms",
    get: (f) => f.createReady?.p99,
  },
  {
    key: "updateReadyP99",
    label: "update→Ready p99 (ms)",
    unit: "ms",
    get: (f) => f.updateReady?.p99,
  },
  {
    key: "reconcileP99",
    label: "reconcile p99 (ms)",
    unit: "ms",
    get: (f) => (f.reconcileP99Seconds === undefined ? undefined : f.reconcileP99Seconds * 1000),
  },
  {
    key: "apiCallsPerObject",
    label: "API calls / object",
    unit: "count",
    get: (f) => f.apiCallsPerObject,
  },
  { key: "apiCalls", label: "API calls", unit: "count", get: (f) => f.apiCalls },
  { key: "evictions", label: "cache evictions", unit: "count", get: (f) => f.cacheEvictions },
  {
    key: "editObserved",
    label: "edit observed (ms)",
    unit: "ms",
    get: (f) => f.restart?.editObservedMs,
  },
  {
    key: "reconciled",
    label: "all reconciled (ms)",
    unit: "ms",
    get: (f) => f.restart?.reconciledMs,
  },
  { key: "readyz", label: "to /readyz (ms)", unit: "ms", get: (f) => f.restart?.readyzMs },
  {
    key: "firstReconcile",
    label: "to first reconcile (ms)",
    unit: "ms",
    get: (f) => f.restart?.firstReconcileMs,
  },
  { key: "takeover", label: "takeover (ms)", unit: "ms", get: (f) => f.failover?.takeoverMs },
  {
    key: "failoverEditObserved",
    label: "edit observed (ms)",
    unit: "ms",
    get: (f) => f.failover?.editObservedMs,
  },
  {
    key: "failoverReconciled",
    label: "all reconciled (ms)",
    unit: "ms",
    get: (f) => f.failover?.reconciledMs,
  },
  {
    key: "standbyRss",
    label: "standby RSS (MiB)",
    unit: "MiB",
    get: (f) => f.failover?.standbyRssBytes,
  },
  {
    key: "failoverFirstReconcile",
    label: "to first reconcile (ms)",
    unit: "ms",
    get: (f) => f.failover?.firstReconcileMs,
  },
  {
    key: "catchUpEditObserved",
    label: "spawn→edit observed (ms)",
    unit: "ms",
    get: (f) => f.catchUp?.editObservedMs,
  },
  {
    key: "catchUpEditTaken",
    label: "edit→observedGeneration (ms)",
    unit: "ms",
    get: (f) => f.catchUp?.editTakenMs,
  },
  {
    key: "catchUpConverged",
    label: "spawn→all converged (ms)",
    unit: "ms",
    get: (f) => f.catchUp?.convergedMs,
  },
  {
    key: "requestP50",
    label: "request p50 (ms)",
    unit: "ms",
    get: (f) => milliseconds(f.catchUp?.requestP50Seconds),
  },
  {
    key: "requestP99",
    label: "request p99 (ms)",
    unit: "ms",
    get: (f) => milliseconds(f.catchUp?.requestP99Seconds),
  },
  { key: "catchUpReadyz", label: "to /readyz (ms)", unit: "ms", get: (f) => f.catchUp?.readyzMs },
  {
    key: "admissionP50",
    label: "admission p50 (ms)",
    unit: "ms",
    get: (f) => f.admission?.latency?.p50,
  },
  {
    key: "admissionP99",
    label: "admission p99 (ms)",
    unit: "ms",
    get: (f) => f.admission?.latency?.p99,
  },
  {
    key: "controlP50",
    label: "no webhook p50 (ms)",
    unit: "ms",
    get: (f) => f.admission?.control?.latency?.p50,
  },
  {
    key: "controlP99",
    label: "no webhook p99 (ms)",
    unit: "ms",
    get: (f) => f.admission?.control?.latency?.p99,
  },
  {
    key: "admissionErrors",
    label: "admission errors",
    unit: "count",
    get: (f) => f.admission?.errors,
  },
  { key: "admissionSent", label: "admissions sent", unit: "count", get: (f) => f.admission?.sent },
  {
    key: "admissionServed",
    label: "webhook calls",
    unit: "count",
    get: (f) => f.admission?.served,
  },
  {
    key: "admissionServerP50",
    label: "webhook p50 (ms)",
    unit: "ms",
    get: (f) => milliseconds(f.admission?.serverP50Seconds),
  },
  {
    key: "admissionServerP99",
    label: "webhook p99 (ms)",
    unit: "ms",
    get: (f) => milliseconds(f.admission?.serverP99Seconds),
  },
  {
    key: "admissionRss",
    label: "RSS admitting (MiB)",
    unit: "MiB",
    get: (f) => f.admission?.rssMeanBytes,
  },
];

/** The columns of the backlog and edited tables, which measure the same figures. */
const CATCH_UP_COLUMNS = [
  "catchUpEditTaken",
  "catchUpEditObserved",
  "catchUpConverged",
  "apiCalls",
  "requestP50",
  "requestP99",
  "cpu",
  "rssPeak",
  "catchUpReadyz",
  "reconciles",
];

/** The columns of each scenario's table. */
export const SCENARIO_COLUMNS: Record<ScenarioName, readonly string[]> = {
  idle: ["rssIdle", "rssPeak", "cpu", "apiCalls"],
  scale: [
    "rssIdle",
    "rssPeak",
    "rssSteady",
    "cpuPer1000",
    "createReadyP50",
    "createReadyP90",
    "createReadyP99",
    "updateReadyP99",
    "reconcileP99",
    "reconciles",
    "apiCallsPerObject",
  ],
  budget: [
    "rssIdle",
    "rssPeak",
    "rssSteady",
    "cpuPer1000",
    "createReadyP50",
    "createReadyP90",
    "createReadyP99",
    "updateReadyP99",
    "reconcileP99",
    "reconciles",
    "apiCallsPerObject",
    "evictions",
  ],
  restart: [
    "editObserved",
    "reconciled",
    "apiCalls",
    "rssPeak",
    "readyz",
    "firstReconcile",
    "reconciles",
    "cpu",
  ],
  failover: [
    "takeover",
    "failoverEditObserved",
    "failoverReconciled",
    "apiCalls",
    "rssPeak",
    "cpu",
    "standbyRss",
    "failoverFirstReconcile",
    "reconciles",
  ],
  backlog: CATCH_UP_COLUMNS,
  edited: CATCH_UP_COLUMNS,
  admission: [
    "admissionP50",
    "admissionP99",
    "controlP50",
    "controlP99",
    "admissionErrors",
    "admissionSent",
    "admissionServed",
    "admissionServerP50",
    "admissionServerP99",
    "cpu",
    "admissionRss",
    "rssIdle",
    "rssPeak",
  ],
};

/**
 * The figure called `key`.
 *
 * @throws {RangeError} for an unknown key.
 */
export function figureSpec(key: string): FigureSpec {
  const spec = FIGURE_SPECS.find((s) => s.key === key);
  if (!spec) throw new RangeError(`Cannot find the figure '${key}'`);
  return spec;
}

function milliseconds(seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : seconds * 1000;
}

/** `value` in the figure's unit, or `–` when it was not measured. */
export function formatFigure(spec: FigureSpec, value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return "–";
  switch (spec.unit) {
    case "MiB":
      return (value / MIB).toFixed(1);
    case "s":
      return value.toFixed(2);
    case "ms":
      return value < 100 ? value.toFixed(1) : Math.round(value).toLocaleString("en-US");
    case "count":
      return Number.isInteger(value) ? value.toLocaleString("en-US") : value.toFixed(1);
  }
}
