/**
 * kinglet vendored into an operator's project, reproducibly: a copy of
 * exactly the files kinglet publishes (`publish.include` of its `deno.json`,
 * what JSR will serve), and a record of which kinglet it is: its version,
 * the commit of the checkout it was copied from, and the SHA-256 of the
 * copy, which the project's test recomputes with {@link kingletDigest}.
 *
 * `kinglet init` vendors the kinglet it runs from; to move a project to
 * another, run this module of that kinglet's checkout in the project:
 *
 * ```sh
 * deno run --allow-read --allow-write=vendor,kinglet.json --allow-run=git \
 *   <kinglet checkout>/lib/build/vendor.ts .
 * ```
 *
 * The same copy comes back from the commit alone, since the digest covers
 * the files' paths and contents and nothing else:
 * `git -C <checkout> archive <commit> <files> | tar -x -C vendor/kinglet`.
 *
 * @module
 */
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import meta from "../../deno.json" with { type: "json" };
import { sha256Hex } from "../_sha256.ts";

/** What kinglet publishes, and so what a project vendors: files and folders (ending in `/`). */
export const KINGLET_FILES: readonly string[] = meta.publish.include;

/** Where a project keeps its copy of kinglet, relative to its root. */
export const VENDOR_DIR = "vendor/kinglet";

/** Which kinglet a project was generated from: `kinglet.json` at its root. */
export interface KingletRecord {
  /** kinglet's version, from its `deno.json`; absent for a URL, which names it itself. */
  version?: string;
  /** The commit of the checkout it came from; absent when that was no git checkout. */
  commit?: string;
  /** True when the checkout had changes to the published files not in that commit. */
  uncommitted?: boolean;
  /** Where the project's import map finds it: `./vendor/kinglet`, a path or a URL. */
  source: string;
  /** `sha256-<hex>` of the vendored copy ({@link kingletDigest}); absent when not vendored. */
  sha256?: string;
}

/** The root of the kinglet this module belongs to. */
export const KINGLET_ROOT: string = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The published files under `root`, as paths relative to it with `/`,
 * sorted: what {@link kingletDigest} covers and {@link vendorKinglet} copies.
 *
 * @throws {Deno.errors.NotFound} when `root` lacks one of {@link KINGLET_FILES}.
 */
export async function kingletFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (path: string): Promise<void> => {
    const info = await Deno.stat(join(root, path));
    if (!info.isDirectory) {
      found.push(path);
      return;
    }
    for await (const entry of Deno.readDir(join(root, path))) {
      await walk(`${path.replace(/\/$/, "")}/${entry.name}`);
    }
  };
  for (const path of KINGLET_FILES) await walk(path);
  return found.sort();
}

/**
 * `sha256-<hex>` of kinglet's published files under `root`: of each path and
 * its contents, in path order, so equal copies hash equal wherever they lie.
 */
export async function kingletDigest(root: string): Promise<string> {
  const encoder = new TextEncoder();
  const parts: Uint8Array<ArrayBuffer>[] = [];
  for (const path of await kingletFiles(root)) {
    const content = await Deno.readFile(join(root, path));
    parts.push(encoder.encode(`${path}\0${content.length}\0`), content);
  }
  return `sha256-${await sha256Hex(parts)}`;
}

/**
 * The version and commit of the kinglet at `root`: the commit from git when
 * `root` is the top of a checkout and git may run, else none.
 */
export async function kingletRevision(
  root: string = KINGLET_ROOT,
): Promise<Pick<KingletRecord, "version" | "commit" | "uncommitted">> {
  const config = JSON.parse(await Deno.readTextFile(join(root, "deno.json")));
  const git = async (...args: string[]) => {
    try {
      const out = await new Deno.Command("git", {
        args: ["-C", root, ...args],
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).output();
      return out.success ? new TextDecoder().decode(out.stdout).trim() : undefined;
    } catch {
      return undefined; // no git, or not allowed to run it: the digest still pins the copy
    }
  };
  // A copy inside another repository (a project's vendor/kinglet) has no commit of its own.
  const top = await git("rev-parse", "--show-toplevel");
  const own = top !== undefined && resolve(top) === resolve(await Deno.realPath(root));
  const commit = own ? await git("rev-parse", "HEAD") : undefined;
  if (!commit) return { version: config.version };
  const changes = await git(
    "status",
    "--porcelain",
    "--untracked-files=all",
    "--",
    ...KINGLET_FILES,
  );
  return { version: config.version, commit, ...(changes && { uncommitted: true }) };
}

/**
 * Copies kinglet's published files from `from` into `to`, replacing what was
 * there.
 */
export async function copyKinglet(from: string, to: string): Promise<void> {
  await Deno.remove(to, { recursive: true }).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
  for (const path of await kingletFiles(from)) {
    await Deno.mkdir(dirname(join(to, path)), { recursive: true });
    await Deno.copyFile(join(from, path), join(to, path));
  }
}

/**
 * Vendors the kinglet at `from` into `<project>/vendor/kinglet` and returns
 * the record of the copy, which the caller writes as `kinglet.json`.
 */
export async function vendorKinglet(
  project: string,
  from: string = KINGLET_ROOT,
): Promise<KingletRecord> {
  const target = join(project, VENDOR_DIR);
  await copyKinglet(from, target);
  return {
    ...await kingletRevision(from),
    source: `./${VENDOR_DIR}`,
    sha256: await kingletDigest(target),
  };
}

/** `kinglet.json`: the record, as the project commits it. */
export function kingletRecordJson(record: KingletRecord): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}

if (import.meta.main) {
  const project = Deno.args[0];
  if (!project) {
    Deno.stderr.writeSync(new TextEncoder().encode(
      "usage: deno run --allow-read --allow-write=vendor,kinglet.json --allow-run=git " +
        "<kinglet checkout>/lib/build/vendor.ts <project>\n",
    ));
    Deno.exit(2);
  }
  const record = await vendorKinglet(project);
  await Deno.writeTextFile(join(project, "kinglet.json"), kingletRecordJson(record));
  const shown = relative(Deno.cwd(), join(project, VENDOR_DIR)) || VENDOR_DIR;
  Deno.stdout.writeSync(new TextEncoder().encode(
    `vendored kinglet ${record.version}${record.commit ? ` (${record.commit})` : ""} into ` +
      `${shown}; kinglet.json records it\n`,
  ));
}
