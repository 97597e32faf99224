/**
 * The command line of `deno task bench`: flags, their defaults (full and
 * `--quick`), and the variants to compare (V8 flag sets × concurrency).
 *
 * V8 flag sets are separated by commas, the flags of one set joined by `+`:
 * `--v8-flags-sets default,--lite-mode,--max-semi-space-size=1+--lite-mode`.
 * `shipped` is the target's own flags (what its users run), `default` is no
 * flags at all (V8's defaults), and `matrix` is the standard comparison.
 * Several targets, separated by commas, are measured side by side: the first
 * is the one the others are divided by.
 *
 * @example
 * ```ts
 * import { parseOptions } from "./options.ts";
 * const options = parseOptions(["--quick", "--concurrency", "1,4"]);
 * options.sizes; // [50]
 * options.variants.length; // 2
 * parseOptions(["--target", "kinglet,../peers/kube-rs/target.json"]).targets.length; // 2
 * ```
 *
 * @module
 */
import { dirname, join } from "node:path";
import { type FlagSpec, parseDuration, parseFlags, UsageError } from "../../lib/cli/flags.ts";
import { BACKGROUND_NAMES } from "./background.ts";
import { SCENARIO_NAMES, type ScenarioName } from "../measure/results.ts";
import type { ScenarioSettings } from "./scenario_steps.ts";
import { DEFAULT_SCENARIOS } from "./scenarios.ts";

/** A variant before the target is known: `"shipped"` stands for the target's own flags. */
export interface VariantSpec {
  v8Flags: readonly string[] | "shipped";
  concurrency?: number;
}

/** Everything the harness runs with. */
export interface BenchOptions extends ScenarioSettings {
  quick: boolean;
  sizes: number[];
  scenarios: ScenarioName[];
  /** One folder for everything; see {@link outputFolders}. */
  out?: string;
  /** A run to keep, under this name; see {@link outputFolders}. */
  name?: string;
  /** Target names or files, in the order given; the first is the reference of the ratios. */
  targets: string[];
  variants: VariantSpec[];
  replicas: number;
  /** What each run's cluster holds before the operator starts: `none`, or a preset's name. */
  background: string;
  scrapeIntervalMs: number;
  kubeconfig?: string;
  compare?: string;
  from?: string;
  help: boolean;
}

/** A `--name`: folders of letters, digits, `.`, `_` and `-`, none of them `.` or `..`. */
const RUN_NAME = /^(?!\.\.?(\/|$))[\w.-]+(\/(?!\.\.?(\/|$))[\w.-]+)*$/;

/** The `matrix` flag sets: each memory flag alone and the combinations worth having. */
export const MATRIX: readonly (readonly string[])[] = [
  [],
  ["--max-semi-space-size=1"],
  ["--optimize-for-size"],
  ["--lite-mode"],
  ["--max-semi-space-size=1", "--optimize-for-size"],
  ["--max-semi-space-size=1", "--lite-mode"],
  ["--max-semi-space-size=1", "--optimize-for-size", "--lite-mode"],
];

