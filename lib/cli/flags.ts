/**
 * Command-line flags in the style of controller-runtime operators:
 * `--name=value` or `--name value`, booleans as `--flag` or `--flag=false`,
 * and each flag also read from an environment variable `KINGLET_<NAME>`
 * (upper case, dashes as underscores; an author's operator reads its own
 * prefix, see {@link ParseOptions}). A flag on the command line wins over its
 * variable.
 *
 * A variable set but empty (a line `KINGLET_X=` of node mode's environment
 * file) reads as unset, with a warning, where unset means the default; it is
 * refused where a value is needed (an address, a memory limit). An error
 * about a value set by a variable names the variable and the file.
 *
 * @example
 * ```ts
 * import { parseFlags } from "./flags.ts";
 * const flags = parseFlags(
 *   [{ name: "leader-elect", type: "boolean", default: "false", help: "Take a Lease." }],
 *   ["--leader-elect"],
 *   {},
 * );
 * flags.values["leader-elect"]; // "true"
 * ```
 *
 * @module
 */
import { parseAddress } from "../runtime/manager/http.ts";
import { parseMemoryLimit } from "../runtime/memory/limit.ts";
import { suggest } from "./suggest.ts";

/**
 * One flag. Values stay strings until the caller converts them. An `address`
 * is where a listener binds: `host:port`, `:port`, `[v6]:port`, or `0` to turn
 * the listener off; an empty one is refused, since it would turn the listener
 * off unnoticed (an environment file line such as `KINGLET_X=` sets it empty).
 * A `memory` limit is what `parseMemoryLimit` of the runtime takes (`64Mi`,
 * `500M`, bytes, `none`); an empty one is refused too, since a unit's own
 * limit, which an environment file's line overrides, would be dropped.
 */
export interface FlagSpec {
  /** The flag without its dashes, e.g. `leader-elect`. */
  name: string;
  /** What its value must be. */
  type: "string" | "boolean" | "integer" | "duration" | "address" | "memory";
  /** Shown in help; used when neither the flag nor its variable is set. */
  default?: string;
  /** Allowed values, checked on parse. */
  choices?: readonly string[];
  /** One paragraph of `--help`. */
  help: string;
}

/** Where node mode's units read the `KINGLET_*` variables from. */
export const ENV_FILE = "/etc/kinglet/kinglet.env";

/** Where a flag's value came from: its flag or its variable (a default has no source). */
export type FlagSource = "flag" | "env";

/** Options of {@link parseFlags}: whose variables set the flags, and what to forgive. */
export interface ParseOptions {
  /** The prefix of the variables, e.g. `MIRROR_OPERATOR_`. @default "KINGLET_" */
  prefix?: string;
  /** The node's environment file, named when a variable is refused. @default "/etc/kinglet/kinglet.env" */
  envFile?: string;
  /**
   * Flags whose variable, when it holds a value the flag refuses, is
   * ignored with a warning instead: settings this command shares with
   * another that must not stop it (install renews the token whatever the
   * log format run is given). Defaults to none.
   */
  lenient?: readonly string[];
}

/** A flag error: exit code 2, with the message and a pointer to `--help`. */
export class UsageError extends Error {
  /** The status a process ends with for it. */
  readonly exitCode = 2;
  /** A usage error saying `message`: what is wrong, where it was set, what to write. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Parsed flags: values by flag name (defaults applied) and positional arguments. */
export interface ParsedFlags {
  values: Record<string, string | undefined>;
  /** Where each value that is not a default came from. */
  sources: Record<string, FlagSource>;
  /** What was read other than as written (empty variables), to say once at start. */
  warnings: string[];
  positionals: string[];
  help: boolean;
}

/**
 * How a message names a setting: `--flag`, or the variable (under
 * `options.prefix`) and the file node mode reads it from (`options.envFile`).
 *
 * @example
 * ```ts
 * import { settingName } from "./flags.ts";
 * settingName("memory-limit", "env");
 * // "KINGLET_MEMORY_LIMIT (from the environment; in node mode, /etc/kinglet/kinglet.env)"
 * ```
 */
export function settingName(
  flag: string,
  source?: FlagSource,
  options: Pick<ParseOptions, "prefix" | "envFile"> = {},
): string {
  return source === "env" ? `${envName(flag, options.prefix)}${envOrigin(options)}` : `--${flag}`;
}

/** What follows a variable's name in a message: where a node sets it. */
function envOrigin(options: Pick<ParseOptions, "envFile">): string {
  return ` (from the environment; in node mode, ${options.envFile ?? ENV_FILE})`;
}

/** The environment variable that can set `flag`: `KINGLET_<FLAG>`, or under `prefix`. */
export function envName(flag: string, prefix = "KINGLET_"): string {
  return `${prefix}${flag.toUpperCase().replaceAll("-", "_")}`;
}

/**
 * Parses `args` against `specs`, then fills gaps from `env` (the variables
 * under `options.prefix`) and defaults.
 *
 * @throws {UsageError} on an unknown flag, a missing value or a value of the
 * wrong form, naming the flag or the variable (and its file) that set it.
 */
export function parseFlags(
  specs: readonly FlagSpec[],
  args: readonly string[],
  env: Record<string, string | undefined>,
  options: ParseOptions = {},
): ParsedFlags {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const given: Record<string, string> = {};
  const positionals: string[] = [];
  let help = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--help" || arg === "-h") {
      help = true;
      continue;
    }
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-")) {
      positionals.push(arg);
      continue;
    }
    const dashes = arg.startsWith("--") ? "--" : "-";
    const body = arg.slice(dashes.length);
    const eq = body.indexOf("=");
    const name = eq < 0 ? body : body.slice(0, eq);
    const spec = byName.get(name);
    if (!spec) {
      const near = suggest(name, specs.map((s) => s.name));
      throw new UsageError(
        `unknown flag ${dashes}${name}${near ? ` (did you mean --${near}?)` : ""}`,
      );
    }
    let value: string | undefined = eq < 0 ? undefined : body.slice(eq + 1);
    if (value === undefined) {
      if (spec.type === "boolean") value = "true";
      else {
        value = args[++i];
        if (value === undefined) throw new UsageError(`flag --${name} needs a value`);
      }
    }
    given[name] = value;
  }
  const values: Record<string, string | undefined> = {};
  const sources: Record<string, FlagSource> = {};
  const warnings: string[] = [];
  for (const spec of specs) {
    const fromFlag = given[spec.name];
    if (fromFlag !== undefined) {
      check(spec, fromFlag, { name: `--${spec.name}`, origin: "", unset: "leave the flag out" });
      values[spec.name] = fromFlag;
      sources[spec.name] = "flag";
      continue;
    }
    values[spec.name] = spec.default;
    const name = envName(spec.name, options.prefix);
    const fromEnv = env[name];
    if (fromEnv === undefined) continue;
    const variable = { name, origin: envOrigin(options), unset: "remove the variable" };
    if (fromEnv === "" && spec.default !== "" && !REFUSES_EMPTY.includes(spec.type)) {
      warnings.push(
        `${variable.name}${variable.origin} is set but empty, read as unset${
          spec.default === undefined ? "" : ` (its default, ${spec.default})`
        }: give it a value, or ${variable.unset}`,
      );
      continue;
    }
    try {
      check(spec, fromEnv, variable);
    } catch (error) {
      if (!(error instanceof UsageError && options.lenient?.includes(spec.name))) throw error;
      warnings.push(`${error.message}; ignored here, so its default applies`);
      continue;
    }
    values[spec.name] = fromEnv;
    sources[spec.name] = "env";
  }
  return { values, sources, warnings, positionals, help };
}

