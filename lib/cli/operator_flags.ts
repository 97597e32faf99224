// deno-lint-ignore-file no-console -- a command line's output is its interface
/**
 * The command line of an operator written on kinglet, read the way `kinglet
 * run` reads its own: the same connection flags (`--kubeconfig`,
 * `--context`, `--log-format`, `--log-level`), `--leader-elect` and
 * `--memory-limit`, from the same declarations, each also set by the
 * operator's own variable (`MIRROR_OPERATOR_KUBECONFIG`,
 * `MIRROR_OPERATOR_MEMORY_LIMIT`: its `envPrefix`, then the flag in upper
 * case), as kinglet's are by `KINGLET_<FLAG>`.
 *
 * {@link operatorFlags} is what a `main.ts` calls, as a Go operator calls
 * `flag.Parse()`: `--help` prints the flags and exits 0, a bad flag or
 * variable says which, where and what to write, and exits 2, the status a
 * generated systemd unit does not restart on (`RestartPreventExitStatus=2`).
 * {@link exitOnError} ends a run that failed with the sentence kinglet's own
 * CLI would say, a missing Deno permission with the `<PREFIX>_ALLOW_<KIND>`
 * variable that grants it.
 *
 * @example
 * ```ts
 * import { parseOperatorFlags } from "./operator_flags.ts";
 * const operator = { name: "mirror-operator", envPrefix: "MIRROR_OPERATOR_" };
 * const flags = parseOperatorFlags(operator, ["--kubeconfig", "/etc/mirror/kubeconfig"], {
 *   MIRROR_OPERATOR_MEMORY_LIMIT: "128Mi",
 * });
 * flags.connection.kubeconfig; // "/etc/mirror/kubeconfig"
 * flags.memoryLimit; // 134217728
 * ```
 *
 * @module
 */
import { readEnv } from "../kube/config.ts";
import type { LogFormat, LoggingOptions, LogLevel } from "../log.ts";
import { cgroupMemoryLimit } from "../runtime/memory/cgroup.ts";
import { parseMemoryLimit } from "../runtime/memory/limit.ts";
import { envName, type FlagSpec, formatHelp, parseFlags, UsageError } from "./flags.ts";
import { explainPermissionError, type PermissionProgram } from "./permissions.ts";
import { CONNECTION_FLAGS, LEADER_ELECT_FLAG, MEMORY_LIMIT_FLAG } from "./run_flags.ts";

/** What the command line needs of an operator: an `OperatorDescription` of `./deploy` is one. */
export interface OperatorCommand {
  /** Its name, a DNS label: in messages, and the prefix of its `<PREFIX>_ALLOW_<KIND>` grants. */
  name: string;
  /** The prefix of its variables, e.g. `MIRROR_OPERATOR_`. */
  envPrefix: string;
}

/** The flags of an operator's `main.ts`: kinglet run's connection flags, `--leader-elect`, `--memory-limit`. */
export const OPERATOR_FLAGS: readonly FlagSpec[] = [
  ...CONNECTION_FLAGS,
  LEADER_ELECT_FLAG,
  MEMORY_LIMIT_FLAG,
];

/** What an operator's command line says. */
export interface OperatorFlags {
  /** How the Manager finds the cluster (`ManagerOptions.connection`). */
  connection: { kubeconfig?: string; context?: string };
  /** For `setupLogging`. */
  logging: LoggingOptions;
  /** Whether to campaign for the Lease. */
  leaderElect: boolean;
  /**
   * Bytes of resident memory to stay under (`ManagerOptions.memoryLimit`):
   * `--memory-limit`, else the container's cgroup limit; unset for `none`
   * and where there is neither.
   */
  memoryLimit?: number;
  /**
   * What was read other than as written: a variable set but empty, read as
   * unset. {@link operatorFlags} prints them; a caller of
   * {@link parseOperatorFlags} says them once logging is set up.
   */
  warnings: string[];
  /** Whether `--help` was given. */
  help: boolean;
}

/**
 * Reads `args` and the operator's variables in `env` (a flag wins over its
 * variable).
 *
 * @throws {UsageError} naming the flag or variable that is unknown or
 * malformed, where it was set and what to write instead.
 */
