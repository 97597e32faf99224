/**
 * The Deno permissions an operator runs with: what kinglet's runtime needs
 * and nothing more ({@link operatorGrants}), widened by the operator's own
 * `<PREFIX>_ALLOW_<KIND>` variables ({@link grantsFromEnv}), turned into the
 * flags `deno run` and `deno compile` take ({@link denoFlags}), together with
 * the code-cache and V8 flags of `tuning.ts`.
 *
 * Every kind can be widened without editing code: `<PREFIX>_ALLOW_<KIND>`
 * holds a comma-separated list added to the grants, or `all`. Network access
 * is the exception that narrows: it is granted whole because the API server's
 * address is only known at run time, so a list there replaces "all" by
 * exactly that list.
 *
 * @example
 * ```ts
 * import { denoFlags, grantsFromEnv, operatorGrants } from "./grants.ts";
 * const grants = grantsFromEnv({ MIRROR_ALLOW_READ: "/home/me/.kube/config" }, {
 *   prefix: "MIRROR",
 *   base: operatorGrants("mirror"),
 * });
 * denoFlags(grants).includes("--allow-sys=hostname"); // true
 * ```
 *
 * @module
 */
import {
  allowVariable,
  checkOperatorName,
  envPrefix,
  PERMISSION_KINDS,
  type PermissionKind,
} from "../cli/permissions.ts";
import { CODE_CACHE_FLAG, V8_FLAGS } from "./tuning.ts";

export { allowVariable, checkOperatorName, envPrefix, PERMISSION_KINDS, type PermissionKind };

/** A grant of one permission kind: all of it, or exactly the listed entries (none when empty). */
export type Grant = "all" | readonly string[];

/** A grant for each permission kind. */
export type Grants = Readonly<Record<PermissionKind, Grant>>;

/**
 * What an operator named `name` needs and nothing more, for the usual places
 * it runs; kinglet's own grants are `operatorGrants("kinglet")`.
 *
 * @example
 * ```ts
 * import { operatorGrants } from "./grants.ts";
 * operatorGrants("mirror").env.includes("MIRROR_*"); // true
 * operatorGrants("mirror").write; // ["/var/lib/mirror"]
 * ```
 *
 * @throws {TypeError} when `name` is not a DNS label.
 */
export function operatorGrants(name: string): Grants {
  const prefix = envPrefix(name);
  return {
    read: [
      // In a pod: the service account token (re-read as it rotates), CA and namespace.
      "/var/run/secrets/kubernetes.io/serviceaccount",
      // Node mode on k3s, started by root.
      "/etc/rancher/k3s/k3s.yaml",
      // Node mode under systemd: a `<name>-credentials.service` gets the k3s
      // kubeconfig as a credential, which systemd places here (and a unit of
      // your own may pass `<name>.service` one the same way).
      `/run/credentials/${name}-credentials.service`,
      `/run/credentials/${name}.service`,
      // Node mode with the operator's own rights: the kubeconfig and token
      // that `install --node-kubeconfig` writes.
      `/var/lib/${name}`,
    ],
    env: [
      "HOME", // ~/.kube/config
      "KUBECONFIG",
      "KUBERNETES_SERVICE_HOST", // in-cluster detection and address
      "KUBERNETES_SERVICE_PORT",
      "POD_NAMESPACE",
      "DENO_TLS_CA_STORE", // to explain a TLS failure without a configured CA
      `${prefix}_*`, // the operator's own variables
    ],
    // The API server's address comes from a kubeconfig read at run time.
    net: "all",
    sys: ["hostname"], // the leader election identity
    run: [],
    // Only `install --node-kubeconfig` writes, and only there.
    write: [`/var/lib/${name}`],
    ffi: [],
    import: [],
  };
}

/**
 * Variables that read as unset instead of failing: the `yaml` package checks
 * these debug switches on every parse. Passing any `--ignore-env` also makes
 * `Deno.env.toObject()` return the granted variables instead of throwing,
 * which the kubeconfig loader and exec credential plugins rely on.
 */
export const IGNORED_ENV: readonly string[] = ["LOG_TOKENS", "LOG_STREAM"];

/** Options of {@link grantsFromEnv}. */
export interface GrantsFromEnvOptions {
  /** The prefix of the `<PREFIX>_ALLOW_<KIND>` variables. Defaults to `KINGLET`. */
  prefix?: string;
  /** The grants to widen. Defaults to `operatorGrants("kinglet")`. */
  base?: Grants;
}

/**
 * `base` widened (or, for the network, narrowed) by the
 * `<PREFIX>_ALLOW_<KIND>` variables in `env`.
 *
 * @throws {TypeError} when a variable lists an empty entry.
 */
export function grantsFromEnv(
  env: Record<string, string | undefined>,
  options: GrantsFromEnvOptions = {},
): Grants {
  const prefix = options.prefix ?? "KINGLET";
  const grants = { ...(options.base ?? operatorGrants("kinglet")) } as Record<
    PermissionKind,
    Grant
  >;
  for (const kind of PERMISSION_KINDS) {
    const variable = allowVariable(kind, prefix);
    const value = env[variable]?.trim();
    if (!value) continue;
    if (value === "all") {
      grants[kind] = "all";
      continue;
    }
    grants[kind] = widen(grants[kind], listOf(value, variable));
  }
  return grants;
}

/**
 * `grant` with `entries` added; a whole network grant becomes exactly the
 * listed entries (see the module's note).
 */
export function widen(grant: Grant, entries: readonly string[]): Grant {
  return grant === "all"
    ? [...entries]
    : [...grant, ...entries.filter((entry) => !grant.includes(entry))];
}

/**
 * The entries of a comma-separated list.
 *
 * @throws {TypeError} when an entry is empty, naming `source`.
 */
export function listOf(value: string, source: string): string[] {
  const entries = value.split(",").map((entry) => entry.trim());
  if (entries.some((entry) => entry === "")) {
    throw new TypeError(
      `Cannot read ${source}: expected a comma-separated list or "all", got ${
        JSON.stringify(value)
      }`,
    );
  }
  return entries;
}

/**
 * The permission flags, the code-cache flag and the V8 flags for `deno run`
 * and `deno compile`, the same for both: `--no-prompt` so that `deno run` in
 * a terminal fails the way the binary does instead of asking, and
 * `--deny-import` unless imports were granted.
 *
 * @example
 * ```ts
 * import { denoFlags, operatorGrants } from "./grants.ts";
 * denoFlags(operatorGrants("mirror")).at(-1); // "--v8-flags=--max-semi-space-size=1,--optimize-for-size,--no-opt,--expose-gc"
 * ```
 */
export function denoFlags(grants: Grants): string[] {
  const flags = ["--no-prompt"];
  for (const kind of PERMISSION_KINDS) {
    const grant = grants[kind];
    if (grant === "all") flags.push(`--allow-${kind}`);
    else if (grant.length > 0) flags.push(`--allow-${kind}=${grant.join(",")}`);
    // Without a flag Deno still allows imports from a few public hosts; an operator needs none.
    else if (kind === "import") flags.push("--deny-import");
  }
  if (grants.env !== "all") flags.push(`--ignore-env=${IGNORED_ENV.join(",")}`);
  flags.push(CODE_CACHE_FLAG, `--v8-flags=${V8_FLAGS.join(",")}`);
  return flags;
}
