/**
 * One log line per retry round while the API server cannot be reached,
 * shared by every watcher of one client.
 *
 * When the server is down or presents a certificate nobody trusts, every
 * watch fails the same way at the same moment, and each watcher retries on
 * its own backoff. Logging each failure repeats one fact once per watcher and
 * per round, each time with a long watch URL. An {@link OutageReport} writes
 * the first failure of each round (the n-th failure in a row of any watcher)
 * as one warning that names the server, the cause and when the next attempt
 * is; the caller logs the rest at debug. The first success after an outage
 * says so once.
 *
 * @example
 * ```ts
 * import { OutageReport } from "./outage.ts";
 * const lines: string[] = [];
 * const report = new OutageReport({ write: (level, line) => lines.push(`${level} ${line}`) });
 * const down = { server: "https://10.0.0.1:6443", reason: "connection refused" };
 * report.failed(down, 1, 800); // true: the warning of round 1
 * report.failed(down, 1, 810); // false: the same round, already told
 * report.recovered(); // info: reachable again
 * lines.length; // 2
 * ```
 *
 * @module
 */
import { logger } from "../../log.ts";

/** A failure to reach the server at all, as {@link TransportError} describes it. */
export interface Unreachable {
  /** The API server's URL. */
  server: string;
  /** Why it cannot be reached, e.g. `connection refused`. */
  reason: string;
}

/** Levels an {@link OutageReport} writes at. */
export type OutageLevel = "info" | "warn";

/** Options of {@link OutageReport}. */
export interface OutageReportOptions {
  /** Where lines go. Defaults to the `watcher` logger. */
  write?: (level: OutageLevel, line: string, properties: Record<string, unknown>) => void;
}

const log = logger("watcher");

/** Collapses the watchers' retries of one unreachable server into a line per round. */
export class OutageReport {
  readonly #write: NonNullable<OutageReportOptions["write"]>;
  /** Highest failure-in-a-row count already logged at warning; 0 when the server answers. */
  #round = 0;
  #server = "";

  /** Creates a report that has seen no failure. */
  constructor(options: OutageReportOptions = {}) {
    this.#write = options.write ??
      ((level, line, properties) => log[level](line, properties));
  }

  /**
   * Tells that a request could not reach `where.server`, being the caller's
   * `attempt`-th failure in a row, retried in `delayMs`. Returns whether it was
   * logged as the line of its round; if not, the caller's own debug line is all.
   */
  failed(where: Unreachable, attempt: number, delayMs: number): boolean {
    if (attempt <= this.#round) return false;
    const properties = { server: where.server, error: where.reason, delayMs, attempt };
    this.#round = attempt;
    this.#server = where.server;
    this.#write(
      "warn",
      "Cannot reach the API server {server}: {error}; next attempt in {delayMs} ms",
      properties,
    );
    return true;
  }

  /** Tells that a request got an answer: ends the outage, if any, with one line. */
  recovered(): void {
    if (this.#round === 0) return;
    this.#write("info", "The API server {server} answers again after {rounds} failed rounds", {
      server: this.#server,
      rounds: this.#round,
    });
    this.#round = 0;
  }
}
