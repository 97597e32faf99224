/**
 * How to run an operator as its build ships it, for a launcher that is not
 * the binary, such as kinglet's benchmark: the bundle under `deno run` with
 * exactly the grants, `--no-code-cache`, V8 flags and environment that
 * `deno compile` bakes into the binary ({@link denoFlags} and
 * {@link RUNTIME_ENV}), read from the build's own source rather than copied,
 * so that what is measured is what ships.
 *
 * @example
 * ```ts
 * import { shippedCommand } from "./shipped.ts";
 * const { command, env } = shippedCommand({
 *   name: "mirror-operator",
 *   deno: "{deno}",
 *   env: { KUBECONFIG: "{kubeconfig}" },
 *   read: ["{kubeconfig}"],
 * });
 * command.includes("--no-code-cache"); // true
 * env.MALLOC_MMAP_THRESHOLD_; // "16384"
 * ```
 *
 * @module
 */
import { denoFlags, type Grant, operatorGrants, widen } from "./grants.ts";
import { RUNTIME_ENV, V8_FLAGS } from "./tuning.ts";

/** Options of {@link shippedCommand}. */
export interface ShippedCommandOptions {
  /** The operator's name, a DNS label: its grants are `operatorGrants(name)`. */
  name: string;
  /** The Deno to run, e.g. a launcher's placeholder. @default Deno.execPath() */
  deno?: string;
  /** The bundle `build` writes, relative to where the command runs. @default "dist/bundle/main.js" */
  entry?: string;
  /**
   * Variables set for the program only, by `env` ahead of Deno (the same
   * process, so a launcher measures the operator alone); their names are
   * added to its env grant.
   */
  env?: Readonly<Record<string, string>>;
  /** Paths added to its read grant, e.g. the kubeconfig a launcher writes. */
  read?: readonly string[];
  /** Arguments after the bundle. */
  args?: readonly string[];
  /**
   * The V8 flags argument as the launcher wants it written, e.g.
   * `{v8Flags}` for a placeholder it fills; the build's own by default.
   */
  v8Flags?: string;
}

/** A command that runs the operator as it ships, and the environment it starts with. */
export interface ShippedCommand {
  /** `env`, the variables, then Deno, `run`, the flags, the bundle and the arguments. */
  command: string[];
  /** {@link RUNTIME_ENV}: what the binary's units and image set. */
  env: Record<string, string>;
  /** The V8 flags the build bakes in, {@link V8_FLAGS}. */
  v8Flags: string[];
}

/** The command and environment that run `options.name`'s bundle as its binary runs. */
export function shippedCommand(options: ShippedCommandOptions): ShippedCommand {
  const base = operatorGrants(options.name);
  const variables = Object.entries(options.env ?? {});
  const env: Grant = base.env === "all" ? "all" : widen(base.env, variables.map(([name]) => name));
  const read: Grant = base.read === "all" ? "all" : widen(base.read, options.read ?? []);
  const flags = denoFlags({ ...base, env, read }).map((flag) =>
    options.v8Flags !== undefined && flag.startsWith("--v8-flags=")
      ? `--v8-flags=${options.v8Flags}`
      : flag
  );
  return {
    command: [
      "env",
      ...variables.map(([name, value]) => `${name}=${value}`),
      options.deno ?? Deno.execPath(),
      "run",
      ...flags,
      options.entry ?? "dist/bundle/main.js",
      ...options.args ?? [],
    ],
    env: { ...RUNTIME_ENV },
    v8Flags: [...V8_FLAGS],
  };
}
