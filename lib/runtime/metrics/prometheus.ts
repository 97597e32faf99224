/**
 * A tiny Prometheus registry: counters, gauges and histograms with labels,
 * rendered in the text exposition format 0.0.4.
 *
 * Numbers are written as Prometheus' Go client writes them (`1e-08`,
 * `5.6e+07`), so `le` labels match what dashboards built on controller-runtime
 * expect. Collectors registered with {@link Registry.onCollect} run at the
 * start of each {@link Registry.render}, for values read on scrape.
 *
 * @example
 * ```ts
 * import { Registry } from "./prometheus.ts";
 * const registry = new Registry();
 * const requests = registry.counter("http_requests_total", "HTTP requests.", ["code"]);
 * requests.inc({ code: "200" });
 * registry.render(); // "# HELP http_requests_total HTTP requests.\n# TYPE ..."
 * ```
 *
 * @module
 */
import { logger } from "../../log.ts";

/** The `Content-Type` of {@link Registry.render}'s output. */
export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Label values by label name; every declared label must be given. */
export type Labels<L extends string> = { readonly [name in L]: string };

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The current value of one label combination of a metric. */
export interface Series {
  /** Label values, in the order of the metric's label names. */
  labels: readonly string[];
  /** A counter's or gauge's value; a histogram's count of observations. */
  value: number;
  /** Histograms only: observations per bucket (not cumulative), the last one for +Inf. */
  buckets?: number[];
  /** Histograms only: the sum of the observations. */
  sum?: number;
}

/** What every metric shares: a name, help, label names and series by label values. */
export abstract class Metric<L extends string> {
  /** The Prometheus metric type. */
  abstract readonly type: "counter" | "gauge" | "histogram";
  readonly #series = new Map<string, Series>();
  /** What {@link prefixes} made for each series: rendered once, the values change. */
  readonly #prefixes = new Map<Series, readonly string[]>();
  #header?: string;

  /**
   * Checks the metric and label names.
   *
   * @throws {TypeError} when a name is not a valid Prometheus name or a label is reserved.
   */
  constructor(readonly name: string, readonly help: string, readonly labelNames: readonly L[]) {
    if (!METRIC_NAME.test(name)) {
      throw new TypeError(`Cannot register metric '${name}': the name must match ${METRIC_NAME}`);
    }
    for (const label of labelNames) {
      if (!LABEL_NAME.test(label) || label.startsWith("__") || label === "le") {
        throw new TypeError(
          `Cannot register metric '${name}': label '${label}' must match ${LABEL_NAME} and not be reserved`,
        );
      }
    }
  }

  /** Creates the series of `labels` at zero, so it is exported before anything is recorded. */
  ensure(labels: Labels<L>): void {
    this.seriesFor(labels);
  }

  /** Every series, in creation order. */
  series(): Iterable<Series> {
    return this.#series.values();
  }

  /** The `# HELP` and `# TYPE` lines of the text format, each ending in a newline. */
  get header(): string {
    return this.#header ??= `# HELP ${this.name} ${escapeHelp(this.help)}\n` +
      `# TYPE ${this.name} ${this.type}\n`;
  }

  /**
   * What precedes each value of `series` in the text format, up to and with
   * the space: one line for a counter or gauge; a histogram's bucket lines
   * (`+Inf` last), then its `_sum` and `_count`. Made on the first render and
   * kept, so a scrape allocates little more than its values and output.
   */
  prefixes(series: Series): readonly string[] {
    let prefixes = this.#prefixes.get(series);
    if (!prefixes) {
      prefixes = this.renderPrefixes(
        this.labelNames.map((label, i) => `${label}="${escapeLabel(series.labels[i]!)}"`),
      );
      this.#prefixes.set(series, prefixes);
    }
    return prefixes;
  }

  /** The prefixes of a series whose label pairs are `pairs`; histograms add their buckets. */
  protected renderPrefixes(pairs: readonly string[]): readonly string[] {
    return [`${this.name}${braces(pairs)} `];
  }

