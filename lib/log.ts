/**
 * Structured logging for kinglet and the operators built on it, silent until
 * {@link setupLogging} is called (an operator calls it once at start; the
 * runtime's `./runtime` export re-exports it):
 * JSON lines when standard error is not a terminal, text lines that read like sentences when it is (or as
 * `--log-format` says). Every module logs through {@link logger} with its own
 * category under `kinglet`, a message template and its properties:
 * `logger("queue").debug("requeued {key}", { key })`.
 *
 * The JSON lines keep LogTape's shape (`@timestamp`, `level`, `message`,
 * `logger`, `properties`), so log pipelines built for it still parse them.
 * The logger is kinglet's own rather than LogTape's because an npm package on
 * the run path loads Deno's Node compatibility layer, about 4 MiB of resident
 * memory for a few dozen lines of code.
 *
 * @example
 * ```ts
 * import { logger, setupLogging } from "./log.ts";
 * const lines: string[] = [];
 * setupLogging({ format: "text", write: (line) => lines.push(line) });
 * logger("queue").info("requeued {key} after {ms} ms", { key: "default/web", ms: 250 });
 * lines[0]?.endsWith("[INF] kinglet·queue: requeued default/web after 250 ms\n"); // true
 * ```
 *
 * @module
 */
import { rfc3339 } from "./_rfc3339.ts";

/** Output format of the log sink. */
export type LogFormat = "json" | "text";

/** How severe a log line is; a sink writes its level and those above. */
export type LogLevel = "trace" | "debug" | "info" | "warning" | "error" | "fatal";

/** The log levels accepted by `--log-level`, lowest first: a level's index is its rank. */
export const LOG_LEVELS: readonly LogLevel[] = [
  "trace",
  "debug",
  "info",
  "warning",
  "error",
  "fatal",
];

/** Options of {@link setupLogging}. */
export interface LoggingOptions {
  /** Defaults to `"text"` when standard error is a terminal, `"json"` otherwise. */
  format?: LogFormat;
  /** Lowest level written. Defaults to `"info"`. */
  level?: LogLevel;
  /** Where lines go. Defaults to standard error. */
  write?: (line: string) => void;
  /** The clock of the timestamps. Defaults to `Date.now`. */
  now?: () => number;
}

/** Values a message template refers to by name, e.g. `{ key: "default/web" }`. */
export type LogProperties = Record<string, unknown>;

/** A logger for one category; each method takes a template such as `"synced {count}"`. */
export interface Logger {
  trace(message: string, properties?: LogProperties): void;
  debug(message: string, properties?: LogProperties): void;
  info(message: string, properties?: LogProperties): void;
  warn(message: string, properties?: LogProperties): void;
  error(message: string, properties?: LogProperties): void;
  fatal(message: string, properties?: LogProperties): void;
}

interface Sink {
  rank: number;
  format: LogFormat;
  write: (line: string) => void;
  now: () => number;
}

const encoder = new TextEncoder();
const JSON_LEVEL = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"] as const;
const TEXT_LEVEL = ["TRC", "DBG", "INF", "WRN", "ERR", "FTL"] as const;

/** Until {@link setupLogging} is called nothing is written, as a library's users expect. */
const SILENT: Sink = { rank: Infinity, format: "json", write: () => {}, now: Date.now };

let sink: Sink = SILENT;

function defaultSink(options: LoggingOptions): Sink {
  return {
    rank: LOG_LEVELS.indexOf(options.level ?? "info"),
    format: options.format ?? (Deno.stderr.isTerminal() ? "text" : "json"),
    write: options.write ?? ((line) => Deno.stderr.writeSync(encoder.encode(line))),
    now: options.now ?? Date.now,
  };
}

/**
 * Configures the process-wide log sink. Safe to call more than once: the last
 * call wins, for loggers made before it too.
 *
 * @throws {RangeError} for a level or format that is not one of the above.
 */
export function setupLogging(options: LoggingOptions = {}): void {
  if (options.level !== undefined && !LOG_LEVELS.includes(options.level)) {
    throw new RangeError(
      `Cannot set up logging: 'level' must be one of ${LOG_LEVELS.join(", ")}, got ${
        JSON.stringify(options.level)
      }`,
    );
  }
  if (options.format !== undefined && options.format !== "json" && options.format !== "text") {
    throw new RangeError(
      `Cannot set up logging: 'format' must be json or text, got ${JSON.stringify(options.format)}`,
    );
  }
  sink = defaultSink(options);
}

/** Writes nothing again until the next {@link setupLogging}, e.g. after a test. */
export function resetLogging(): void {
  sink = SILENT;
}

/** A logger for one part of kinglet, e.g. `logger("watcher")`. */
export function logger(...category: string[]): Logger {
  const path = ["kinglet", ...category];
  const at = (rank: number) => (message: string, properties: LogProperties = {}) => {
    if (rank < sink.rank) return;
    sink.write(line(sink.format, sink.now(), rank, path, message, properties));
  };
  return {
    trace: at(0),
    debug: at(1),
    info: at(2),
    warn: at(3),
    error: at(4),
    fatal: at(5),
  };
}

/** One line of the sink's format: LogTape's JSON record, or a sentence after stamp and level. */
function line(
  format: LogFormat,
  time: number,
  rank: number,
  category: string[],
  template: string,
  properties: LogProperties,
): string {
  if (format === "json") {
    const record = {
      "@timestamp": rfc3339(time, 3),
      level: JSON_LEVEL[rank],
      message: render(template, properties, jsonValue),
      logger: category.join("."),
      properties,
    };
    return `${JSON.stringify(record, errorReplacer)}\n`;
  }
  const stamp = rfc3339(time, 3).replace("T", " ").replace("Z", " +00:00");
  const message = render(template, properties, textValue);
  return `${stamp} [${TEXT_LEVEL[rank]}] ${category.join("·")}: ${message}\n`;
}

/** The template with each `{name}` replaced by its property; `{{` and `}}` are braces. */
function render(
  template: string,
  properties: LogProperties,
  value: (v: unknown) => string,
): string {
  return template.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (match, name: string | undefined) => {
    if (name === undefined) return match[0]!;
    return name in properties ? value(properties[name]) : match;
  });
}

function jsonValue(value: unknown): string {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
    return JSON.stringify(value);
  }
  return textValue(value);
}

/** Text lines quote a value only where it would not read as one word (logfmt's rule). */
function textValue(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value === "string") {
    return value === "" || /[\s"=]/.test(value) ? JSON.stringify(value) : value;
  }
  if (value === undefined || typeof value !== "object" || value === null) return String(value);
  try {
    return JSON.stringify(value, errorReplacer) ?? String(value);
  } catch {
    return String(value);
  }
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (!(value instanceof Error)) return value;
  const out: Record<string, unknown> = { name: value.name, message: value.message };
  if (value.stack) out.stack = value.stack;
  if (value.cause !== undefined) out.cause = value.cause;
  return out;
}
