/**
 * The one error of `@kinglet/kinglet/build`.
 *
 * @module
 */

/**
 * A build step failed or was asked for something it cannot do: a missing
 * entry, a bad name or target, `deno bundle`, `deno cache` or `deno compile`
 * failing, or no denort to compile with. The message says what failed, where,
 * and what to do; a failing tool's output follows it. Retrying the same build
 * does not help until the cause is fixed.
 *
 * @example
 * ```ts
 * import { BuildError } from "./errors.ts";
 * new BuildError("Cannot bundle main.ts: no such file").name; // "BuildError"
 * ```
 */
export class BuildError extends Error {
  /** Always `"BuildError"`. */
  override name = "BuildError";
}
