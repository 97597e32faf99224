/**
 * The machine and the versions a benchmark ran with, recorded in
 * `results.json` so that figures are never compared without their context.
 *
 * @example
 * ```ts ignore
 * import { describeMachine } from "./environment.ts";
 * const machine = await describeMachine();
 * machine.cores > 0; // true
 * ```
 *
 * @module
 */
import denoJson from "../../deno.json" with { type: "json" };
import type { Machine, Versions } from "./results.ts";

/** Cores, memory, CPU model, kernel and load of this machine. */
export async function describeMachine(): Promise<Machine> {
  const cpuinfo = await Deno.readTextFile("/proc/cpuinfo").catch(() => "");
  return {
    cores: navigator.hardwareConcurrency,
    memoryBytes: Deno.systemMemoryInfo().total,
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? "unknown",
    os: `${Deno.build.os} ${Deno.build.arch}`,
    kernel: Deno.osRelease(),
    loadAverage: Deno.loadavg(),
  };
}

/** Versions of Deno, V8, TypeScript, kinglet and the commit; Kubernetes and the target as given. */
export async function describeVersions(kubernetes: string, target: string): Promise<Versions> {
  return {
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    typescript: Deno.version.typescript,
    kubernetes,
    kinglet: denoJson.version,
    commit: await commit(),
    target,
  };
}

/**
 * The checked-out commit, `-dirty` when tracked files changed; `unknown`
 * outside a git checkout. Read-only: optional locks are off, so git does not
 * even refresh its index while others may be using the repository.
 */
async function commit(): Promise<string> {
  const head = await git(["rev-parse", "--short=12", "HEAD"]);
  if (!head) return "unknown";
  const changes = await git(["status", "--porcelain", "--untracked-files=no"]);
  return changes ? `${head}-dirty` : head;
}

async function git(args: string[]): Promise<string | undefined> {
  try {
    const output = await new Deno.Command("git", {
      args,
      cwd: new URL("../..", import.meta.url),
      env: { GIT_OPTIONAL_LOCKS: "0" },
      stdout: "piped",
      stderr: "null",
    }).output();
    return output.success ? new TextDecoder().decode(output.stdout).trim() : undefined;
  } catch {
    return undefined;
  }
}