export function parseOperatorFlags(
  operator: OperatorCommand,
  args: readonly string[],
  env: Record<string, string | undefined>,
): OperatorFlags {
  const flags = parseFlags(OPERATOR_FLAGS, args, env, {
    prefix: operator.envPrefix,
    envFile: `/etc/${operator.name}/${operator.name}.env`,
  });
  if (flags.positionals.length) {
    throw new UsageError(`unexpected argument ${flags.positionals[0]}`);
  }
  const { values } = flags;
  const memory = values["memory-limit"] === undefined
    ? cgroupMemoryLimit()?.bytes
    : parseMemoryLimit(values["memory-limit"]);
  return {
    connection: {
      ...(values.kubeconfig && { kubeconfig: values.kubeconfig }),
      ...(values.context && { context: values.context }),
    },
    logging: {
      ...(values["log-format"] && { format: values["log-format"] as LogFormat }),
      level: (values["log-level"] ?? "info") as LogLevel,
    },
    leaderElect: values["leader-elect"] === "true",
    ...(memory && { memoryLimit: memory }),
    warnings: flags.warnings,
    help: flags.help,
  };
}

/**
 * The command line of this process (`Deno.args` and the operator's
 * variables, read one by one: no blanket `--allow-env` needed). `--help`
 * prints the flags and exits 0; a usage error is printed and exits 2; a
 * warning is printed to standard error, before logging is set up.
 */
export function operatorFlags(
  operator: OperatorCommand,
  args: readonly string[] = Deno.args,
): OperatorFlags {
  const env = readEnv(OPERATOR_FLAGS.map((spec) => envName(spec.name, operator.envPrefix)));
  let flags: OperatorFlags;
  try {
    flags = parseOperatorFlags(operator, args, env);
  } catch (error) {
    return exitOnError(operator, error);
  }
  if (flags.help) {
    const usage = `${operator.name} [flags]\n${operator.name} install --kubeconfig <admin> ` +
      "--node-kubeconfig <path>";
    console.log(formatHelp(usage, OPERATOR_FLAGS, "Flags:", operator.envPrefix));
    Deno.exit(0);
  }
  for (const warning of flags.warnings) console.error(`${operator.name}: ${warning}`);
  return flags;
}

/**
 * What `error` means for the one who started `program`, and the exit code:
 * 2 for a flag or variable that is wrong ({@link UsageError}), the error's
 * own `exitCode` where it has one (a configuration error found later, such
 * as credentials narrower than the run's scope: 2), 1 for the rest; a
 * missing Deno permission is explained with the variable that grants it
 * (see `explainPermissionError`).
 *
 * @example
 * ```ts
 * import { failure } from "./operator_flags.ts";
 * import { UsageError } from "./flags.ts";
 * failure({ name: "mirror-operator", buildTask: "deno task build" }, new UsageError("unknown flag --kubconfig"));
 * // { code: 2, message: "mirror-operator: unknown flag --kubconfig\nRun 'mirror-operator --help' for usage." }
 * ```
 */
export function failure(
  program: PermissionProgram,
  error: unknown,
): { code: number; message: string } {
  const { name } = program;
  if (error instanceof UsageError) {
    return { code: 2, message: `${name}: ${error.message}\nRun '${name} --help' for usage.` };
  }
  if (error instanceof Error && "exitCode" in error && typeof error.exitCode === "number") {
    return { code: error.exitCode, message: `${name}: ${error.message}` };
  }
  const permission = explainPermissionError(error, program);
  if (permission) return { code: 1, message: permission };
  return { code: 1, message: `${name}: ${error instanceof Error ? error.message : String(error)}` };
}

/**
 * Prints what {@link failure} makes of `error` for the operator, whose
 * binary `deno task build` builds, and exits with its code.
 */
export function exitOnError(operator: Pick<OperatorCommand, "name">, error: unknown): never {
  const { code, message } = failure({ name: operator.name, buildTask: "deno task build" }, error);
  console.error(message);
  Deno.exit(code);
}
