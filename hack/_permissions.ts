/**
 * The Deno permissions, V8 flags and allocator settings kinglet runs with, kept in one place:
 * `deno task start` passes them to `deno run`, `deno task compile` bakes them
 * into the binary, and the tests run kinglet under them. The README's
 * "Binary" section explains each choice.
 *
 * Every kind can be widened without editing this file: `KINGLET_ALLOW_<KIND>`
 * (see {@link allowVariable}) holds a comma-separated list added to the
 * grants below, or `all`. Network access is the exception that narrows: it is
 * granted whole because the API server's address is only known at run time,
 * so a list there replaces "all" by exactly that list.
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
import { allowVariable, PERMISSION_KINDS, type PermissionKind } from "../lib/cli/permissions.ts";

export { allowVariable };

/**
 * V8 flags of every kinglet process, chosen by the benchmark's flag matrix
 * (bench/README.md): a 1 MiB semi-space keeps the young generation small,
 * and `--optimize-for-size` makes V8 collect and compact the old generation
 * sooner. With 1,000 WebApps the pair held steady RSS at 0.53 times V8's
 * defaults, against 0.67 for the semi-space alone, for the same CPU per
 * reconcile; `--lite-mode` saved 10 MiB more but cost half again the CPU.
 * `--no-opt` leaves hot code to Maglev, V8's mid-tier compiler, instead of
 * TurboFan, whose code and compiler pages an operator's short reconciles do
 * not repay: at 1,000 WebApps steady RSS fell 79.3 → 75.8 MiB and CPU per
 * reconcile 1.61 → 1.48 ms (bench/latest/flags-1000); dropping Maglev too saved
 * 3 MiB more but stretched create→Ready p99 by 40%.
 */
export const V8_FLAGS: readonly string[] = [
  "--max-semi-space-size=1",
  "--optimize-for-size",
  "--no-opt",
  // V8 starts no full collection in an idle process: the manager asks for one
  // after a burst of large objects is deleted (lib/runtime/_heap_release.ts).
  "--expose-gc",
];

/**
 * How kinglet's code reaches V8, beside the V8 flags: every kinglet process
 * runs the bundle (hack/build.ts) with V8's code cache off.
 *
 * Under `deno run main.ts`, V8 holds each module's source with all its
 * comments (stored two bytes a character wherever a comment has a character
 * beyond Latin-1) plus an inline source map carrying the TypeScript: 1.9 MiB
 * of module sources and 1.05 MiB of source map strings in an idle
 * operator's 8.9 MiB heap. The minified bundle keeps neither, its source maps
 * are separate files that Deno reads only to print a stack trace, and zod and
 * yaml stay in chunks that only `install` and `crds` load. The code cache
 * makes V8 deserialize bytecode for every function the previous run compiled,
 * and Deno keeps its sqlite file mapped. Idle RSS with the three controllers
 * after 45 s: 61.7 MiB from main.ts, 60.5 from main.ts without the code
 * cache, 58.0 from the bundle, 54.4 to 54.7 from the bundle without the code
 * cache. The binary needs it off anyway: it must not write (a read-only root
 * file system, `ProtectSystem=strict`).
 */
export const CODE_CACHE_FLAG = "--no-code-cache";

/**
 * The environment every kinglet process starts with, where the user has not
 * set the variable. Both are read when the process starts, before any of
 * kinglet runs, so `deno task start`, the dev loop, the test and bench
 * launchers, the systemd unit, the Deployment and the image set them (a test
 * keeps those in step), and `deno task compile` runs with them.
 *
 * - `MALLOC_MMAP_THRESHOLD_=16384`: request and response bodies of large
 *   objects pass through buffers of 16 to 64 KiB and more, which V8 frees only
 *   when it collects their ArrayBuffers, long after other allocations have
 *   landed above them. glibc keeps such buffers in its heap, raises its mmap
 *   threshold up to 32 MiB after the first large one is freed, and returns a
 *   heap's free middle to the system only on `malloc_trim`, which Deno cannot
 *   call without FFI. A fixed 16 KiB threshold gives every such buffer its own
 *   mapping, returned when it is freed. After a burst of six large WebApps was
 *   deleted (tests/reliability/memory_release_test.ts) glibc held 16 MiB of
 *   freed memory without it and 1.4 MiB with it.
 * - `DENO_TLS_CA_STORE=,`: an empty list of certificate stores (Deno splits
 *   the value on commas and skips empty names), so kinglet trusts exactly the
 *   certificate authority it is given, the kubeconfig's or the service
 *   account's, as client-go does when a CA is configured. Deno's bundled
 *   Mozilla roots are then never loaded: 3 to 4 MiB less resident memory. For
 *   an API server with a publicly signed certificate and no CA in the
 *   kubeconfig, set `DENO_TLS_CA_STORE=system`; kinglet's TLS error says so.
 */
