/**
 * Records one run while a scenario drives it: samples the operator's process
 * tree every second, scrapes its `/metrics` every few seconds, and at every
 * phase boundary takes one of each, so figures over a phase window have
 * exact edges. It also keeps the status line current.
 *
 * An operator restart is one more {@link RunRecorder.attach}; samples and
 * scrapes carry the index of the process they came from.
 *
 * @example
 * ```ts ignore
 * import { RunRecorder } from "./recorder.ts";
 * const recorder = new RunRecorder({ label: "idle default", progress, scrapeIntervalMs: 5_000 });
 * recorder.attach(operator);
 * await recorder.phase("idle", () => new Promise((r) => setTimeout(r, 60_000)));
 * await recorder.detach();
 * recorder.samples.length; // about 60
 * ```
 *
 * @module
 */
import { scrapeMetrics } from "./metrics_scraper.ts";
import { readProcessTree } from "./process_sampler.ts";
import type { Phase, ProcessSample, Scrape } from "./results.ts";

/** A process the recorder follows: its process tree by `pid`, its metrics at `metricsUrl`. */
export interface Followed {
  readonly pid: number;
  readonly metricsUrl: string;
}

/** Where the recorder reports: a line per phase, and the status line (the harness' Progress). */
export interface RecorderOutput {
  log(message: string): void;
  status(line: string): void;
}

/** Options of {@link RunRecorder}. */
export interface RecorderOptions {
  /** Names the run on the status line, e.g. `scale-1000 default`. */
  label: string;
  progress: RecorderOutput;
  /** Defaults to 1 000 ms. */
  sampleIntervalMs?: number;
  scrapeIntervalMs: number;
}

/** Records samples, scrapes and phases of one run; see the module documentation. */
export class RunRecorder {
  readonly startedAt = new Date();
  readonly samples: ProcessSample[] = [];
  readonly scrapes: Scrape[] = [];
  readonly phases: Phase[] = [];
  /** Extra text for the status line, e.g. object counts. */
  detail: () => string = () => "";
  readonly #options: RecorderOptions;
  readonly #t0 = performance.now();
  #operator: Followed | undefined;
  #process = -1;
  #timer: ReturnType<typeof setInterval> | undefined;
  #scraping: Promise<void> | undefined;
  #lastScrape = -Infinity;
  #phase = "start";

  constructor(options: RecorderOptions) {
    this.#options = options;
  }

  /** Milliseconds since the run started. */
  now(): number {
    return performance.now() - this.#t0;
  }

  /** Starts sampling `operator`, the next process of this run. */
  attach(operator: Followed): void {
    this.#stopTimer();
    this.#operator = operator;
    this.#process++;
    this.#timer = setInterval(() => this.#tick(), this.#options.sampleIntervalMs ?? 1_000);
    this.sample();
  }

  /** Stops sampling, after any scrape in flight. */
  async detach(): Promise<void> {
    this.#stopTimer();
    await this.#scraping;
    this.#operator = undefined;
  }

  /** Reads the process tree now; nothing when it is gone. */
  sample(): ProcessSample | undefined {
    if (!this.#operator) return undefined;
    const reading = readProcessTree(this.#operator.pid);
    if (!reading) return undefined;
    const sample = { t: this.now(), process: this.#process, ...reading };
    this.samples.push(sample);
    return sample;
  }

  /** Scrapes `/metrics` now; a failed scrape is skipped, not fatal. */
  async scrape(): Promise<Scrape | undefined> {
    const operator = this.#operator;
    if (!operator) return undefined;
    const t = this.now();
    this.#lastScrape = t;
    try {
      const series = await scrapeMetrics(operator.metricsUrl);
      const scrape = { t, process: this.#process, series };
      this.scrapes.push(scrape);
      return scrape;
    } catch {
      return undefined;
    }
  }

  /** Runs `body` as the phase `name`, with a sample and a scrape at both ends. */
  async phase<T>(name: string, body: () => Promise<T>): Promise<T> {
    this.#phase = name;
    await this.#mark();
    const startMs = this.now();
    this.#options.progress.log(`${this.#options.label}: ${name}`);
    try {
      return await body();
    } finally {
      const endMs = this.now();
      await this.#mark();
      this.phases.push({ name, startMs, endMs });
      this.#options.progress.log(
        `${this.#options.label}: ${name} took ${
          ((endMs - startMs) / 1000).toFixed(1)
        } s ${this.detail()}`
          .trimEnd(),
      );
    }
  }

  /** Redraws the status line. */
  status(): void {
    const last = this.samples.at(-1);
    const rss = last ? `RSS ${(last.rssBytes / 2 ** 20).toFixed(1)} MiB` : "";
    const seconds = `${Math.round(this.now() / 1000)}s`;
    this.#options.progress.status(
      [this.#options.label, this.#phase, seconds, this.detail(), rss].filter(Boolean).join("  "),
    );
  }

  async #mark(): Promise<void> {
    await this.#scraping;
    this.sample();
    await this.scrape();
  }

  #tick(): void {
    this.sample();
    this.status();
    const due = this.now() - this.#lastScrape >= this.#options.scrapeIntervalMs;
    if (due && this.#scraping === undefined) {
      this.#scraping = this.scrape().then(() => void (this.#scraping = undefined));
    }
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
