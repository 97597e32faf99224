/**
 * Resident memory and CPU time of this process, read the way Prometheus'
 * process collector reads them: from /proc on Linux, else from Deno.
 *
 * @module
 */

/** What {@link readProcessStats} found; CPU time is unknown off Linux. */
export interface ProcessStats {
  residentBytes: number;
  cpuSeconds: number | undefined;
}

/**
 * Clock ticks per second of utime/stime in /proc/self/stat. USER_HZ is 100
 * on every Linux ABI in use, and Prometheus' procfs assumes the same.
 */
const USER_HZ = 100;

/** Reads /proc/self/stat and /proc/self/status, falling back to `Deno.memoryUsage()`. */
export function readProcessStats(
  read: (path: string) => string = Deno.readTextFileSync,
): ProcessStats {
  let residentBytes: number | undefined;
  let cpuSeconds: number | undefined;
  try {
    const rss = /^VmRSS:\s+(\d+)\s+kB$/m.exec(read("/proc/self/status"));
    if (rss) residentBytes = Number(rss[1]) * 1024;
  } catch {
    // No /proc (macOS, Windows) or no read permission: fall back below.
  }
  try {
    const stat = read("/proc/self/stat");
    // Fields after the command name, which is parenthesized and may itself contain spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    if (Number.isFinite(utime) && Number.isFinite(stime)) cpuSeconds = (utime + stime) / USER_HZ;
  } catch {
    // As above; CPU time then goes unreported.
  }
  return { residentBytes: residentBytes ?? Deno.memoryUsage().rss, cpuSeconds };
}
