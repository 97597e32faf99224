// deno-lint-ignore-file no-console -- the command's output is its interface
/**
 * `kinglet init <dir> --group example.dev --kind Mirror`: writes an operator
 * project that depends on kinglet by its package names, green as generated
 * (`deno task check`, `deno task test`, `deno task e2e`) whatever the length
 * of its names: `deno fmt` breaks its lines.
 *
 * Everything is checked before anything is written: the names, the folder
 * (new or empty) and `--kinglet`. The files (kinglet's scaffold with the
 * author's names, see `scaffold.ts`) are then written into a temporary
 * folder beside `<dir>` (with, by default, a copy of the kinglet init runs
 * from in `vendor/kinglet`, recorded in `kinglet.json`), formatted, and
 * renamed into place in one step, so that a failure leaves no half-written
 * project behind.
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
import { copyKinglet, kingletDigest, VENDOR_DIR } from "../../build/vendor.ts";
import { type KingletLocation, locateKinglet, VENDORED } from "./dependency.ts";
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
    name: "scope",
    type: "string",
    default: "Namespaced",
    choices: ["Namespaced", "Cluster"],
    help:
      "Namespaced: each object lives in a namespace; Cluster: cluster-scoped, as Namespaces and Nodes are (its spec then names the namespace of its ConfigMap).",
  },
  {
    name: "webhook",
    type: "boolean",
    default: "false",
    help:
      "Add an admission webhook (src/webhook.ts, defaulting and validation) that main.ts serves and src/operator.ts declares, so that deno task deploy writes its configurations.",
  },
  {
    name: "kinglet",
    type: "string",
    help:
      `Where the project finds kinglet's sources: a local checkout (written relative to the project) or an https:// URL of a commit; defaults to ${VENDORED}, a copy of the kinglet init runs from (kinglet.json records which).`,
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
  const { group, kind, plural, version, scope } = flags.values;
  if (!group) throw new UsageError("kinglet init needs --group, e.g. --group example.dev");
  if (!kind) throw new UsageError("kinglet init needs --kind, e.g. --kind Mirror");
  const names = projectNames({
    group,
    kind,
    ...(plural !== undefined && { plural }),
    ...(version !== undefined && { version }),
    ...(scope !== undefined && { scope }),
  });
  const target = resolve(dir);
  await refuseNonEmpty(dir, target);
  const kinglet = await locateKinglet(flags.values.kinglet, target);
  const files = projectFiles(names, kinglet.record, { webhook: flags.values.webhook === "true" });
  await writeProject(target, files, kinglet);
  console.log(`Wrote the ${names.kind} operator (${names.crdName}) into ${dir}:`);
  const vendored = kinglet.spec === VENDORED ? [`${VENDOR_DIR}/`] : [];
  for (const path of [...files.keys(), ...vendored].sort()) console.log(`  ${path}`);
  if (vendored.length) {
    const { record } = kinglet;
    const commit = record.commit ? ` (${record.commit})` : "";
    console.log(`kinglet ${record.version}${commit} is vendored; kinglet.json records which.`);
  }
  console.log("\nNext:");
  console.log(`  cd ${dir}`);
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
 * Copies the kinglet init runs from into the project, as its `kinglet.json`
 * records it.
 *
 * @throws {Error} when the copy is not what was recorded (kinglet's files changed meanwhile).
 */
async function vendor(kinglet: KingletLocation, project: string): Promise<void> {
  const copy = join(project, VENDOR_DIR);
  await copyKinglet(kinglet.path!, copy);
  const sha256 = await kingletDigest(copy);
  if (sha256 !== kinglet.record.sha256) {
    throw new Error(
      `Cannot vendor kinglet from ${kinglet.path}: its files changed while they were copied ` +
        `(${kinglet.record.sha256}, then ${sha256}); run kinglet init again`,
    );
  }
}

/**
 * Formats the project as its `deno task check` checks it, with the Deno
 * running init and the project's own `deno.json`: the scaffold is formatted
 * for its own names, and the author's, however long, may need lines broken
 * elsewhere.
 *
 * @throws {Error} with the formatter's output when it fails.
 */
async function format(dir: string): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--quiet"],
    cwd: dir,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    const output = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
    throw new Error(
      `Cannot format the new project with deno fmt (run kinglet init with deno: deno run -A ` +
        `main.ts init ...): ${output.trim()}`,
    );
  }
}

/**
 * Writes `files` into a temporary folder beside `target`, formats them, then renames it
 * into place (onto `target` when that is an empty folder). On failure the
 * temporary folder is removed and `target` is as it was.
 */
async function writeProject(
  target: string,
  files: Map<string, string>,
  kinglet: KingletLocation,
): Promise<void> {
  const parent = dirname(target);
  await Deno.mkdir(parent, { recursive: true });
  const staging = await Deno.makeTempDir({ dir: parent, prefix: `.${basename(target)}.init-` });
  try {
    for (const [path, content] of files) {
      const file = join(staging, path);
      await Deno.mkdir(dirname(file), { recursive: true });
      await Deno.writeTextFile(file, content);
    }
    if (kinglet.spec === VENDORED) await vendor(kinglet, staging);
    await format(staging);
    // makeTempDir makes the folder private (0700); a project is as readable as any other.
    if (Deno.build.os !== "windows") await Deno.chmod(staging, 0o755);
    await Deno.rename(staging, target);
  } catch (error) {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
    throw error;
  }
}
