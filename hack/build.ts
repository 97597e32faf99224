// deno-lint-ignore-file no-console -- a terminal program
/**
 * `deno task build`: bundles main.ts into minified JavaScript with linked
 * source maps in `dist/bundle/` ({@link BUNDLE_DIR}), the program that
 * `deno task start`, the dev loop, the benchmark, the tests and
 * `deno task compile` run. Why kinglet runs from a bundle rather than from
 * main.ts: README "Performance", and `CODE_CACHE_FLAG` in hack/_permissions.ts.
 *
 * ```sh
 * deno task build            # rebuilds only when an input changed
 * deno task build --force    # rebuilds anyway
 * deno run -A hack/build.ts --entry bench/floor.ts   # another program, into dist/floor/
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
import { runQuiet } from "./_process.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));

/** The folder the bundle is written to; git ignores `dist/`. */
export const BUNDLE_DIR: string = join(REPO, "dist", "bundle");

/** The bundle's entry, what every launcher runs. */
export const BUNDLE_ENTRY: string = join(BUNDLE_DIR, "main.js");

/** What one build bundles: kinglet's main.ts, or another program of the repository. */
interface Program {
  /** The source, relative to the repository. */
  source: string;
  dir: string;
  entry: string;
  inputs: readonly string[];
}

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

/**
 * The `deno bundle` options. Code splitting keeps the modules main.ts imports
 * dynamically (zod and yaml for `install` and `crds`) in chunks of their own,
 * loaded only by the commands that need them; `--keep-names` keeps the class
 * and function names that errors and logs show; the linked source maps let
 * Deno report stack traces at their TypeScript lines, reading a map only when
 * it formats a stack trace.
 *
 * The platform decides only which build of an npm package is bundled
 * (kinglet's own code comes out the same): for `deno`, esbuild picks yaml's
 * Node build, CommonJS whose `require("process")` cannot run inside an ES
 * module ("Dynamic require of "node:process" is not supported"), so
 * `kinglet crds` failed; the browser build is an ES module.
 */
const BUNDLE_OPTIONS: readonly string[] = [
  "--platform",
  "browser",
  "--minify",
  "--keep-names",
  "--code-splitting",
  "--sourcemap=linked",
];

/** `deno bundle` or `deno cache` failed; the message carries their output. */
export class BuildError extends Error {
  override name = "BuildError";
}

/** Options of {@link buildBundle}. */
export interface BuildOptions {
  /** Rebuild even when no input changed. Defaults to false. */
  force?: boolean;
  /**
   * The program to bundle, relative to the repository. Defaults to main.ts,
   * into {@link BUNDLE_DIR}; another program, e.g. the benchmark's
   * bench/floor.ts, goes into `dist/<its name>/` and is rebuilt when it, lib/,
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
  const log = options.log ?? (() => {});
  const program = programOf(options.source ?? "main.ts");
  await Deno.mkdir(join(REPO, "dist"), { recursive: true });
  using lock = await Deno.open(join(REPO, "dist", ".bundle.lock"), {
    create: true,
    write: true,
  });
  await lock.lock(true);
  const inputs = await inputsHash(program.inputs);
  const stamp = join(program.dir, ".inputs");
  const current = await Deno.readTextFile(stamp).catch(() => "");
  const built = options.force || current !== inputs || !(await exists(program.entry));
  if (built) {
    const started = performance.now();
    // A sibling of the bundle's folder, so that the maps' relative paths to the sources hold.
    const fresh = await Deno.makeTempDir({ dir: join(REPO, "dist"), prefix: ".bundle-" });
    try {
      await deno(["bundle", ...BUNDLE_OPTIONS, "--outdir", fresh, join(REPO, program.source)], [
        `deno bundle could not bundle ${program.source}: a syntax error below names its file and line;`,
        "otherwise check that the npm registry (or NPM_CONFIG_REGISTRY's mirror) is reachable,",
        "where deno bundle fetches esbuild the first time.",
      ]);
      await Deno.writeTextFile(join(fresh, ".inputs"), inputs);
      await Deno.remove(program.dir, { recursive: true }).catch((error) => {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      });
      await Deno.rename(fresh, program.dir);
      // A temporary folder is its owner's alone; the bundle is for whoever runs kinglet.
      await Deno.chmod(program.dir, 0o755);
    } catch (error) {
      await Deno.remove(fresh, { recursive: true }).catch(() => {});
      throw error;
    }
    const { size } = await Deno.stat(program.entry);
    log(
      `bundled ${program.source} into ${relative(Deno.cwd(), program.entry)} (${
        (size / 1024).toFixed(0)
      } KiB) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  await deno(["cache", program.entry], [`deno cache ${program.entry} failed.`]);
  return { entry: program.entry, built };
}

function programOf(source: string): Program {
  if (source === "main.ts") {
    return { source, dir: BUNDLE_DIR, entry: BUNDLE_ENTRY, inputs: BUNDLE_INPUTS };
  }
  const name = basename(source).replace(/\.[cm]?[jt]sx?$/, "");
  const dir = join(REPO, "dist", name);
  return {
    source,
    dir,
    entry: join(dir, `${name}.js`),
    inputs: [source, ...BUNDLE_INPUTS.filter((input) => input !== "main.ts")],
  };
}

/** Runs `deno <args>` in the repository; its output only on failure, under `advice`. */
async function deno(args: string[], advice: string[]): Promise<void> {
  const failed = await runQuiet(Deno.execPath(), args, { cwd: REPO });
  if (!failed) return;
  const text = failed.output.split("\n").filter((line) => !/deno bundle is experimental/.test(line))
    .join("\n").trim();
  throw new BuildError(`${advice.join("\n")}\n${text}`);
}

/** A hash of the Deno version, the bundle options and every input file's path and content. */
async function inputsHash(inputs: readonly string[]): Promise<string> {
  const files: string[] = [];
  for (const input of inputs) {
    if (input.endsWith("/")) await collect(join(REPO, input), files);
    else files.push(join(REPO, input));
  }
  files.sort();
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [
    encoder.encode(`${Deno.version.deno}\0${BUNDLE_OPTIONS.join(" ")}\0`),
  ];
  for (const file of files) {
    parts.push(encoder.encode(`${relative(REPO, file)}\0`), await Deno.readFile(file));
    parts.push(new Uint8Array(1));
  }
  const all = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", all));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

async function collect(dir: string, into: string[]): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) await collect(path, into);
    else if (entry.isFile) into.push(path);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
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
