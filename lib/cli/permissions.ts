/**
 * What to do when Deno or the operating system refuses kinglet something.
 *
 * kinglet runs with narrow Deno permissions (read only the usual kubeconfig
 * and service account paths, a short list of environment variables, no
 * subprocesses; see "Binary" in docs/node-mode.md), so a kubeconfig in an
 * unusual place, an exec credential plugin or a narrowed network list meets a
 * denial. Deno's own message names the flag but not how to pass it to a
 * compiled binary; {@link explainPermissionError} says both. Each grant can be
 * widened with a `KINGLET_ALLOW_<KIND>` variable that `deno task start` reads
 * when it starts and `deno task compile` bakes into the binary; an operator
 * written on kinglet has its own (`MIRROR_OPERATOR_ALLOW_READ`), which its
 * `deno task build` reads, and names itself in the explanation (see
 * {@link PermissionProgram}).
 *
 * @example
 * ```ts
 * import { explainPermissionError } from "./permissions.ts";
 * const denied = new Deno.errors.NotCapable(
 *   'Requires read access to "/x/config", run again with the --allow-read flag',
 * );
 * explainPermissionError(denied);
 * // 'kinglet may not read "/x/config": start it with KINGLET_ALLOW_READ=/x/config deno task start, …'
 * ```
 *
 * @module
 */

/** The kinds of Deno permission, as in `--allow-<kind>`. */
export const PERMISSION_KINDS = [
  "read",
  "write",
  "net",
  "env",
  "sys",
  "run",
  "ffi",
  "import",
] as const;

/** One of {@link PERMISSION_KINDS}. */
export type PermissionKind = typeof PERMISSION_KINDS[number];

/** Operator names: a DNS label, as a binary, a systemd unit and a Kubernetes object take it. */
const OPERATOR_NAME = /^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The prefix of an operator's variables: its name in upper case, `-` as `_`.
 *
 * @example
 * ```ts
 * import { envPrefix } from "./permissions.ts";
 * envPrefix("kinglet"); // "KINGLET"
 * envPrefix("mirror-operator"); // "MIRROR_OPERATOR"
 * ```
 *
 * @throws {TypeError} when `name` is not a DNS label (lower-case letters, digits, `-`).
 */
export function envPrefix(name: string): string {
  checkOperatorName(name);
  return name.toUpperCase().replaceAll("-", "_");
}

/**
 * Refuses a name that cannot name a binary, a systemd unit and a variable prefix.
 *
 * @throws {TypeError} when `name` is not a DNS label (lower-case letters, digits, `-`).
 */
export function checkOperatorName(name: string): void {
  if (!OPERATOR_NAME.test(name)) {
    throw new TypeError(
      `Cannot use the operator name ${JSON.stringify(name)}: expected a DNS label of at most ` +
        `63 lower-case letters, digits and '-', starting with a letter (e.g. "mirror-operator")`,
    );
  }
}

/**
 * The variable that widens `kind` for `deno task start` and `deno task
 * compile`: a comma-separated list added to kinglet's grants, or `all`. An
 * operator built with `@kinglet/kinglet/build` reads its own, under the
 * prefix its name gives.
 *
 * @example
 * ```ts
 * import { allowVariable } from "./permissions.ts";
 * allowVariable("read"); // "KINGLET_ALLOW_READ"
 * allowVariable("read", "MIRROR"); // "MIRROR_ALLOW_READ"
 * ```
 *
 * @param prefix the operator's variable prefix; defaults to `KINGLET`.
 */
export function allowVariable(kind: PermissionKind, prefix = "KINGLET"): string {
  return `${prefix}_ALLOW_${kind.toUpperCase()}`;
}

/** The program a denial is explained for: kinglet, or an operator written on it. */
export interface PermissionProgram {
  /** Its name, which the explanation names and its `<PREFIX>_ALLOW_<KIND>` variables derive from. */
  name: string;
  /** The task that builds its binary and reads the variables. */
  buildTask: string;
  /** The task that runs it under `deno run` and reads the variables, if it has one. */
  startTask?: string;
}

/** kinglet itself: `deno task start` and `deno task compile` read `KINGLET_ALLOW_<KIND>`. */
export const KINGLET: PermissionProgram = {
  name: "kinglet",
  buildTask: "deno task compile",
  startTask: "deno task start",
};

/**
 * Explains a permission denial found in `error` or its `cause` chain: what
 * `program` may not do and the flag that allows it, for `deno run` (through
 * `deno task start`) or for a rebuilt binary, whichever Deno's message shows
 * is running. An operating system denial (`EACCES`) gets advice about the
 * user it runs as instead.
 *
 * @example An operator's binary built without a read grant for its kubeconfig
 * ```ts
 * import { explainPermissionError } from "./permissions.ts";
 * const denied = new Deno.errors.NotCapable(
 *   'Requires read access to "/x/config", specify the required permissions during compilation using `deno compile --allow-read`',
 * );
 * explainPermissionError(denied, { name: "mirror-operator", buildTask: "deno task build" });
 * // 'mirror-operator may not read "/x/config": this binary was built without that permission; rebuild it with MIRROR_OPERATOR_ALLOW_READ=/x/config deno task build'
 * ```
 *
 * @param program defaults to kinglet.
 * @returns the explanation, or `undefined` when `error` is no permission denial.
 */
