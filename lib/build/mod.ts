/**
 * The build kinglet uses for itself, for any operator written on kinglet: a
 * minified bundle with linked source maps, rebuilt only when its inputs
 * change, then one `deno compile` binary per Linux target, with the Deno
 * grants the runtime needs, the V8 flags the benchmark chose, V8's code cache
 * off, and the allocator and TLS environment it runs best in.
 *
 * An author's project runs it as its `deno task build` through `cli.ts`;
 * {@link build} is the same as a function. The binaries need `denort`, the
 * runtime `deno compile` appends the program to: set `DENORT_BIN` to one of
 * exactly this Deno version where dl.deno.land is unreachable. An operator's
 * `<PREFIX>_ALLOW_<KIND>` variables widen its grants (see {@link grantsFromEnv}).
 * {@link shippedCommand} runs the bundle as the binary runs, for a launcher
 * such as the benchmark. {@link vendorKinglet} copies kinglet into a project, with the record of
 * which kinglet it is, and {@link kingletDigest} checks the copy.
 *
 * This module runs Deno's tooling as subprocesses: import it from build
 * scripts, never from an operator's run path.
 *
 * @example
 * ```ts
 * import { denoFlags, envPrefix, grantsFromEnv, operatorGrants } from "./mod.ts";
 * const grants = grantsFromEnv({ MIRROR_ALLOW_RUN: "aws" }, {
 *   prefix: envPrefix("mirror"),
 *   base: operatorGrants("mirror"),
 * });
 * denoFlags(grants).includes("--allow-run=aws"); // true
 * ```
 *
 * @module
 */
export { build, type BuildOptions, type BuildReport } from "./build.ts";
export { bundle, BUNDLE_OPTIONS, type BundleOptions, type BundleResult } from "./bundle.ts";
export {
  chooseTargets,
  compile,
  compileArgs,
  type CompileArgsOptions,
  type CompileOptions,
  type DenortSource,
  elfTarget,
  findDenort,
  type FindDenortOptions,
  type Target,
  TARGETS,
} from "./compile.ts";
export { BuildError } from "./errors.ts";
export {
  allowVariable,
  denoFlags,
  envPrefix,
  type Grant,
  type Grants,
  grantsFromEnv,
  type GrantsFromEnvOptions,
  IGNORED_ENV,
  operatorGrants,
  PERMISSION_KINDS,
  type PermissionKind,
} from "./grants.ts";
export { type ShippedCommand, shippedCommand, type ShippedCommandOptions } from "./shipped.ts";
export { CODE_CACHE_FLAG, RUNTIME_ENV, runtimeEnv, V8_FLAGS } from "./tuning.ts";
export { kingletDigest, type KingletRecord, vendorKinglet } from "./vendor.ts";
