/**
 * Reads the memory and CPU time of a process tree from /proc, the way `ps`
 * and Prometheus' process collector do, but from outside the process: the
 * operator under test needs no cooperation and pays nothing for it.
 *
 * The tree is the process and its descendants, so a target whose command is
 * a wrapper (a shell, `deno task`) is still measured whole.
 *
 * @example
 * ```ts ignore
 * import { readProcessTree } from "./process_sampler.ts";
 * const self = readProcessTree(Deno.pid);
 * self?.rssBytes; // this process' resident memory, in bytes
 * ```
 *
 * @module
 */

/** One reading of a process tree. */
export interface TreeReading {
  rssBytes: number;
  /** Sum of each process' VmHWM (peak RSS). */
  hwmBytes: number;
  /** User plus system CPU seconds, of the living processes. */
  cpuSeconds: number;
  processes: number;
}

/** Clock ticks per second of /proc/<pid>/stat; USER_HZ is 100 on every Linux ABI in use. */
const USER_HZ = 100;

/**
 * Reads `/proc/<pid>/status` (VmRSS, VmHWM) and `/proc/<pid>/stat` (utime,
 * stime) of `pid` and every descendant, or `undefined` when `pid` is gone.
 *
 * @throws {Error} when /proc is missing: the harness measures Linux only.
 */
export function readProcessTree(pid: number): TreeReading | undefined {
  const root = readOne(pid);
  if (root === undefined) return undefined;
  const total = { ...root, processes: 1 };
  for (const child of descendants(pid)) {
    const one = readOne(child);
    if (one === undefined) continue;
    total.rssBytes += one.rssBytes;
    total.hwmBytes += one.hwmBytes;
    total.cpuSeconds += one.cpuSeconds;
    total.processes++;
  }
  return total;
}

/** Whether /proc can be read here; the harness refuses to start without it. */
export function hasProcfs(): boolean {
  try {
    Deno.statSync(`/proc/${Deno.pid}/stat`);
    return true;
  } catch {
    return false;
  }
}

function readOne(pid: number): Omit<TreeReading, "processes"> | undefined {
  let status: string;
  let stat: string;
  try {
    status = Deno.readTextFileSync(`/proc/${pid}/status`);
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  // A zombie has no memory left; report it as gone rather than as 0 bytes.
  const rss = kilobytes(status, "VmRSS");
  if (rss === undefined) return undefined;
  // Fields after the command name, which is parenthesized and may itself hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return {
    rssBytes: rss,
    hwmBytes: kilobytes(status, "VmHWM") ?? rss,
    cpuSeconds: Number.isFinite(ticks) ? ticks / USER_HZ : 0,
  };
}

function kilobytes(status: string, field: string): number | undefined {
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, "m").exec(status);
  return match ? Number(match[1]) * 1024 : undefined;
}

function descendants(pid: number): number[] {
  const found: number[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    const parent = pending.pop()!;
    for (const child of children(parent)) {
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}

function children(pid: number): number[] {
  const result: number[] = [];
  let tasks: Iterable<Deno.DirEntry>;
  try {
    tasks = Deno.readDirSync(`/proc/${pid}/task`);
  } catch {
    return result;
  }
  for (const task of tasks) {
    try {
      const listed = Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/children`).trim();
      if (listed !== "") { for (const id of listed.split(/\s+/)) result.push(Number(id)); }
    } catch {
      // The thread ended between listing and reading.
    }
  }
  return result;
}
