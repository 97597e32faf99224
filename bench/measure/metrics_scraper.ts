/**
 * Reads the operator's `/metrics`: a lenient parser of the Prometheus text
 * format (any operator's exporter, not only kinglet's, must be readable), the
 * families the report uses, and sums over series.
 *
 * Only the families in {@link SCRAPED_FAMILIES} are kept: a scrape every few
 * seconds of everything an exporter offers would swell `results.json` with
 * series no figure reads.
 *
 * @example
 * ```ts
 * import { parseMetrics, sumSeries } from "./metrics_scraper.ts";
 * const series = parseMetrics(
 *   'controller_runtime_reconcile_total{controller="webapp",result="success"} 41\n' +
 *     'controller_runtime_reconcile_total{controller="webapp",result="error"} 1\n',
 * );
 * sumSeries(series, "controller_runtime_reconcile_total"); // 42
 * ```
 *
 * @module
 */
import type { Series } from "./results.ts";

/** Metric names (families, histograms by base name) that scrapes keep. */
export const SCRAPED_FAMILIES: readonly string[] = [
  "controller_runtime_reconcile_total",
  "controller_runtime_reconcile_errors_total",
  "controller_runtime_reconcile_time_seconds",
  "workqueue_depth",
  "rest_client_requests_total",
  "rest_client_request_duration_seconds",
  "kinglet_cache_objects",
  "kinglet_cache_bytes",
  "kinglet_cache_evictions_total",
  "process_resident_memory_bytes",
  "process_cpu_seconds_total",
  "controller_runtime_webhook_requests_total",
  "controller_runtime_webhook_latency_seconds",
];

const HISTOGRAM_SUFFIXES = ["_bucket", "_sum", "_count"];
const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?/y;

/**
 * Parses Prometheus text (0.0.4, and OpenMetrics' `# EOF`) into series,
 * keeping those whose family passes `keep`. Lines it cannot read are
 * skipped: one odd line must not cost a whole scrape.
 */
export function parseMetrics(
  text: string,
  keep: (family: string) => boolean = () => true,
): Series[] {
  const series: Series[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = LINE.exec(line);
    if (!match) continue;
    const name = match[1]!;
    if (!keep(familyOf(name))) continue;
    const labels = parseLabels(match[2] ?? "");
    const value = parseValue(match[3]!);
    // JSON has no NaN or infinity, and no figure needs them.
    if (labels === undefined || value === undefined || !Number.isFinite(value)) continue;
    series.push({ name, labels, value });
  }
  return series;
}

/** Whether `family` is one the scrapes keep. */
export function isScrapedFamily(family: string): boolean {
  return SCRAPED_FAMILIES.includes(family);
}

/**
 * The sum of every series named `name` whose labels include `match`, or
 * `undefined` when none is present (an exporter without the metric is not
 * an exporter reporting zero).
 */
export function sumSeries(
  series: readonly Series[],
  name: string,
  match: Record<string, string> = {},
): number | undefined {
  let sum: number | undefined;
  for (const s of series) {
    if (s.name !== name) continue;
    if (!Object.entries(match).every(([k, v]) => s.labels[k] === v)) continue;
    sum = (sum ?? 0) + s.value;
  }
  return sum;
}

/**
 * The cumulative buckets of histogram `base`, summed over every other label
 * and sorted by upper bound (`+Inf` last).
 */
export function histogramBuckets(
  series: readonly Series[],
  base: string,
): { le: number; count: number }[] {
  const byBound = new Map<number, number>();
  for (const s of series) {
    if (s.name !== `${base}_bucket` || s.labels.le === undefined) continue;
    const le = parseValue(s.labels.le);
    if (le === undefined) continue;
    byBound.set(le, (byBound.get(le) ?? 0) + s.value);
  }
  return [...byBound].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
}

/** Options of {@link scrapeMetrics}. */
export interface ScrapeOptions {
  /** Gives up after this long. Defaults to 5 000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Fetches `url` and returns the scraped families' series.
 *
 * @throws {Error} when the endpoint does not answer 200 in time.
 */
export async function scrapeMetrics(url: string, options: ScrapeOptions = {}): Promise<Series[]> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 5_000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const response = await fetch(url, { signal });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`GET ${url} answered ${response.status}: ${text.slice(0, 200)}`);
  }
  return parseMetrics(text, isScrapedFamily);
}

function familyOf(name: string): string {
  for (const suffix of HISTOGRAM_SUFFIXES) {
    if (name.endsWith(suffix) && isScrapedFamily(name.slice(0, -suffix.length))) {
      return name.slice(0, -suffix.length);
    }
  }
  return name;
}

function parseLabels(text: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const at = LABEL.lastIndex;
    const match = LABEL.exec(text);
    if (!match) return text.slice(at).trim() === "" ? labels : undefined;
    labels[match[1]!] = match[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
  }
  return labels;
}

function parseValue(text: string): number | undefined {
  if (text === "+Inf" || text === "Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  const value = Number(text);
  return Number.isNaN(value) ? undefined : value;
}
