/**
 * kinglet's Deno permissions, V8 flags and allocator settings: those of
 * `@kinglet/kinglet/build` (lib/build/, where each choice is explained) for
 * the operator named `kinglet`. `deno task start` passes them to `deno run`,
 * `deno task compile` bakes them into the binary, and the tests run kinglet
 * under them.
 *
 * Every kind can be widened without editing code: `KINGLET_ALLOW_<KIND>`
 * (see {@link allowVariable}) holds a comma-separated list added to
 * {@link KINGLET_GRANTS}, or `all`. Network access is the exception that
 * narrows: it is granted whole because the API server's address is only known
 * at run time, so a list there replaces "all" by exactly that list.
 *
 * @example
 * ```ts
 * import { denoFlags, grantsFromEnv } from "./_permissions.ts";
 * const flags = denoFlags(grantsFromEnv({ KINGLET_ALLOW_READ: "/home/me/.kube/config" }));
 * flags.includes("--allow-sys=hostname"); // true
 * ```
 *
 * @module
 */
import * as build from "../lib/build/mod.ts";
import type { Grants } from "../lib/build/mod.ts";

export { allowVariable } from "../lib/cli/permissions.ts";
export {
  CODE_CACHE_FLAG,
  type Grant,
  type Grants,
  IGNORED_ENV,
  V8_FLAGS,
} from "../lib/build/mod.ts";

/** The environment every kinglet process starts with: {@link build.RUNTIME_ENV}. */
export const KINGLET_ENV: Readonly<Record<string, string>> = build.RUNTIME_ENV;

/**
 * {@link KINGLET_ENV} under the variables of `env`: what the user set wins.
 *
 * @example
 * ```ts
 * import { kingletEnv } from "./_permissions.ts";
 * kingletEnv({}).DENO_TLS_CA_STORE; // ","
 * kingletEnv({ DENO_TLS_CA_STORE: "system" }).DENO_TLS_CA_STORE; // "system"
 * ```
 */
export function kingletEnv(env: Record<string, string | undefined>): Record<string, string> {
  return build.runtimeEnv(env);
}

/** What kinglet needs and nothing more, for the usual places it runs. */
export const KINGLET_GRANTS: Grants = build.operatorGrants("kinglet");

/**
 * {@link KINGLET_GRANTS} widened (or, for the network, narrowed) by the
 * `KINGLET_ALLOW_<KIND>` variables in `env`.
 *
 * @throws {TypeError} when a variable lists an empty entry.
 */
export function grantsFromEnv(
  env: Record<string, string | undefined>,
  base: Grants = KINGLET_GRANTS,
): Grants {
  return build.grantsFromEnv(env, { prefix: "KINGLET", base });
}

/**
 * The permission flags, `--no-code-cache` and V8 flags for `deno run` and
 * `deno compile`, the same for both.
 *
 * @example
 * ```ts
 * import { denoFlags, KINGLET_GRANTS } from "./_permissions.ts";
 * denoFlags(KINGLET_GRANTS).includes("--no-code-cache"); // true
 * ```
 */
export function denoFlags(grants: Grants = KINGLET_GRANTS): string[] {
  return build.denoFlags(grants);
}
