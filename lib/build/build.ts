/**
 * An operator's whole build: its grants read from the environment, the
 * bundle, then one binary per target for which denort is at hand. kinglet's
 * own `deno task compile` and an author's `deno task build` (`cli.ts`) are
 * this one function.
 *
 * @example
 * ```ts ignore
 * import { build } from "./build.ts";
 * const report = await build({ name: "mirror", root: "/src/mirror", bundleOnly: true });
 * report.bundle.entry; // "/src/mirror/dist/bundle/main.js"
 * ```
 *
 * @module
 */
import { join, relative, resolve } from "node:path";
import { bundle, type BundleOptions, type BundleResult } from "./bundle.ts";
import { chooseTargets, compile, findDenort, type Target } from "./compile.ts";
import { envPrefix, type Grants, grantsFromEnv, operatorGrants } from "./grants.ts";

/** Options of {@link build}. */
export interface BuildOptions
  extends Pick<BundleOptions, "root" | "entry" | "inputs" | "force" | "log"> {
  /**
   * The operator's name, a DNS label: it names the binaries
   * (`<name>-<target>`) and the prefix of the `<PREFIX>_ALLOW_<KIND>`
   * variables (`mirror-operator`: `MIRROR_OPERATOR_ALLOW_READ`).
   */
  name: string;
  /**
   * The output folder, relative to `root`: the bundle goes to
   * `<outDir>/bundle/`, the binaries to `<outDir>/<name>-<target>`.
   * Defaults to `dist`.
   */
  outDir?: string;
  /**
   * The targets to compile. Defaults to both of `TARGETS`, or with
   * `DENORT_BIN` set the target of that file.
   */
  targets?: readonly string[];
  /** Bundle only, compile nothing. Defaults to false. */
  bundleOnly?: boolean;
  /** Whether `deno compile` may download denort when dl.deno.land answers. Defaults to true. */
  download?: boolean;
  /** The grants before the variables widen them. Defaults to `operatorGrants(name)`. */
  grants?: Grants;
  /**
   * The environment: `DENORT_BIN`, the `<PREFIX>_ALLOW_<KIND>` variables,
   * and what `deno compile` runs in. Defaults to this process's.
   */
  env?: Record<string, string>;
}

/** What {@link build} built, and what it could not. */
export interface BuildReport {
  /** The bundle, built anew or found up to date. */
  bundle: BundleResult;
  /** The binaries written, by target, with their size in bytes. */
  binaries: { target: Target; path: string; size: number }[];
  /** The targets not built for want of denort, with what to do about it. */
  missing: { target: Target; path: string; advice: string }[];
}

/**
 * Bundles the operator, then compiles it for each target whose denort is at
 * hand; a target without one is reported in {@link BuildReport.missing},
 * not thrown, since the bundle and the other targets still stand.
 *
 * @throws {TypeError} when `name` is no DNS label or an `<PREFIX>_ALLOW_`
 * variable lists an empty entry.
 * @throws {BuildError} when the entry is missing, a target is unknown or
 * `DENORT_BIN` does not fit it, or bundling or compiling fails.
 */
export async function build(options: BuildOptions): Promise<BuildReport> {
  const log = options.log ?? (() => {});
  const root = resolve(options.root ?? ".");
  const env = options.env ?? Deno.env.toObject();
  const outDir = resolve(root, options.outDir ?? "dist");
  // Every refusal comes before the bundle, which takes a while.
  const grants = grantsFromEnv(env, {
    prefix: envPrefix(options.name),
    base: options.grants ?? operatorGrants(options.name),
  });
  const denort = env.DENORT_BIN ? resolve(env.DENORT_BIN) : undefined;
  const targets = options.bundleOnly ? [] : await chooseTargets(options.targets ?? [], denort);

  const bundled = await bundle({
    root,
    entry: options.entry ?? "main.ts",
    outDir: join(outDir, "bundle"),
    ...(options.inputs && { inputs: options.inputs }),
    ...(options.force && { force: true }),
    log,
  });
  const report: BuildReport = { bundle: bundled, binaries: [], missing: [] };
  for (const target of targets) {
    const path = join(outDir, `${options.name}-${target}`);
    const source = await findDenort(target, {
      ...(denort && { denort }),
      ...(options.download === false && { download: false }),
    });
    if (source.kind === "missing") {
      report.missing.push({ target, path, advice: source.advice });
      continue;
    }
    const shown = relative(Deno.cwd(), path) || path;
    log(`${target} → ${shown}`);
    const size = await compile({
      root,
      target,
      output: path,
      entry: bundled.entry,
      grants,
      env,
      ...(denort && { denort }),
    });
    log(`built ${shown} (${(size / 2 ** 20).toFixed(1)} MiB)`);
    report.binaries.push({ target, path, size });
  }
  return report;
}
