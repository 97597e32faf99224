/**
 * Bundles an operator's entry into minified JavaScript with linked source
 * maps, the program its launchers and `deno compile` run. Why an operator
 * runs from a bundle rather than from its TypeScript: `CODE_CACHE_FLAG` in
 * `tuning.ts`.
 *
 * The bundle is rebuilt only when its inputs changed, hashed with the Deno
 * version into `<outDir>/.inputs`. A build writes into a new folder and then
 * takes the place of the old one, under a lock, so that processes building at
 * the same time (parallel tests) build once and never see half a bundle. It
 * ends with `deno cache` of the bundle: the first run of a freshly written
 * module is Deno's analysis of it, and without that warm-up the first
 * operator started afterwards keeps some 15 MiB more memory for good.
 *
 * `deno bundle` is esbuild, which Deno fetches from the npm registry the
 * first time it bundles.
 *
 * @example
 * ```ts ignore
 * import { bundle } from "./bundle.ts";
 * const { entry, built } = await bundle({ root: "/src/mirror", entry: "main.ts" });
 * // entry: "/src/mirror/dist/bundle/main.js"; built: false when nothing changed
 * ```
 *
 * @module
 */
import { basename, dirname, join, relative, resolve } from "node:path";
import { graphInputs, inputsHash } from "./_inputs.ts";
import { runDeno } from "./_run.ts";
import { BuildError } from "./errors.ts";

/**
 * The `deno bundle` options. Code splitting keeps the modules an entry
 * imports dynamically (kinglet's main.ts: zod and yaml for `install` and
 * `crds`) in chunks of their own, loaded only by the commands that need
 * them; `--keep-names` keeps the class and function names that errors and
 * logs show; the linked source maps let Deno report stack traces at their
 * TypeScript lines, reading a map only when it formats a stack trace.
 *
 * The platform decides only which build of an npm package is bundled (the
 * operator's own code comes out the same): for `deno`, esbuild picks yaml's
 * Node build, CommonJS whose `require("process")` cannot run inside an ES
 * module ("Dynamic require of "node:process" is not supported"), so reading
 * YAML failed; the browser build is an ES module.
 */
export const BUNDLE_OPTIONS: readonly string[] = [
  "--platform",
  "browser",
  "--minify",
  "--keep-names",
  "--code-splitting",
  "--sourcemap=linked",
];

/** Options of {@link bundle}. */
export interface BundleOptions {
  /**
   * The project's root: where its `deno.json` is, and where Deno runs.
   * Defaults to the current directory.
   */
  root?: string;
  /** The program to bundle, relative to `root`. Defaults to `main.ts`. */
  entry?: string;
  /**
   * The folder the bundle goes to, relative to `root`; it is replaced whole
   * by each build. Defaults to `dist/bundle`.
   */
  outDir?: string;
  /**
   * What the bundle is built from, relative to `root` (a folder ends with
   * `/`): a change to any of them rebuilds it. Defaults to every file the
   * entry imports, found by `deno info`, and `deno.json` and `deno.lock`.
   */
  inputs?: readonly string[];
  /** Rebuild even when no input changed. Defaults to false. */
  force?: boolean;
  /** Where progress goes. Defaults to nowhere. */
  log?: (message: string) => void;
}

/** What {@link bundle} did. */
export interface BundleResult {
  /** The absolute path of the bundle's entry, the program to run or compile. */
  entry: string;
  /** The absolute path of the folder holding the bundle and its chunks and maps. */
  dir: string;
  /** Whether the bundle was written anew (false: its inputs had not changed). */
  built: boolean;
}

/**
 * Makes `outDir` hold the bundle of the current sources, rebuilding it when
 * an input changed, and warms Deno's cache for it.
 *
 * @throws {BuildError} when the entry does not exist, or `deno info`,
 * `deno bundle` or `deno cache` fails, with their output.
 */
export async function bundle(options: BundleOptions = {}): Promise<BundleResult> {
  const log = options.log ?? (() => {});
  const root = resolve(options.root ?? ".");
  const source = options.entry ?? "main.ts";
  const dir = resolve(root, options.outDir ?? join("dist", "bundle"));
  const entry = join(dir, `${basename(source).replace(/\.[cm]?[jt]sx?$/, "")}.js`);
  await checkEntry(root, source);
  const inputs = options.inputs ?? await graphInputs(root, source);

  const parent = dirname(dir);
  await Deno.mkdir(parent, { recursive: true });
  using lock = await Deno.open(join(parent, ".bundle.lock"), { create: true, write: true });
  await lock.lock(true);
  const hash = await inputsHash(
    root,
    inputs,
    `${Deno.version.deno}\0${BUNDLE_OPTIONS.join(" ")}\0${source}`,
  );
  const stamp = join(dir, ".inputs");
  const current = await Deno.readTextFile(stamp).catch(() => "");
  const built = options.force || current !== hash || !(await exists(entry));
  if (built) {
    const started = performance.now();
    // A sibling of the bundle's folder, so that the maps' relative paths to the sources hold.
    const fresh = await Deno.makeTempDir({ dir: parent, prefix: ".bundle-" });
    try {
      await runDeno(["bundle", ...BUNDLE_OPTIONS, "--outdir", fresh, join(root, source)], root, [
        `deno bundle could not bundle ${source}: a syntax error below names its file and line;`,
        "otherwise check that the npm registry (or NPM_CONFIG_REGISTRY's mirror) is reachable,",
        "where deno bundle fetches esbuild the first time.",
      ]);
      await Deno.writeTextFile(join(fresh, ".inputs"), hash);
      await Deno.remove(dir, { recursive: true }).catch((error) => {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      });
      await Deno.rename(fresh, dir);
      // A temporary folder is its owner's alone; the bundle is for whoever runs the operator.
      await Deno.chmod(dir, 0o755);
    } catch (error) {
      await Deno.remove(fresh, { recursive: true }).catch(() => {});
      throw error;
    }
    const { size } = await Deno.stat(entry);
    log(
      `bundled ${source} into ${relative(Deno.cwd(), entry)} (${(size / 1024).toFixed(0)} KiB) ` +
        `in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  await runDeno(["cache", entry], root, [`deno cache ${entry} failed.`]);
  return { entry, dir, built };
}

async function checkEntry(root: string, source: string): Promise<void> {
  const path = join(root, source);
  const found = await Deno.stat(path).then((s) => s.isFile, () => false);
  if (!found) {
    throw new BuildError(
      `Cannot bundle ${source}: there is no file ${path}. Run the build from the project's ` +
        "root (the folder of its deno.json), or name the program with --entry <file>.",
    );
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
