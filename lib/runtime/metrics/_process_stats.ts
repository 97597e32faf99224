/**
 * Resident memory and CPU time of this process, for
 * `process_resident_memory_bytes` and `process_cpu_seconds_total`.
 *
 * Read through `Deno.memoryUsage()` and `Deno.cpuUsage()` (getrusage), not
 * /proc/self: Deno grants /proc/self only to `--allow-all`, and kinglet runs
 * with narrow permissions. No `node:` module is involved: loading Deno's Node
 * compatibility layer costs about 3.5 MiB of resident memory.
 *
 * @module
 */
/** This process's resident memory and CPU time. */
export interface ProcessStats {
  /** Resident set size in bytes. */
  residentBytes: number;
  /** User plus system CPU time in seconds; undefined where unavailable. */
  cpuSeconds: number | undefined;
}

/** What the sources report: bytes, and microseconds of CPU like `Deno.cpuUsage()`. */
export interface ProcessSources {
  rss(): number;
  cpuUsage(): { user: number; system: number };
}

type CpuUsage = () => { user: number; system: number };

// Deno 2.9 has `Deno.cpuUsage` without declaring it in its types; a runtime
// without it reports no CPU time rather than load the Node layer for it.
const denoCpuUsage = (Deno as unknown as { cpuUsage?: CpuUsage }).cpuUsage;

const SOURCES: ProcessSources = {
  rss: () => Deno.memoryUsage().rss,
  cpuUsage: () => {
    if (!denoCpuUsage) throw new TypeError("Deno.cpuUsage is not available");
    return denoCpuUsage();
  },
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
