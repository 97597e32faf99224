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
 * when it starts and `deno task compile` bakes into the binary.
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

/**
 * Explains a permission denial found in `error` or its `cause` chain: what
 * kinglet may not do and the flag that allows it, for `deno run` (through
 * `deno task start`) or for a rebuilt binary, whichever Deno's message shows
 * is running. An operating system denial (`EACCES`) gets advice about the
 * user kinglet runs as instead.
 *
 * @returns the explanation, or `undefined` when `error` is no permission denial.
 */
export function explainPermissionError(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  for (let e = error; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    if (e instanceof Deno.errors.NotCapable) return explainDenoDenial(e.message);
    if (e instanceof Deno.errors.PermissionDenied) return explainSystemDenial(e.message);
  }
  return undefined;
}

/** Where the denied code runs, as Deno's message tells it. */
type Mode = "deno run" | "binary" | "unknown";

// Deno's wording: `Requires read access to "/x", run again with the --allow-read flag`,
// `…, specify the required permissions during compilation using \`deno compile --allow-read\``
// in a binary, and `…, which cannot be granted in this environment` where no flag helps.
const DENO_DENIAL = /^Requires (\w+) access(?: to (.+?))?, (.*)$/s;

function explainDenoDenial(message: string): string {
  const match = DENO_DENIAL.exec(message);
  if (!match) return `kinglet lacks a Deno permission: ${message}`;
  const kind = match[1]!;
  const target = match[2] === undefined ? undefined : unquote(match[2]);
  const rest = match[3]!;
  const what = `kinglet may not ${action(kind, target)}`;
  if (kind === "all") {
    return `${what}: Deno allows that only under --allow-all, which kinglet is not given`;
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
  return `${what}: ${remedy(kind, target, mode)}`;
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

function remedy(kind: PermissionKind, target: string | undefined, mode: Mode): string {
  const value = target ?? "all";
  const variable = `${allowVariable(kind)}=${shellQuote(value)}`;
  const flag = target === undefined ? `--allow-${kind}` : `--allow-${kind}=${shellQuote(target)}`;
  switch (mode) {
    case "deno run":
      return `start it with ${variable} deno task start, or pass ${flag} to deno run`;
    case "binary":
      return `this binary was built without that permission; rebuild it with ${variable} ` +
        "deno task compile";
    case "unknown":
      return `start it with ${flag} (deno run) or rebuild the binary with ${variable} ` +
        "deno task compile";
  }
}

// The operating system's wording: `Permission denied (os error 13): readfile '/x'`.
const SYSTEM_DENIAL_PATH = /: \w+ '(.+)'$/s;

function explainSystemDenial(message: string): string {
  const path = SYSTEM_DENIAL_PATH.exec(message)?.[1];
  if (path === undefined) {
    return `the operating system refused kinglet (${message}): the user it runs as lacks ` +
      "the right; run it as a user that has it";
  }
  return `the operating system denies kinglet access to ${JSON.stringify(path)} (${message}): ` +
    "run kinglet as a user that may read it, or hand the file over as a systemd credential " +
    "(LoadCredential=, as deploy/systemd/kinglet-credentials.service does with the k3s kubeconfig)";
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
