// deno-lint-ignore-file no-console -- the command's output is its interface
/**
 * `kinglet init <dir> --group example.dev --kind Mirror`: writes an operator
 * project that depends on kinglet by its package names, green as generated
 * (`deno task check`, `deno task test`, `deno task e2e`).
 *
 * Everything is checked before anything is written: the names, the folder
 * (new or empty) and `--kinglet`. The files are then written into a temporary
 * folder beside `<dir>` and renamed into place in one step, so that a failure
 * leaves no half-written project behind.
 *
 * @example
 * ```ts ignore
 * import { initCommand } from "./command.ts";
 * await initCommand(["mirror-operator", "--group", "example.dev", "--kind", "Mirror"]);
 * ```
 *
 * @module
 */
import { basename, dirname, join, resolve } from "node:path";
import { type FlagSpec, formatHelp, parseFlags, UsageError } from "../flags.ts";
import { locateKinglet, VENDORED } from "./dependency.ts";
import { projectNames } from "./names.ts";
import { projectFiles } from "./project.ts";

/** Flags of `kinglet init`. */
export const INIT_FLAGS: readonly FlagSpec[] = [
  {
    name: "group",
    type: "string",
    help: "API group of the kind, a DNS subdomain you own with at least one dot, e.g. example.dev.",
  },
  {
    name: "kind",
    type: "string",
    help: "The kind, in UpperCamelCase, e.g. Mirror.",
  },
  {
    name: "plural",
    type: "string",
    help: "Resource name in URLs, a lower-case DNS label; defaults to the kind pluralised.",
  },
  {
    name: "version",
    type: "string",
    default: "v1alpha1",
    help: "API version of the kind: v1, v1alpha1, v2beta3 and the like.",
  },
  {
    name: "kinglet",
    type: "string",
    help:
      `Where the project finds kinglet's sources: a local checkout (written relative to the project) or an https:// URL of a tag; defaults to ${VENDORED}, to be cloned there.`,
  },
];

const USAGE = "kinglet init <dir> --group <group> --kind <Kind> [flags]\n\n" +
  "Write a new operator project into <dir> (new or empty).";

/**
 * Runs `kinglet init <args>`; resolves to the exit code.
 *
 * @throws {UsageError} on a missing or bad argument, or a folder that is not empty.
 * @throws {Error} when the files cannot be written (nothing is left behind).
 */
export async function initCommand(args: readonly string[]): Promise<number> {
  // No KINGLET_* variables: they set the operator's flags (KINGLET_VERSION is no kind's version).
  const flags = parseFlags(INIT_FLAGS, args, {});
  if (flags.help) {
    console.log(formatHelp(USAGE, INIT_FLAGS, "Flags:", false));
    return 0;
  }
  const [dir, ...extra] = flags.positionals;
  if (dir === undefined) {
    throw new UsageError("kinglet init needs a folder: kinglet init <dir> --group ... --kind ...");
  }
  if (extra.length) throw new UsageError(`unexpected argument ${extra[0]}`);
  const { group, kind, plural, version } = flags.values;
  if (!group) throw new UsageError("kinglet init needs --group, e.g. --group example.dev");
  if (!kind) throw new UsageError("kinglet init needs --kind, e.g. --kind Mirror");
  const names = projectNames({
    group,
    kind,
    ...(plural !== undefined && { plural }),
    ...(version !== undefined && { version }),
  });
  const target = resolve(dir);
  await refuseNonEmpty(dir, target);
  const kinglet = await locateKinglet(flags.values.kinglet, target);
  const files = projectFiles(names, kinglet.spec);
  await writeProject(target, files);
  console.log(`Wrote the ${names.kind} operator (${names.crdName}) into ${dir}:`);
  for (const path of [...files.keys()].sort()) console.log(`  ${path}`);
  console.log("\nNext:");
  console.log(`  cd ${dir}`);
  if (!kinglet.path && kinglet.spec === VENDORED) {
    console.log(
      `  git clone --depth 1 --branch <tag> <kinglet's repository> ${VENDORED.slice(2)}`,
    );
  }
  console.log("  deno task test    # the unit tests, on the in-memory API server");
  console.log("  deno task e2e     # with KINGLET_TEST_KUBECONFIG or KUBEBUILDER_ASSETS set");
  console.log("  deno task start   # against the cluster your kubeconfig reaches");
  return 0;
}

/**
 * Refuses a folder that holds anything, or a path that is not a folder.
 *
 * @throws {UsageError} saying what is in the way.
 */
async function refuseNonEmpty(dir: string, target: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(target);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  if (!info.isDirectory) {
    throw new UsageError(`${dir} is a file: name a new or empty folder for the project`);
  }
  const entries: string[] = [];
  for await (const entry of Deno.readDir(target)) entries.push(entry.name);
  if (entries.length) {
    const shown = entries.sort().slice(0, 3).join(", ") + (entries.length > 3 ? ", ..." : "");
    throw new UsageError(
      `${dir} is not empty (it holds ${shown}): name a new or empty folder for the project`,
    );
  }
}

/**
 * Writes `files` into a temporary folder beside `target`, then renames it
 * into place (onto `target` when that is an empty folder). On failure the
 * temporary folder is removed and `target` is as it was.
 */
async function writeProject(target: string, files: Map<string, string>): Promise<void> {
  const parent = dirname(target);
  await Deno.mkdir(parent, { recursive: true });
  const staging = await Deno.makeTempDir({ dir: parent, prefix: `.${basename(target)}.init-` });
  try {
    for (const [path, content] of files) {
      const file = join(staging, path);
      await Deno.mkdir(dirname(file), { recursive: true });
      await Deno.writeTextFile(file, content);
    }
    // makeTempDir makes the folder private (0700); a project is as readable as any other.
    if (Deno.build.os !== "windows") await Deno.chmod(staging, 0o755);
    await Deno.rename(staging, target);
  } catch (error) {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
    throw error;
  }
}
