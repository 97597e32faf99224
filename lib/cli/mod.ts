/**
 * The command line of an operator written on kinglet, as kinglet's own
 * reads it: {@link operatorFlags} parses the flags `kinglet run` takes to
 * connect and log (`--kubeconfig`, `--context`, `--log-format`,
 * `--log-level`), `--leader-elect` and `--memory-limit`, each also set by
 * the operator's `<PREFIX><FLAG>` variable; {@link exitOnError} says what a
 * failed run needs, a missing Deno permission with the
 * `<PREFIX>_ALLOW_<KIND>` variable its build reads.
 *
 * Exit codes, as kinglet's: 0 done, 1 failed (a supervisor may start it
 * again), 2 a flag or variable is wrong (starting it again cannot help; the
 * generated systemd units do not).
 *
 * @example An operator's main.ts
 * ```ts ignore
 * import { exitOnError, operatorFlags } from "@kinglet/kinglet/cli";
 * import { Manager, setupLogging } from "@kinglet/kinglet/runtime";
 * import { mirrorController } from "./src/controller.ts";
 * import { operator } from "./src/operator.ts";
 *
 * const flags = operatorFlags(operator); // --help prints the flags; a bad one exits 2
 * setupLogging(flags.logging);
 * const manager = new Manager({
 *   connection: flags.connection,
 *   memoryLimit: flags.memoryLimit,
 *   ...(flags.leaderElect && {
 *     leaderElection: { namespace: operator.namespace, name: operator.leaseName },
 *   }),
 * });
 * manager.add(mirrorController);
 * const outcome = await manager.run().catch((error) => exitOnError(operator, error));
 * Deno.exit(outcome === "stopped" ? 0 : 1);
 * ```
 *
 * @module
 */
export { type FlagSpec, UsageError } from "./flags.ts";
export {
  exitOnError,
  failure,
  OPERATOR_FLAGS,
  type OperatorCommand,
  type OperatorFlags,
  operatorFlags,
  parseOperatorFlags,
} from "./operator_flags.ts";
export { explainPermissionError, type PermissionProgram } from "./permissions.ts";
export type { LogFormat, LoggingOptions, LogLevel } from "../log.ts";
