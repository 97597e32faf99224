/**
 * Assembles the root file system of kinglet's FROM scratch image: an
 * executable at `/kinglet` plus the files listed in hack/scratch_files.txt
 * (written by `deno task deploy`), copied with symbolic links followed, by
 * lib/deploy's `assembleRootfs`, which an author's image uses too.
 * Dockerfile.scratch runs it in its build stage and copies the result into
 * the image; the rootfs test runs it to prove that list complete.
 *
 * ```sh
 * deno run -A hack/scratch_rootfs.ts /rootfs dist/kinglet-x86_64-unknown-linux-gnu
 * ```
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import {
  assembleRootfs as assemble,
  SCRATCH_ARCHES,
  type ScratchArch,
  scratchFiles as listed,
} from "../lib/deploy/mod.ts";

export { SCRATCH_ARCHES, type ScratchArch };

/** The list of files, one absolute path a line; `#` starts a comment. */
export const SCRATCH_FILES_LIST: string = fileURLToPath(
  new URL("./scratch_files.txt", import.meta.url),
);

/** Where the executable lands, as the image's ENTRYPOINT names it. */
export const ENTRYPOINT = "/kinglet";

/**
 * The paths hack/scratch_files.txt lists for `arch`: its own tagged lines
 * and the untagged ones.
 *
 * @example
 * ```ts
 * import { scratchFiles } from "./scratch_rootfs.ts";
 * (await scratchFiles("x86_64")).includes("/lib64/ld-linux-x86-64.so.2"); // true
 * (await scratchFiles("aarch64")).includes("/lib/ld-linux-aarch64.so.1"); // true
 * ```
 *
 * @throws {TypeError} on a line that is no absolute path, or tagged with another architecture.
 */
export function scratchFiles(arch?: ScratchArch): Promise<string[]> {
  return listed(SCRATCH_FILES_LIST, arch);
}

/** Options of {@link assembleRootfs}. */
export interface AssembleOptions {
  /** The folder the listed files are taken from. Defaults to `/`. */
  source?: string;
  /** Whose files: defaults to this machine's architecture (the image's, in its build stage). */
  arch?: ScratchArch;
  /** Hard-link the executable instead of copying it, when on the same file system. */
  link?: boolean;
}

/**
 * Fills `dir` (created if missing) with `executable` at {@link ENTRYPOINT} and
 * every listed file, folders mode 0755 so that any user can reach them.
 *
 * @throws {Deno.errors.NotFound} naming the listed file that is missing.
 */
export function assembleRootfs(
  dir: string,
  executable: string,
  options: AssembleOptions = {},
): Promise<void> {
  return assemble(dir, executable, {
    ...options,
    list: SCRATCH_FILES_LIST,
    entrypoint: ENTRYPOINT,
  });
}

if (import.meta.main) {
  const [dir, executable] = Deno.args;
  if (!dir || !executable) {
    Deno.stderr.writeSync(
      new TextEncoder().encode("usage: deno run -A hack/scratch_rootfs.ts <dir> <executable>\n"),
    );
    Deno.exit(2);
  }
  await assembleRootfs(dir, executable);
}