const SPECS: FlagSpec[] = [
  {
    name: "quick",
    type: "boolean",
    default: "false",
    help: "Small sizes and short phases, for CI: a few minutes.",
  },
  {
    name: "sizes",
    type: "string",
    help: "Object counts of the sized scenarios. Default 100,1000,5000 (quick: 50).",
  },
  {
    name: "scenarios",
    type: "string",
    default: DEFAULT_SCENARIOS.join(","),
    help: `Scenarios to run, of ${SCENARIO_NAMES.join(", ")}. ${
      SCENARIO_NAMES.filter((name) => !DEFAULT_SCENARIOS.includes(name)).join(", ")
    } run only when asked for by name.`,
  },
  {
    name: "name",
    type: "string",
    help:
      "Keep the run under this name: results.json and logs into bench/results/<name>/ (git-ignored), report.md, charts and summary.json into bench/latest/<name>/ (committed).",
  },
  {
    name: "out",
    type: "string",
    help:
      "Without --name: one folder for results.json, logs, report.md, charts and summary.json. Default bench/results/<timestamp>.",
  },
  {
    name: "target",
    type: "string",
    default: "kinglet",
    help:
      "Targets separated by commas, each a name under bench/targets/ or the path of a target JSON file; several are measured side by side, with ratios against the first.",
  },
  {
    name: "v8-flags-sets",
    type: "string",
    default: "shipped",
    help:
      "V8 flag sets to compare: sets separated by commas, flags within a set by +; shipped, default and matrix are keywords.",
  },
  {
    name: "concurrency",
    type: "string",
    help: "Max concurrent reconciles to compare, e.g. 1,4,16. Default: the target's own.",
  },
  {
    name: "replicas",
    type: "integer",
    default: "1",
    help: "Replicas in each object (pods that kwok makes Ready).",
  },
  {
    name: "background",
    type: "string",
    default: "none",
    help:
      "What each run's cluster holds before the operator starts: none (empty), or realistic (Helm release Secrets, ConfigMaps, Deployments and Services of other teams; see bench/README.md).",
  },
  {
    name: "rate",
    type: "integer",
    help:
      "Objects created (and updated, deleted), or admissions sent, per second. Default 50 (quick: 25).",
  },
  { name: "idle", type: "duration", help: "Length of the idle scenario. Default 60s (quick: 5s)." },
  {
    name: "admission",
    type: "duration",
    help: "How long the admission scenario sends admissions at --rate. Default 30s (quick: 5s).",
  },
  {
    name: "baseline",
    type: "duration",
    help: "Quiet time before the load of sized scenarios. Default 10s (quick: 2s).",
  },
  {
    name: "hold",
    type: "duration",
    help: "Time with all objects Ready before the update. Default 30s (quick: 3s).",
  },
  {
    name: "ready-timeout",
    type: "duration",
    help: "Longest wait for objects to become Ready or gone. Default 10m (quick: 2m).",
  },
  {
    name: "scrape-interval",
    type: "duration",
    help: "How often /metrics is scraped. Default 5s (quick: 2s).",
  },
  {
    name: "kubeconfig",
    type: "string",
    help:
      "Run against this cluster (a namespace per run) instead of a fresh local control plane per run.",
  },
  {
    name: "compare",
    type: "string",
    help:
      "An earlier summary.json (e.g. bench/latest/<run>/summary.json) or results.json: print and report the ratio of every figure against it.",
  },
  {
    name: "from",
    type: "string",
    help:
      "Run nothing: re-render the report, charts and summary of this results.json (into --out or bench/latest/<name>/, default its folder).",
  },
];

/** Usage text for `--help`. Flags are not read from the environment, which the operator shares. */
export function usage(): string {
  const lines = ["Usage: deno task bench [flags]", "", "Flags:"];
  for (const spec of SPECS) {
    const value = spec.type === "boolean" ? "" : ` ${spec.type}`;
    const fallback = spec.default === undefined ? "" : ` Default ${spec.default}.`;
    lines.push(`  --${spec.name}${value}`, `      ${spec.help}${fallback}`);
  }
  lines.push("  -h, --help", "      Show this help.");
  return lines.join("\n");
}

/**
 * Parses the command line.
 *
 * @throws {UsageError} on an unknown flag or a malformed value.
 */
export function parseOptions(args: readonly string[]): BenchOptions {
  const { values, positionals, help } = parseFlags(SPECS, args, {});
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const quick = values.quick === "true";
  const pick = (name: string, full: string, fast: string) => values[name] ?? (quick ? fast : full);
  const ms = (name: string, full: string, fast: string) => parseDuration(pick(name, full, fast))!;
  const scenarios = list(values.scenarios!, "--scenarios").map((name) => {
    if (!(SCENARIO_NAMES as readonly string[]).includes(name)) {
      throw new UsageError(
        `--scenarios: unknown scenario ${name}; known: ${SCENARIO_NAMES.join(", ")}`,
      );
    }
    return name as ScenarioName;
  });
  const background = values.background!;
  if (!BACKGROUND_NAMES.includes(background)) {
    throw new UsageError(
      `--background: unknown background ${background}; known: ${BACKGROUND_NAMES.join(", ")}`,
    );
  }
  if (background !== "none" && values.kubeconfig !== undefined) {
    throw new UsageError(
      `--background ${background} fills a fresh local control plane; ` +
        "a cluster given by --kubeconfig has a background of its own",
    );
  }
  if (values.name !== undefined && !RUN_NAME.test(values.name)) {
    throw new UsageError(
      `--name: ${values.name} is not a run name: letters, digits, '.', '_' and '-', ` +
        "in folders separated by '/'",
    );
  }
  if (values.name !== undefined && values.out !== undefined) {
    throw new UsageError(
      "--name and --out: a kept run's folders are bench/results/ and bench/latest/",
    );
  }
  const rate = Number(pick("rate", "50", "25"));
  if (rate < 1) throw new UsageError("--rate: expected at least 1 object per second");
  return {
    quick,
    sizes: list(pick("sizes", "100,1000,5000", "50"), "--sizes").map((s) => positive(s, "--sizes")),
    scenarios,
    ...(values.out !== undefined && { out: values.out }),
    ...(values.name !== undefined && { name: values.name }),
    targets: targets(values.target!),
    variants: variants(values["v8-flags-sets"]!, values.concurrency),
    replicas: Number(values.replicas),
    background,
    ratePerSecond: rate,
    idleMs: ms("idle", "60s", "5s"),
    admissionMs: ms("admission", "30s", "5s"),
    baselineMs: ms("baseline", "10s", "2s"),
    holdMs: ms("hold", "30s", "3s"),
    readyTimeoutMs: ms("ready-timeout", "10m", "2m"),
    scrapeIntervalMs: ms("scrape-interval", "5s", "2s"),
    ...(values.kubeconfig !== undefined && { kubeconfig: values.kubeconfig }),
    ...(values.compare !== undefined && { compare: values.compare }),
    ...(values.from !== undefined && { from: values.from }),
    help,
  };
}

