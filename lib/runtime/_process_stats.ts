/**
 * Resident memory and CPU time of this process, for
 * `process_resident_memory_bytes` and `process_cpu_seconds_total`.
 *
 * Read through `Deno.memoryUsage()` and `getrusage` (node:process), not
 * /proc/self: Deno grants /proc/self only to `--allow-all`, and kinglet runs
 * with narrow permissions.
 *
 * @module
 */
import process from "node:process";

/** This process's resident memory and CPU time. */
export interface ProcessStats {
  residentBytes: number;
  cpuSeconds: number | undefined;
}

/** What the sources report: bytes, and microseconds of CPU like `process.cpuUsage()`. */
export interface ProcessSources {
  rss(): number;
  cpuUsage(): { user: number; system: number };
}

const SOURCES: ProcessSources = {
  rss: () => Deno.memoryUsage().rss,
  cpuUsage: () => process.cpuUsage(),
};

/** Reads RSS and user plus system CPU seconds; CPU time is undefined where unavailable. */
export function readProcessStats(sources: ProcessSources = SOURCES): ProcessStats {
  let cpuSeconds: number | undefined;
  try {
    const { user, system } = sources.cpuUsage();
    cpuSeconds = (user + system) / 1e6;
  } catch {
    // getrusage unsupported here: CPU time goes unreported.
  }
  return { residentBytes: sources.rss(), cpuSeconds };
}
