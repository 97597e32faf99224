/**
 * How an operator's process is tuned before any of its code runs: the V8
 * flags, the code cache switched off, and the allocator and TLS settings of
 * its environment. kinglet's own `deno task start` and `deno task compile`
 * and an author's build (`build.ts`) use the same values; the numbers
 * below were measured on kinglet's operators (bench/README.md).
 *
 * @example
 * ```ts
 * import { runtimeEnv, V8_FLAGS } from "./tuning.ts";
 * V8_FLAGS[0]; // "--max-semi-space-size=1"
 * runtimeEnv({}).MALLOC_MMAP_THRESHOLD_; // "16384"
 * ```
 *
 * @module
 */
/**
 * V8 flags of every operator process, chosen by the benchmark's flag matrix
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
  // after a burst of large objects is deleted (lib/runtime/scheduling/heap_release.ts).
  "--expose-gc",
];

/**
 * How an operator's code reaches V8, beside the V8 flags: every process runs
 * the bundle (`bundle.ts`) with V8's code cache off.
 *
 * Under `deno run main.ts`, V8 holds each module's source with all its
 * comments (stored two bytes a character wherever a comment has a character
 * beyond Latin-1) plus an inline source map carrying the TypeScript: 1.9 MiB
 * of module sources and 1.05 MiB of source map strings in an idle
 * operator's 8.9 MiB heap. The minified bundle keeps neither, its source maps
 * are separate files that Deno reads only to print a stack trace, and zod and
 * yaml stay in chunks that only the commands needing them load. The code
 * cache makes V8 deserialize bytecode for every function the previous run
 * compiled, and Deno keeps its sqlite file mapped. Idle RSS of kinglet with
 * its three controllers after 45 s: 61.7 MiB from main.ts, 60.5 from main.ts
 * without the code cache, 58.0 from the bundle, 54.4 to 54.7 from the bundle
 * without the code cache. The binary needs it off anyway: it must not write
 * (a read-only root file system, `ProtectSystem=strict`).
 */
export const CODE_CACHE_FLAG = "--no-code-cache";

/**
 * The environment every operator process starts with, where the user has not
 * set the variable. Both are read when the process starts, before any of the
 * operator runs, so every launcher sets them (for kinglet: `deno task start`,
 * the dev loop, the test and bench launchers, the systemd unit, the
 * Deployment and the image, kept in step by a test), and `deno compile` runs
 * with them.
 *
 * - `MALLOC_MMAP_THRESHOLD_=16384`: request and response bodies of large
 *   objects pass through buffers of 16 to 64 KiB and more, which V8 frees only
 *   when it collects their ArrayBuffers, long after other allocations have
 *   landed above them. glibc keeps such buffers in its heap, raises its mmap
 *   threshold up to 32 MiB after the first large one is freed, and returns a
 *   heap's free middle to the system only on `malloc_trim`, which Deno cannot
 *   call without FFI. A fixed 16 KiB threshold gives every such buffer its own
 *   mapping, returned when it is freed. After a burst of six large WebApps was
 *   deleted (kinglet's tests/reliability/memory_release_test.ts) glibc held
 *   16 MiB of freed memory without it and 1.4 MiB with it.
 * - `DENO_TLS_CA_STORE=,`: an empty list of certificate stores (Deno splits
 *   the value on commas and skips empty names), so the operator trusts exactly
 *   the certificate authority it is given, the kubeconfig's or the service
 *   account's, as client-go does when a CA is configured. Deno's bundled
 *   Mozilla roots are then never loaded: 3 to 4 MiB less resident memory. For
 *   an API server with a publicly signed certificate and no CA in the
 *   kubeconfig, set `DENO_TLS_CA_STORE=system`; the client's TLS error says so.
 */
export const RUNTIME_ENV: Readonly<Record<string, string>> = {
  MALLOC_MMAP_THRESHOLD_: "16384",
  DENO_TLS_CA_STORE: ",",
};

/**
 * {@link RUNTIME_ENV} under the variables of `env`: what the user set wins.
 *
 * @example
 * ```ts
 * import { runtimeEnv } from "./tuning.ts";
 * runtimeEnv({}).DENO_TLS_CA_STORE; // ","
 * runtimeEnv({ DENO_TLS_CA_STORE: "system" }).DENO_TLS_CA_STORE; // "system"
 * ```
 */
export function runtimeEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(RUNTIME_ENV)) out[name] = env[name] ?? value;
  return out;
}