  /**
   * The series of `labels`, created at zero when new.
   *
   * @throws {TypeError} when `labels` are not exactly the declared label names.
   */
  protected seriesFor(labels: Labels<L>): Series {
    // Every request and reconcile records a few series: the lookup builds one key and no arrays.
    const names = this.labelNames;
    let id = "";
    for (let i = 0; i < names.length; i++) {
      const value: unknown = labels[names[i]!];
      if (typeof value !== "string") throw this.#wrongLabels(labels);
      id = i === 0 ? value : `${id}\u0000${value}`;
    }
    let series = this.#series.get(id);
    if (!series) {
      if (Object.keys(labels).length !== names.length) throw this.#wrongLabels(labels);
      series = this.newSeries(names.map((label) => labels[label]));
      this.#series.set(id, series);
    }
    return series;
  }

  #wrongLabels(labels: Labels<L>): TypeError {
    return new TypeError(
      `Cannot record '${this.name}': expected labels [${this.labelNames.join(", ")}], got [${
        Object.keys(labels).join(", ")
      }]`,
    );
  }

  /** A new series at zero; histograms add their buckets. */
  protected newSeries(labels: readonly string[]): Series {
    return { labels, value: 0 };
  }
}

/** A value that only goes up (or resets when the process restarts). */
export class Counter<L extends string = never> extends Metric<L> {
  /** The Prometheus metric type. */
  readonly type = "counter";

  /**
   * Adds `by` (defaults to 1) to the series of `labels`.
   *
   * @throws {RangeError} when `by` is negative.
   */
  inc(labels: Labels<L>, by = 1): void {
    if (!(by >= 0)) {
      throw new RangeError(`Cannot increase '${this.name}' by ${by}: counters only go up`);
    }
    this.seriesFor(labels).value += by;
  }

  /**
   * Sets the running total, for counters mirrored from a cumulative source
   * on scrape (CPU seconds, a cache's eviction count).
   */
  set(labels: Labels<L>, total: number): void {
    this.seriesFor(labels).value = total;
  }
}

/** A value that goes up and down. */
export class Gauge<L extends string = never> extends Metric<L> {
  /** The Prometheus metric type. */
  readonly type = "gauge";

  /** Sets the series of `labels` to `value`. */
  set(labels: Labels<L>, value: number): void {
    this.seriesFor(labels).value = value;
  }

  /** Adds `by` (defaults to 1) to the series of `labels`. */
  inc(labels: Labels<L>, by = 1): void {
    this.seriesFor(labels).value += by;
  }

  /** Subtracts `by` (defaults to 1) from the series of `labels`. */
  dec(labels: Labels<L>, by = 1): void {
    this.seriesFor(labels).value -= by;
  }
}

/** Observations counted into buckets by upper bound, with their sum and count. */
export class Histogram<L extends string = never> extends Metric<L> {
  /** The Prometheus metric type. */
  readonly type = "histogram";

  /**
   * Creates a histogram with these upper bounds (the `+Inf` bucket is implicit).
   *
   * @throws {TypeError} when `buckets` is empty, not finite or not strictly increasing.
   */
  constructor(
    name: string,
    help: string,
    readonly buckets: readonly number[],
    labelNames: readonly L[],
  ) {
    super(name, help, labelNames);
    const sorted = buckets.every((b, i) => Number.isFinite(b) && (i === 0 || b > buckets[i - 1]!));
    if (buckets.length === 0 || !sorted) {
      throw new TypeError(
        `Cannot register histogram '${name}': buckets must be finite and strictly increasing, got [${buckets}]`,
      );
    }
  }

  /** Counts `value` in the series of `labels`. */
  observe(labels: Labels<L>, value: number): void {
    const series = this.seriesFor(labels);
    let i = this.buckets.findIndex((bound) => value <= bound);
    if (i === -1) i = this.buckets.length;
    series.buckets![i]!++;
    series.sum! += value;
    series.value++;
  }

  /** A bucket line per bound and `+Inf`, then `_sum` and `_count`. */
  protected override renderPrefixes(pairs: readonly string[]): readonly string[] {
    const bounds = [...this.buckets.map(formatFloat), "+Inf"];
    return [
      ...bounds.map((le) => `${this.name}_bucket${braces([...pairs, `le="${le}"`])} `),
      `${this.name}_sum${braces(pairs)} `,
      `${this.name}_count${braces(pairs)} `,
    ];
  }

  /** A series with one counter per bucket. */
  protected override newSeries(labels: readonly string[]): Series {
    return { labels, value: 0, buckets: new Array(this.buckets.length + 1).fill(0), sum: 0 };
  }
}

