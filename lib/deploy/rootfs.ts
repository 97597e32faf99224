/**
 * Assembles the root file system of a FROM scratch image: the operator's
 * executable at `/<name>` plus the files a list names (the file
 * `scratchFilesTxt` writes), copied with symbolic links followed. The
 * Dockerfile runs it in its build stage (`deno task deploy --rootfs` in a
 * project, hack/scratch_rootfs.ts in kinglet's) and copies the result into
 * the image.
 *
 * @example
 * ```ts ignore
 * import { assembleRootfs } from "./rootfs.ts";
 * await assembleRootfs("/rootfs", "dist/mirror-operator-x86_64-unknown-linux-gnu", {
 *   list: "deploy/scratch_files.txt",
 *   entrypoint: "/mirror-operator",
 * });
 * ```
 *
 * @module
 */
import { dirname, isAbsolute, join } from "node:path";
import { SCRATCH_ARCHES, type ScratchArch } from "./image_files.ts";

/**
 * The paths the file list at `list` names for `arch`: its own tagged lines
 * and the untagged ones.
 *
 * @throws {TypeError} on a line that is no absolute path, or tagged with another architecture.
 */
export async function scratchFiles(
  list: string,
  arch: ScratchArch = hostArch(),
): Promise<string[]> {
  const text = await Deno.readTextFile(list);
  const paths: string[] = [];
  for (const line of text.split("\n").map((l) => l.replace(/#.*/, "").trim()).filter(Boolean)) {
    const [, tag, path = ""] = /^(?:\[([\w-]+)\]\s+)?(.*)$/.exec(line)!;
    if (tag !== undefined && !(SCRATCH_ARCHES as readonly string[]).includes(tag)) {
      throw new TypeError(
        `Cannot read ${list}: [${tag}] is no architecture; use ${SCRATCH_ARCHES.join(" or ")}`,
      );
    }
    if (!isAbsolute(path)) {
      throw new TypeError(`Cannot read ${list}: ${path} is not an absolute path`);
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
  /** The file list, e.g. `deploy/scratch_files.txt`. */
  list: string;
  /** Where the executable lands, as the image's ENTRYPOINT names it, e.g. `/mirror-operator`. */
  entrypoint: string;
  /** The folder the listed files are taken from. Defaults to `/`. */
  source?: string;
  /** Whose files: defaults to this machine's architecture (the image's, in its build stage). */
  arch?: ScratchArch;
  /** Hard-link the executable instead of copying it, when on the same file system. */
  link?: boolean;
}

/**
 * Fills `dir` (created if missing) with `executable` at the entrypoint and
 * every listed file, folders mode 0755 so that any user can reach them.
 *
 * @throws {Deno.errors.NotFound} naming the listed file that is missing.
 */
export async function assembleRootfs(
  dir: string,
  executable: string,
  options: AssembleOptions,
): Promise<void> {
  const source = options.source ?? "/";
  await makeDir(dir);
  for (const path of await scratchFiles(options.list, options.arch)) {
    const target = join(dir, path);
    await makeDir(dirname(target));
    try {
      // copyFile follows symbolic links, so the image holds plain files.
      await Deno.copyFile(join(source, path), target);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        throw new Deno.errors.NotFound(
          `${join(source, path)} is listed in ${options.list} but missing`,
        );
      }
      throw error;
    }
  }
  const entrypoint = join(dir, options.entrypoint);
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
