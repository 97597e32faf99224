/**
 * Assembles the root file system of the FROM scratch image: an executable at
 * `/kinglet` plus the files listed in hack/scratch_files.txt, copied with
 * symbolic links followed. Dockerfile.scratch runs it in its build stage and
 * copies the result into the image; the rootfs test runs it to prove that
 * list complete.
 *
 * ```sh
 * deno run -A hack/scratch_rootfs.ts /rootfs dist/kinglet-x86_64-unknown-linux-gnu
 * ```
 *
 * @module
 */
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The list of files, one absolute path a line; `#` starts a comment. */
export const SCRATCH_FILES_LIST: string = fileURLToPath(
  new URL("./scratch_files.txt", import.meta.url),
);

/** Where the executable lands, as the image's ENTRYPOINT names it. */
export const ENTRYPOINT = "/kinglet";

/** The architectures the image is built for, as Deno names them. */
export const SCRATCH_ARCHES = ["x86_64", "aarch64"] as const;
/** One of {@link SCRATCH_ARCHES}. */
export type ScratchArch = typeof SCRATCH_ARCHES[number];

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
export async function scratchFiles(arch: ScratchArch = hostArch()): Promise<string[]> {
  const text = await Deno.readTextFile(SCRATCH_FILES_LIST);
  const paths: string[] = [];
  for (const line of text.split("\n").map((l) => l.replace(/#.*/, "").trim()).filter(Boolean)) {
    const [, tag, path = ""] = /^(?:\[([\w-]+)\]\s+)?(.*)$/.exec(line)!;
    if (tag !== undefined && !(SCRATCH_ARCHES as readonly string[]).includes(tag)) {
      throw new TypeError(
        `Cannot read ${SCRATCH_FILES_LIST}: [${tag}] is no architecture; use ${
          SCRATCH_ARCHES.join(" or ")
        }`,
      );
    }
    if (!isAbsolute(path)) {
      throw new TypeError(`Cannot read ${SCRATCH_FILES_LIST}: ${path} is not an absolute path`);
    }
    if (tag === undefined || tag === arch) paths.push(path);
  }
  return paths;
}

/** This machine's architecture, which the build stage of the image shares with the image. */
function hostArch(): ScratchArch {
  const arch = Deno.build.arch;
  if (!(SCRATCH_ARCHES as readonly string[]).includes(arch)) {
    throw new TypeError(
      `The image has no file list for ${arch}; it is built for x86_64 and aarch64`,
    );
  }
  return arch as ScratchArch;
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
export async function assembleRootfs(
  dir: string,
  executable: string,
  options: AssembleOptions = {},
): Promise<void> {
  const source = options.source ?? "/";
  await makeDir(dir);
  for (const path of await scratchFiles(options.arch)) {
    const target = join(dir, path);
    await makeDir(dirname(target));
    try {
      // copyFile follows symbolic links, so the image holds plain files.
      await Deno.copyFile(join(source, path), target);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        throw new Deno.errors.NotFound(
          `${join(source, path)} is listed in ${SCRATCH_FILES_LIST} but missing`,
        );
      }
      throw error;
    }
  }
  const entrypoint = join(dir, ENTRYPOINT);
  await Deno.remove(entrypoint).catch(() => {});
  if (options.link) {
    try {
      await Deno.link(await Deno.realPath(executable), entrypoint);
      return;
    } catch {
      // Another file system: copy below.
    }
  }
  await Deno.copyFile(executable, entrypoint);
  await Deno.chmod(entrypoint, 0o755);
}

/** Creates `path` and its parents with mode 0755, whatever the umask. */
async function makeDir(path: string): Promise<void> {
  const missing: string[] = [];
  for (let p = path;; p = dirname(p)) {
    try {
      await Deno.stat(p);
      break;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound) || dirname(p) === p) throw error;
      missing.unshift(p);
    }
  }
  for (const p of missing) {
    await Deno.mkdir(p);
    await Deno.chmod(p, 0o755);
  }
  await Deno.chmod(path, 0o755);
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
