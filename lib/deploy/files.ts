/**
 * Every deploy file of an operator, by its path in the project, and the
 * command line a project's `deno task deploy` runs: write them, check that
 * the committed ones match (`--check`), or assemble the image's root file
 * system in its build stage (`--rootfs <dir> <executable>`).
 *
 * @example
 * ```ts
 * import { deployFiles } from "./files.ts";
 * import { CONFIG_MAPS } from "../kube/mod.ts";
 * const files = deployFiles({
 *   name: "mirror-operator",
 *   envPrefix: "MIRROR_",
 *   image: "ghcr.io/example/mirror-operator:0.1.0",
 *   controllers: [{ name: "mirror", resource: CONFIG_MAPS }],
 * });
 * files.has("deploy/systemd/mirror-operator.service"); // true
 * files.has("deploy/clusterrole.yaml"); // true
 * ```
 *
 * @module
 */
import { dirname, join } from "node:path";
import {
  crdFolder,
  crdKustomizationYaml,
  deploymentYaml,
  kustomizationYaml,
  namespaceYaml,
} from "./cluster_files.ts";
import { dockerfile, dockerignore, scratchFilesTxt } from "./image_files.ts";
import { nodeFiles } from "./node_files.ts";
import { describeOperator, type OperatorDescription } from "./operator.ts";
import { rbacFiles } from "./rbac_files.ts";
import { webhooksYaml } from "./webhook_files.ts";
import { assembleRootfs } from "./rootfs.ts";

/**
 * Every file, by its path relative to the project's root, in the order they
 * can be applied: the RBAC, the Namespace, the Deployment, the webhooks
 * (when it serves some) and the kustomization in deploy/ (and one beside the CRDs), the units in deploy/systemd/, the Dockerfile,
 * its dockerignore and the image's file list.
 *
 * @throws {TypeError} naming the field (and the spec) of a description it
 * cannot derive the files from; see `describeOperator`.
 */
export function deployFiles(description: OperatorDescription): Map<string, string> {
  const operator = describeOperator(description);
  const deploy = operator.layout.deploy;
  const files = new Map<string, string>();
  for (const [name, content] of rbacFiles(operator)) files.set(`${deploy}/${name}`, content);
  files.set(`${deploy}/namespace.yaml`, namespaceYaml(operator));
  files.set(`${deploy}/deployment.yaml`, deploymentYaml(operator));
  const webhooks = webhooksYaml(operator, "service");
  if (webhooks !== undefined) files.set(`${deploy}/webhooks.yaml`, webhooks);
  files.set(`${deploy}/kustomization.yaml`, kustomizationYaml(operator));
  const crds = crdFolder(operator);
  if (crds !== undefined) files.set(`${crds}kustomization.yaml`, crdKustomizationYaml(operator));
  for (const [name, content] of nodeFiles(operator)) {
    files.set(`${deploy}/systemd/${name}`, content);
  }
  files.set(operator.layout.dockerfile, dockerfile(operator));
  files.set(`${operator.layout.dockerfile}.dockerignore`, dockerignore(operator));
  files.set(operator.layout.scratchFiles, scratchFilesTxt(operator));
  return files;
}

/**
 * How the files under `root` differ from what the description generates:
 * one line per missing or changed file, naming its first differing line.
 * Empty when they match.
 */
export async function compareDeployFiles(
  description: OperatorDescription,
  root: string,
): Promise<string[]> {
  const problems: string[] = [];
  for (const [name, content] of deployFiles(description)) {
    const path = join(root, name);
    const actual = await readIfExists(path);
    if (actual === undefined) problems.push(`${path}: missing`);
    else if (actual !== content) problems.push(`${path}: ${firstDifference(content, actual)}`);
  }
  return problems;
}

/**
 * Writes the files under `root` (folders created as needed), leaving alone
 * those already up to date; one line per file written.
 */
export async function writeDeployFiles(
  description: OperatorDescription,
  root: string,
): Promise<string[]> {
  const written: string[] = [];
  for (const [name, content] of deployFiles(description)) {
    const path = join(root, name);
    if ((await readIfExists(path)) === content) continue;
    try {
      await Deno.writeTextFile(path, content);
    } catch (error) {
      // A folder is made only when missing: a task may write files of a folder, not the folder.
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      await Deno.mkdir(dirname(path), { recursive: true });
      await Deno.writeTextFile(path, content);
    }
    written.push(`wrote ${path}`);
  }
  return written;
}

/**
 * A project's `deno task deploy`, from its arguments: writes the files
 * under the current folder (or `--dir=<root>`); with `--check`, lists what
 * differs on stderr and exits 1; with `--rootfs <dir> <executable>` (the
 * image's build stage), assembles the root file system instead.
 */
export async function runDeploy(
  description: OperatorDescription,
  args: readonly string[],
): Promise<void> {
  const operator = describeOperator(description);
  const rootfs = args.indexOf("--rootfs");
  if (rootfs !== -1) {
    const [dir, executable] = args.slice(rootfs + 1);
    if (!dir || !executable) {
      say(Deno.stderr, "usage: deno task deploy --rootfs <dir> <executable>");
      Deno.exit(2);
    }
    await assembleRootfs(dir, executable, {
      list: operator.layout.scratchFiles,
      entrypoint: `/${operator.name}`,
    });
    return;
  }
  const dirFlag = args.find((arg) => arg.startsWith("--dir="));
  const root = dirFlag ? dirFlag.slice("--dir=".length) : ".";
  if (args.includes("--check")) {
    const problems = await compareDeployFiles(description, root);
    for (const problem of problems) say(Deno.stderr, problem);
    if (problems.length > 0) {
      say(Deno.stderr, "The deploy files are out of date: run `deno task deploy` and commit them.");
      Deno.exit(1);
    }
    say(Deno.stdout, `the deploy files are up to date (${deployFiles(description).size} files)`);
    return;
  }
  const written = await writeDeployFiles(description, root);
  for (const line of written) say(Deno.stdout, line);
  if (written.length === 0) say(Deno.stdout, "the deploy files are already up to date");
}

/** The text of `path`, or `undefined` when there is no such file. */
export async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

/**
 * Where `actual` first differs from `expected`, as one phrase for a drift
 * report.
 *
 * @example
 * ```ts
 * import { firstDifference } from "./files.ts";
 * firstDifference("a\nb\n", "a\nc\n"); // 'differs from line 2: expected "b", found "c"'
 * ```
 */
export function firstDifference(expected: string, actual: string): string {
  const want = expected.split("\n");
  const have = actual.split("\n");
  const index = want.findIndex((line, i) => line !== have[i]);
  const line = index === -1 ? want.length : index;
  return `differs from line ${line + 1}: expected ${
    JSON.stringify(want[line] ?? "<end of file>")
  }, found ${JSON.stringify(have[line] ?? "<end of file>")}`;
}

const encoder = new TextEncoder();
function say(stream: typeof Deno.stdout, message: string): void {
  stream.writeSync(encoder.encode(`${message}\n`));
}
