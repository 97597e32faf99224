// deno-lint-ignore-file no-console -- a terminal program
/**
 * `deno task build`: bundles main.ts into minified JavaScript with linked
 * source maps in `dist/bundle/` ({@link BUNDLE_DIR}), the program that
 * `deno task start`, the dev loop, the benchmark, the tests and
 * `deno task compile` run. Why kinglet runs from a bundle rather than from
 * main.ts: docs/performance.md, "V8 flags and the bundle", and `CODE_CACHE_FLAG`
 * in lib/build/tuning.ts. The bundling itself is `bundle` of
 * `@kinglet/kinglet/build` (lib/build/), the one an operator author's build
 * runs too.
 *
 * ```sh
 * deno task build            # rebuilds only when an input changed
 * deno task build --force    # rebuilds anyway
 * deno run -A hack/build.ts --entry bench/targets/floor.ts   # another program, into dist/floor/
 * ```
 *
 * The bundle is rebuilt only when its inputs changed: main.ts, lib/, crds/,
 * deno.json, deno.lock and the Deno version, hashed into `dist/bundle/.inputs`
 * (the npm packages are pinned by deno.json and deno.lock). A build writes
 * into a new folder and then takes the place of the old one, under a lock, so
 * that processes building at the same time (parallel tests) build once and
 * never see half a bundle. It ends with `deno cache` of the entry: the first
 * run of a freshly written module is Deno's analysis of it, and without that
 * warm-up the first kinglet started afterwards keeps some 15 MiB more memory
 * for good.
 *
 * `deno bundle` is esbuild, which Deno fetches from the npm registry the first
 * time it bundles.
 *
 * @module
 */
import { basename, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BuildError, bundle } from "../lib/build/mod.ts";

export { BuildError };

const REPO = fileURLToPath(new URL("..", import.meta.url));

/** The folder the bundle is written to; git ignores `dist/`. */
export const BUNDLE_DIR: string = join(REPO, "dist", "bundle");

/** The bundle's entry, what every launcher runs. */
export const BUNDLE_ENTRY: string = join(BUNDLE_DIR, "main.js");

/**
 * What the bundle is built from, relative to the repository: a change to any
 * file under these rebuilds it. A test checks that every source in the
 * bundle's source maps lies under one of them or is an npm package.
 */
export const BUNDLE_INPUTS: readonly string[] = [
  "main.ts",
  "lib/",
  "crds/",
  "deno.json",
  "deno.lock",
];

/** Options of {@link buildBundle}. */
export interface BuildOptions {
  /** Rebuild even when no input changed. Defaults to false. */
  force?: boolean;
  /**
   * The program to bundle, relative to the repository. Defaults to main.ts,
   * into {@link BUNDLE_DIR}; another program, e.g. the benchmark's
   * bench/targets/floor.ts, goes into `dist/<its name>/` and is rebuilt when it, lib/,
   * deno.json or deno.lock change.
   */
  source?: string;
  /** Where progress goes. Defaults to nowhere. */
  log?: (message: string) => void;
}

/** What {@link buildBundle} did. */
export interface BuildResult {
  /** The entry to run, {@link BUNDLE_ENTRY} for main.ts. */
  entry: string;
  /** Whether the bundle was written anew (false: its inputs had not changed). */
  built: boolean;
}

/**
 * Makes `dist/bundle/` hold the bundle of the current sources, rebuilding it
 * when an input changed, and warms Deno's cache for it.
 *
 * @throws {BuildError} when `deno bundle` or `deno cache` fails, with their output.
 */
export async function buildBundle(options: BuildOptions = {}): Promise<BuildResult> {
  const source = options.source ?? "main.ts";
  const other = source !== "main.ts";
  const name = basename(source).replace(/\.[cm]?[jt]sx?$/, "");
  const { entry, built } = await bundle({
    root: REPO,
    entry: source,
    outDir: other ? join("dist", name) : BUNDLE_DIR,
    inputs: other
      ? [source, ...BUNDLE_INPUTS.filter((input) => input !== "main.ts")]
      : BUNDLE_INPUTS,
    ...(options.force && { force: true }),
    ...(options.log && { log: options.log }),
  });
  return { entry, built };
}

async function main(args: string[]): Promise<number> {
  const at = args.indexOf("--entry");
  const source = at === -1 ? undefined : args[at + 1];
  const unknown = args.filter((arg, i) => arg !== "--force" && (at === -1 || i < at || i > at + 1));
  if (unknown.length || (at !== -1 && !source)) {
    console.error(
      `build: ${unknown.length ? `unknown argument ${unknown[0]}` : "--entry needs a file"}\n` +
        "usage: deno task build [--force] [--entry <file>]",
    );
    return 2;
  }
  try {
    const { built, entry } = await buildBundle({
      force: args.includes("--force"),
      ...(source !== undefined && { source: relative(REPO, resolve(source)) }),
      log: (message) => console.error(`build: ${message}`),
    });
    if (!built) console.error(`build: ${relative(Deno.cwd(), entry)} is up to date`);
    return 0;
  } catch (error) {
    if (!(error instanceof BuildError)) throw error;
    console.error(`build: ${error.message}`);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
