/**
 * The program the tests start as kinglet: the bundle users run (hack/build.ts),
 * built at most once per test process (and only when a source changed since
 * the last build), under the flags of `deno task start`.
 *
 * @module
 */
import { buildBundle } from "../../hack/build.ts";
import { denoFlags, type Grants, KINGLET_GRANTS } from "../../hack/_permissions.ts";

let entry: Promise<string> | undefined;

/** The bundle's entry point, built on first use. */
export function kingletBundle(): Promise<string> {
  entry ??= buildBundle().then((result) => result.entry);
  return entry;
}

/** Options of {@link kingletArgs}. */
export interface KingletArgsOptions {
  /** The grants, {@link KINGLET_GRANTS} unless given. */
  grants?: Grants;
  /** Deno flags added after the start task's, e.g. `--unsafely-ignore-certificate-errors`. */
  denoFlags?: readonly string[];
}

/** The `deno` arguments that run kinglet with `args` as `deno task start` does. */
export async function kingletArgs(
  args: readonly string[],
  options: KingletArgsOptions = {},
): Promise<string[]> {
  const flags = denoFlags(options.grants ?? KINGLET_GRANTS);
  return ["run", ...flags, ...(options.denoFlags ?? []), await kingletBundle(), ...args];
}
