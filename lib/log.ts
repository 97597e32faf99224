/**
 * Structured logging for kinglet, on LogTape: JSON lines by default, text for
 * terminals. Every module logs through {@link logger} with its own category
 * under `kinglet`.
 *
 * @example
 * ```ts
 * import { logger } from "./log.ts";
 * logger("queue").debug("requeued {key}", { key: "default/web" });
 * ```
 *
 * @module
 */
import {
  configure,
  getJsonLinesFormatter,
  getLogger,
  getTextFormatter,
  type Logger,
  type LogLevel,
  reset,
} from "@logtape/logtape";

/** Output format of the log sink. */
export type LogFormat = "json" | "text";

/** The log levels accepted by `--log-level`. */
export const LOG_LEVELS = ["trace", "debug", "info", "warning", "error", "fatal"] as const;

/** Options of {@link setupLogging}. */
export interface LoggingOptions {
  /** Defaults to `"json"`. */
  format?: LogFormat;
  /** Lowest level written. Defaults to `"info"`. */
  level?: LogLevel;
  /** Where lines go. Defaults to standard error. */
  write?: (line: string) => void;
}

/**
 * Configures the process-wide log sink. Safe to call more than once: the last
 * call wins.
 */
export async function setupLogging(options: LoggingOptions = {}): Promise<void> {
  const format = options.format ?? "json";
  const write = options.write ?? ((line: string) => Deno.stderr.writeSync(encoder.encode(line)));
  const formatter = format === "json" ? getJsonLinesFormatter() : getTextFormatter();
  await reset();
  await configure({
    reset: true,
    sinks: { out: (record) => write(formatter(record)) },
    loggers: [
      { category: ["kinglet"], lowestLevel: options.level ?? "info", sinks: ["out"] },
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: ["out"] },
    ],
  });
}

const encoder = new TextEncoder();

/** A logger for one part of kinglet, e.g. `logger("watcher")`. */
export function logger(...category: string[]): Logger {
  return getLogger(["kinglet", ...category]);
}