export const KINGLET_ENV: Readonly<Record<string, string>> = {
  MALLOC_MMAP_THRESHOLD_: "16384",
  DENO_TLS_CA_STORE: ",",
};

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
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(KINGLET_ENV)) out[name] = env[name] ?? value;
  return out;
}

/** A grant of one permission kind: all of it, or exactly the listed entries (none when empty). */
export type Grant = "all" | readonly string[];

/** A grant for each permission kind. */
export type Grants = Readonly<Record<PermissionKind, Grant>>;

/** What kinglet needs and nothing more, for the usual places it runs. */
export const KINGLET_GRANTS: Grants = {
  read: [
    // In a pod: the service account token (re-read as it rotates), CA and namespace.
    "/var/run/secrets/kubernetes.io/serviceaccount",
    // Node mode on k3s, started by root.
    "/etc/rancher/k3s/k3s.yaml",
    // Node mode under systemd: deploy/systemd/kinglet-credentials.service gets
    // the k3s kubeconfig as a credential, which systemd places here (and a
    // unit of your own may pass kinglet.service one the same way).
    "/run/credentials/kinglet-credentials.service",
    "/run/credentials/kinglet.service",
    // Node mode with kinglet's own rights: the kubeconfig and token that
    // `kinglet install --node-kubeconfig` writes (deploy/systemd/).
    "/var/lib/kinglet",
  ],
  env: [
    "HOME", // ~/.kube/config
    "KUBECONFIG",
    "KUBERNETES_SERVICE_HOST", // in-cluster detection and address
    "KUBERNETES_SERVICE_PORT",
    "POD_NAMESPACE",
    "DENO_TLS_CA_STORE", // to explain a TLS failure without a configured CA
    "KINGLET_*", // every flag's variable
  ],
  // The API server's address comes from a kubeconfig read at run time.
  net: "all",
  sys: ["hostname"], // the leader election identity
  run: [],
  // Only `kinglet install --node-kubeconfig` writes, and only there.
  write: ["/var/lib/kinglet"],
  ffi: [],
  import: [],
};

/**
 * Variables that read as unset instead of failing: the `yaml` package checks
 * these debug switches on every parse. Passing any `--ignore-env` also makes
 * `Deno.env.toObject()` return the granted variables instead of throwing,
 * which loadConfig and exec credential plugins rely on.
 */
export const IGNORED_ENV: readonly string[] = ["LOG_TOKENS", "LOG_STREAM"];

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
  const grants = { ...base } as Record<PermissionKind, Grant>;
  for (const kind of PERMISSION_KINDS) {
    const variable = allowVariable(kind);
    const value = env[variable]?.trim();
    if (!value) continue;
    if (value === "all") {
      grants[kind] = "all";
      continue;
    }
    const entries = value.split(",").map((entry) => entry.trim());
    if (entries.some((entry) => entry === "")) {
      throw new TypeError(
        `Cannot read ${variable}: expected a comma-separated list or "all", got ${
          JSON.stringify(value)
        }`,
      );
    }
    const current = grants[kind];
    grants[kind] = current === "all"
      ? entries
      : [...current, ...entries.filter((e) => !current.includes(e))];
  }
  return grants;
}

/**
 * The permission flags, {@link CODE_CACHE_FLAG} and V8 flags for `deno run`
 * and `deno compile`, the same for both: `--no-prompt` so that `deno run` in
 * a terminal fails the way the binary does instead of asking, and
 * `--deny-import` unless imports were granted.
 *
 * @example
 * ```ts
 * import { denoFlags, KINGLET_GRANTS } from "./_permissions.ts";
 * denoFlags(KINGLET_GRANTS).at(-1); // "--v8-flags=--max-semi-space-size=1,--optimize-for-size,--expose-gc"
 * ```
 */
export function denoFlags(grants: Grants = KINGLET_GRANTS): string[] {
  const flags = ["--no-prompt"];
  for (const kind of PERMISSION_KINDS) {
    const grant = grants[kind];
    if (grant === "all") flags.push(`--allow-${kind}`);
    else if (grant.length > 0) flags.push(`--allow-${kind}=${grant.join(",")}`);
    // Without a flag Deno still allows imports from a few public hosts; kinglet needs none.
    else if (kind === "import") flags.push("--deny-import");
  }
  if (grants.env !== "all") flags.push(`--ignore-env=${IGNORED_ENV.join(",")}`);
  flags.push(CODE_CACHE_FLAG, `--v8-flags=${V8_FLAGS.join(",")}`);
  return flags;
}