/** Types an empty variable is refused for, never read as unset: it would turn a listener or a limit off unnoticed. */
const REFUSES_EMPTY: readonly FlagSpec["type"][] = ["address", "memory"];

/** Where a value was set: the flag or its variable (and its file), and how to unset it there. */
interface Source {
  name: string;
  origin: string;
  unset: string;
}

function check(spec: FlagSpec, value: string, where: Source): void {
  const fail = (expected: string) => {
    throw new UsageError(
      `${where.name}=${JSON.stringify(value)}${where.origin}: expected ${expected}`,
    );
  };
  switch (spec.type) {
    case "boolean":
      if (value !== "true" && value !== "false") fail("true or false");
      break;
    case "integer":
      if (!/^\d+$/.test(value)) fail("a non-negative integer");
      break;
    case "duration":
      if (parseDuration(value) === undefined) fail("a duration such as 30s, 2m or 500ms");
      break;
    case "address":
      if (value === "") {
        throw new UsageError(
          `${where.name}${where.origin} is set but empty, which names no address: set it ` +
            `to host:port (such as 127.0.0.1:9090), to 0 to turn this listener off, or ${where.unset} ` +
            "to keep the default (kinglet run --help shows it)",
        );
      }
      if (value !== "0" && !isAddress(value)) {
        fail("host:port, :port or [ipv6]:port, such as 127.0.0.1:9090, or 0 to turn it off");
      }
      break;
    case "memory":
      try {
        parseMemoryLimit(value);
      } catch (error) {
        if (!(error instanceof RangeError)) throw error;
        const unset = value.trim() === "" ? `, or ${where.unset} to keep the default` : "";
        throw new UsageError(
          `${where.name}=${JSON.stringify(value)}${where.origin}: ${error.message}${unset}`,
        );
      }
      break;
    case "string":
      break;
  }
  if (spec.choices && !spec.choices.includes(value)) fail(`one of ${spec.choices.join(", ")}`);
}

function isAddress(value: string): boolean {
  try {
    parseAddress(value);
    return true;
  } catch {
    return false;
  }
}

/** Milliseconds of a Go-style duration (`500ms`, `30s`, `2m`, `1h`), or undefined. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text);
  if (!match) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] as "ms" | "s" | "m" | "h"];
  return Number(match[1]) * unit;
}

/**
 * Help text: `usage`, then `heading` over `specs`, one flag a paragraph, with
 * variable (unless `env` is false, for a command that reads none; a string
 * is the variables' prefix) and default.
 */
export function formatHelp(
  usage: string,
  specs: readonly FlagSpec[],
  heading = "Flags:",
  env: boolean | string = true,
): string {
  const prefix = typeof env === "string" ? env : undefined;
  const lines = [usage, "", heading];
  for (const s of specs) {
    const value = s.type === "boolean" ? "" : ` ${s.choices ? s.choices.join("|") : s.type}`;
    lines.push(`  --${s.name}${value}`);
    const extra = env ? [`env ${envName(s.name, prefix)}`] : [];
    if (s.default !== undefined && s.default !== "") extra.push(`default ${s.default}`);
    lines.push(`      ${s.help}${extra.length ? ` (${extra.join("; ")})` : ""}`);
  }
  lines.push("  -h, --help", "      Show this help.");
  return lines.join("\n");
}