/** Where a benchmark writes: its raw results and logs, and its report, charts and summary. */
export interface OutputFolders {
  /** `results.json` (every sample, scrape and object timing) and `logs/`. */
  raw: string;
  /** `report.md`, the SVG charts and `summary.json`. */
  report: string;
}

/**
 * The folders of a benchmark. A run kept by `--name` writes its raw results
 * into `bench/results/<name>/`, which git ignores, and its report, charts and
 * summary into `bench/latest/<name>/`, which git keeps. Any other run writes
 * everything into one folder: `--out`, else `bench/results/<timestamp>/`.
 * With `--from` the raw results are that file's folder, and the report goes
 * to `bench/latest/<name>/`, `--out` or the same folder.
 *
 * @example
 * ```ts
 * import { outputFolders, parseOptions } from "./options.ts";
 * outputFolders(parseOptions(["--name", "front-door-15"]));
 * // { raw: "bench/results/front-door-15", report: "bench/latest/front-door-15" }
 * ```
 */
export function outputFolders(options: BenchOptions, now: Date = new Date()): OutputFolders {
  const raw = options.from !== undefined
    ? dirname(options.from)
    : options.name !== undefined
    ? join("bench", "results", options.name)
    : options.out ?? join("bench", "results", now.toISOString().replace(/[:.]/g, "-"));
  const report = options.name !== undefined ? join("bench", "latest", options.name) : options.out;
  return { raw, report: report ?? raw };
}

/** A short name for a flag set: `default`, `semi1`, `size`, `lite`, `semi1+lite`, … */
export function flagSetName(flags: readonly string[]): string {
  if (flags.length === 0) return "default";
  return flags.map((flag) => {
    const semi = /^--max-semi-space-size=(\d+)$/.exec(flag);
    if (semi) return `semi${semi[1]}`;
    if (flag === "--optimize-for-size") return "size";
    if (flag === "--lite-mode") return "lite";
    return flag.replace(/^-+/, "");
  }).join("+");
}

function variants(sets: string, concurrency: string | undefined): VariantSpec[] {
  const flagSets: (readonly string[] | "shipped")[] = [];
  for (const set of list(sets, "--v8-flags-sets")) {
    if (set === "matrix") flagSets.push(...MATRIX);
    else if (set === "shipped") flagSets.push("shipped");
    else if (set === "default") flagSets.push([]);
    else {
      const flags = set.split("+");
      const bad = flags.find((f) => !/^--[a-z0-9-]+(=\S+)?$/.test(f));
      if (bad !== undefined) {
        throw new UsageError(
          `--v8-flags-sets: ${JSON.stringify(bad)} is not a V8 flag such as --lite-mode`,
        );
      }
      flagSets.push(flags);
    }
  }
  const levels = concurrency === undefined
    ? [undefined]
    : list(concurrency, "--concurrency").map((c) => positive(c, "--concurrency"));
  return flagSets.flatMap((v8Flags) =>
    levels.map((level) => (level === undefined ? { v8Flags } : { v8Flags, concurrency: level }))
  );
}

function targets(text: string): string[] {
  const items = list(text, "--target");
  const twice = items.find((item, i) => items.indexOf(item) !== i);
  if (twice !== undefined) {
    throw new UsageError(`--target: ${twice} is given twice; each target runs once per scenario`);
  }
  return items;
}

function list(text: string, flag: string): string[] {
  const items = text.split(",").map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new UsageError(`${flag}: expected a comma-separated list`);
  return items;
}

function positive(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    throw new UsageError(`${flag}: expected positive integers, got ${JSON.stringify(text)}`);
  }
  return n;
}