/**
 * `count` bounds from `start`, each `factor` times the previous. Multiplies
 * step by step as Go's `prometheus.ExponentialBuckets` does, so the rounding,
 * and hence the `le` labels, come out identical (`9.999999999999999e-06`).
 */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  const buckets: number[] = [];
  for (let bound = start; buckets.length < count; bound *= factor) buckets.push(bound);
  return buckets;
}

/** Holds metrics and renders them; one per process, passed to whoever records. */
export class Registry {
  readonly #metrics = new Map<string, Metric<string>>();
  /** The metrics by name, sorted once per registration rather than on every render. */
  #sorted: Metric<string>[] = [];
  readonly #collectors = new Set<() => void>();

  /**
   * Registers a counter with these label names.
   *
   * @throws {TypeError} when the name is taken or a name is invalid.
   */
  counter<const L extends string = never>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
  ): Counter<L> {
    return this.#register(new Counter(name, help, labelNames));
  }

  /**
   * Registers a gauge with these label names.
   *
   * @throws {TypeError} when the name is taken or a name is invalid.
   */
  gauge<const L extends string = never>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
  ): Gauge<L> {
    return this.#register(new Gauge(name, help, labelNames));
  }

  /**
   * Registers a histogram with these label names and bucket bounds.
   *
   * @throws {TypeError} when the name is taken, a name is invalid or the buckets are not increasing.
   */
  histogram<const L extends string = never>(
    name: string,
    help: string,
    buckets: readonly number[],
    labelNames: readonly L[] = [],
  ): Histogram<L> {
    return this.#register(new Histogram(name, help, buckets, labelNames));
  }

  /** Runs `collect` before each render; returns a function that unregisters it. */
  onCollect(collect: () => void): () => void {
    this.#collectors.add(collect);
    return () => this.#collectors.delete(collect);
  }

  /** Every metric in the text exposition format 0.0.4, sorted by name. */
  render(): string {
    for (const collect of this.#collectors) {
      try {
        collect();
      } catch (error) {
        logger("metrics").error("metrics collector failed: {error}", { error });
      }
    }
    let text = "";
    for (const metric of this.#sorted) {
      text += metric.header;
      for (const series of metric.series()) {
        const prefixes = metric.prefixes(series);
        if (!series.buckets) {
          text += prefixes[0] + formatFloat(series.value) + "\n";
          continue;
        }
        let cumulative = 0;
        for (let i = 0; i < series.buckets.length; i++) {
          cumulative += series.buckets[i]!;
          text += prefixes[i] + formatFloat(cumulative) + "\n";
        }
        const n = series.buckets.length;
        text += prefixes[n] + formatFloat(series.sum!) + "\n" + prefixes[n + 1] +
          formatFloat(series.value) + "\n";
      }
    }
    return text;
  }

  #register<M extends Metric<string>>(metric: M): M {
    if (this.#metrics.has(metric.name)) {
      throw new TypeError(`Cannot register metric '${metric.name}': the name is already taken`);
    }
    this.#metrics.set(metric.name, metric);
    this.#sorted = [...this.#metrics.keys()].sort().map((name) => this.#metrics.get(name)!);
    return metric;
  }
}

/**
 * A number as Go's `strconv.FormatFloat(v, 'g', -1, 64)` writes it, which is
 * what Prometheus' client writes: shortest digits, exponent form below 1e-4
 * and from 1e6 on, two-digit exponents.
 */
export function formatFloat(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  if (value === 0) return "0";
  // Shortest digits keep the order of the doubles, so the exponent below is
  // in [-4, 6) exactly when the magnitude is.
  const magnitude = Math.abs(value);
  if (magnitude >= 1e-4 && magnitude < 1e6) return String(value);
  const [mantissa, exponent] = value.toExponential().split("e") as [string, string];
  const exp = Number(exponent);
  const digits = String(Math.abs(exp)).padStart(2, "0");
  return `${mantissa}e${exp < 0 ? "-" : "+"}${digits}`;
}

function braces(pairs: readonly string[]): string {
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

function escapeHelp(text: string): string {
  return text.replaceAll("\\", "\\\\").replaceAll("\n", "\\n");
}

function escapeLabel(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
}