export function explainPermissionError(
  error: unknown,
  program: PermissionProgram = KINGLET,
): string | undefined {
  const seen = new Set<unknown>();
  for (let e = error; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    if (e instanceof Deno.errors.NotCapable) return explainDenoDenial(e.message, program);
    if (e instanceof Deno.errors.PermissionDenied) return explainSystemDenial(e.message, program);
  }
  return undefined;
}

/** Where the denied code runs, as Deno's message tells it. */
type Mode = "deno run" | "binary" | "unknown";

// Deno's wording: `Requires read access to "/x", run again with the --allow-read flag`,
// `…, specify the required permissions during compilation using \`deno compile --allow-read\``
// in a binary, and `…, which cannot be granted in this environment` where no flag helps.
const DENO_DENIAL = /^Requires (\w+) access(?: to (.+?))?, (.*)$/s;

function explainDenoDenial(message: string, program: PermissionProgram): string {
  const match = DENO_DENIAL.exec(message);
  if (!match) return `${program.name} lacks a Deno permission: ${message}`;
  const kind = match[1]!;
  const target = match[2] === undefined ? undefined : unquote(match[2]);
  const rest = match[3]!;
  const what = `${program.name} may not ${action(kind, target)}`;
  if (kind === "all") {
    return `${what}: Deno allows that only under --allow-all, which ${program.name} is not given`;
  }
  if (rest.startsWith("which cannot be granted")) {
    return `${what}: Deno cannot grant that in this environment`;
  }
  if (!isPermissionKind(kind)) return `${what}: ${message}`;
  const mode: Mode = rest.startsWith("run again")
    ? "deno run"
    : rest.includes("deno compile")
    ? "binary"
    : "unknown";
  return `${what}: ${remedy(kind, target, mode, program)}`;
}

function action(kind: string, target: string | undefined): string {
  const quoted = target === undefined ? undefined : JSON.stringify(target);
  switch (kind) {
    case "read":
      return `read ${quoted}`;
    case "write":
      return `write ${quoted}`;
    case "net":
      return `connect to or listen on ${quoted}`;
    case "env":
      return quoted ? `read the environment variable ${quoted}` : "read the whole environment";
    case "sys":
      return `read the system information ${quoted}`;
    case "run":
      return `run ${quoted}`;
    case "ffi":
      return `load the native library ${quoted}`;
    case "import":
      return `import modules from ${quoted}`;
    default:
      return quoted ? `access ${quoted}` : `use ${kind} access`;
  }
}

function remedy(
  kind: PermissionKind,
  target: string | undefined,
  mode: Mode,
  program: PermissionProgram,
): string {
  const value = target ?? "all";
  const variable = `${allowVariable(kind, envPrefix(program.name))}=${shellQuote(value)}`;
  const flag = target === undefined ? `--allow-${kind}` : `--allow-${kind}=${shellQuote(target)}`;
  const build = program.buildTask;
  switch (mode) {
    case "deno run":
      return program.startTask
        ? `start it with ${variable} ${program.startTask}, or pass ${flag} to deno run`
        : `pass ${flag} to deno run; its binary takes it at build time: ${variable} ${build}`;
    case "binary":
      return `this binary was built without that permission; rebuild it with ${variable} ${build}`;
    case "unknown":
      return `start it with ${flag} (deno run) or rebuild the binary with ${variable} ${build}`;
  }
}

// The operating system's wording: `Permission denied (os error 13): readfile '/x'`.
const SYSTEM_DENIAL_PATH = /: \w+ '(.+)'$/s;

function explainSystemDenial(message: string, { name }: PermissionProgram): string {
  const path = SYSTEM_DENIAL_PATH.exec(message)?.[1];
  if (path === undefined) {
    return `the operating system refused ${name} (${message}): the user it runs as lacks ` +
      "the right; run it as a user that has it";
  }
  return `the operating system denies ${name} access to ${JSON.stringify(path)} (${message}): ` +
    `run ${name} as a user that may read it, or hand the file over as a systemd credential ` +
    `(LoadCredential=, as deploy/systemd/${name}-credentials.service does with the k3s ` +
    "kubeconfig)";
}

function isPermissionKind(kind: string): kind is PermissionKind {
  return (PERMISSION_KINDS as readonly string[]).includes(kind);
}

function unquote(text: string): string {
  return text.length >= 2 && text.startsWith('"') && text.endsWith('"') ? text.slice(1, -1) : text;
}

/** Quotes `text` for a POSIX shell unless it is made only of characters that need none. */
function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
