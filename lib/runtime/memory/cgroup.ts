/**
 * The memory limit of the container kinglet runs in, read from its cgroup:
 * `memory.max` under cgroup v2, `memory.limit_in_bytes` under cgroup v1.
 *
 * What the caller must know:
 *
 * - Only the container's own cgroup is read, at the root of the cgroup file
 *   system as a container sees it. A process started by systemd on a node
 *   sits in a cgroup deeper down (`MemoryMax=` of its unit), which is not
 *   read: give such a process its limit explicitly.
 * - Deno lets a program read under `/sys` only with `--allow-all`: no
 *   `--allow-read` grant, however wide, is enough. A process with narrower
 *   permissions gets `undefined` here, with a debug line, and should take
 *   its limit from elsewhere; in a pod, the Downward API gives a container
 *   its own limit as an environment variable (`resourceFieldRef`,
 *   `limits.memory`), which is how kinglet's Deployment passes it.
 * - No limit (`max`, cgroup v1's near-2⁶³ "unlimited", a missing file) is
 *   `undefined`. A file that holds anything else, or cannot be read, is
 *   ignored with one warning line saying which file and what it held, since
 *   a memory limit is an optimisation the process can run without.
 *
 * @example
 * ```ts
 * import { cgroupMemoryLimit } from "./cgroup.ts";
 * const files: Record<string, string> = { "/sys/fs/cgroup/memory.max": "67108864\n" };
 * cgroupMemoryLimit({ read: (path) => files[path] });
 * // { bytes: 67108864, path: "/sys/fs/cgroup/memory.max" }
 * ```
 *
 * @module
 */
import { describeError } from "../../kube/errors.ts";
import { logger } from "../../log.ts";

/** The cgroup v2 file, then the cgroup v1 file, in the order they are tried. */
export const CGROUP_MEMORY_FILES: readonly string[] = [
  "/sys/fs/cgroup/memory.max",
  "/sys/fs/cgroup/memory/memory.limit_in_bytes",
];

/**
 * cgroup v1 writes "unlimited" as the largest page-aligned 64-bit value
 * (9223372036854771712); no machine has a quarter of that.
 */
const V1_UNLIMITED = 2 ** 62;

/** What to do about a limit that could not be read. */
const EXPLICIT = "set the memory limit explicitly to keep one";

/** A limit found in a cgroup file. */
export interface CgroupMemoryLimit {
  /** The limit in bytes. */
  bytes: number;
  /** The file it came from. */
  path: string;
}

/** Options of {@link cgroupMemoryLimit}. */
export interface CgroupReadOptions {
  /**
   * Reads a file's text, or `undefined` when it does not exist. Defaults to
   * `Deno.readTextFileSync`.
   */
  read?: (path: string) => string | undefined;
}

/**
 * What a cgroup memory file holds: the limit in bytes, `undefined` for no
 * limit, or `null` when the text is neither.
 *
 * @example
 * ```ts
 * import { parseCgroupMemory } from "./cgroup.ts";
 * parseCgroupMemory("max\n"); // undefined
 * parseCgroupMemory("9223372036854771712"); // undefined: cgroup v1's "unlimited"
 * parseCgroupMemory("536870912\n"); // 536870912
 * parseCgroupMemory("lots"); // null
 * ```
 */
export function parseCgroupMemory(text: string): number | undefined | null {
  const value = text.trim();
  if (value === "max") return undefined;
  if (!/^[0-9]+$/.test(value)) return null;
  const bytes = Number(value);
  if (bytes >= V1_UNLIMITED) return undefined;
  return bytes > 0 ? bytes : null;
}

/**
 * The container's memory limit, from the first of {@link CGROUP_MEMORY_FILES}
 * that exists; `undefined` when there is none. Never throws: see the module
 * documentation for what is ignored, and how it is told.
 */
export function cgroupMemoryLimit(options: CgroupReadOptions = {}): CgroupMemoryLimit | undefined {
  const read = options.read ?? readIfPresent;
  for (const path of CGROUP_MEMORY_FILES) {
    let text: string | undefined;
    try {
      text = read(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotCapable) {
        logger("memory").debug(
          `not reading the container's memory limit from {path}: Deno allows it only under --allow-all; ${EXPLICIT}`,
          { path },
        );
        return undefined;
      }
      logger("memory").warn(
        `ignoring the container's memory limit: {path} cannot be read ({error}); ${EXPLICIT}`,
        { path, error: describeError(error) },
      );
      return undefined;
    }
    if (text === undefined) continue;
    const bytes = parseCgroupMemory(text);
    if (bytes === null) {
      logger("memory").warn(
        `ignoring the container's memory limit: {path} holds {text}, not a byte count nor "max"; ${EXPLICIT}`,
        { path, text: text.trim().slice(0, 64) },
      );
      return undefined;
    }
    return bytes === undefined ? undefined : { bytes, path };
  }
  return undefined;
}

function readIfPresent(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}
