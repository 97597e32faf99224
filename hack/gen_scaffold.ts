/**
 * Writes `lib/cli/init/_scaffold.ts`, the files `kinglet init` writes from
 * the scaffold, the project in `scaffold/` (a namespaced `Widget` of
 * `example.org`, checked, linted, formatted and tested as kinglet's code):
 * each file by its path, and the cluster-scoped variant of the files where
 * `--scope Cluster` differs, made from the scaffold's by the exact edits of
 * {@link CLUSTER_EDITS}. `lib/cli/init/scaffold.ts` puts the author's names
 * in. With `--check` it verifies the committed module matches (exit 1 with
 * the first difference when it does not).
 *
 * ```sh
 * deno task scaffold             # regenerate
 * deno task scaffold --check     # what the drift test checks
 * ```
 *
 * The cluster-scoped variant is no second folder: it differs in a dozen
 * lines, which the edits state once, and a scaffold that moves under one
 * fails here, naming it. Its projects are checked and tested as generated
 * (tests/unit/cli_init_project_test.ts, tests/e2e/init_project_test.ts).
 *
 * `--dir=<path>` reads the scaffold from another folder than `scaffold/`
 * (tests use it).
 *
 * @module
 */
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { firstDifference, readIfExists, runGenerator } from "./_generated_files.ts";

/** The scaffold's folder. */
export const SCAFFOLD_DIR: string = fileURLToPath(new URL("../scaffold/", import.meta.url));

/** The module init reads the scaffold from. */
export const SCAFFOLD_MODULE: string = fileURLToPath(
  new URL("../lib/cli/init/_scaffold.ts", import.meta.url),
);

/**
 * What a cluster-scoped kind's project says instead of the scaffold, by path:
 * each edit replaces a text found exactly once in the scaffold's file. Its
 * spec names the namespace its ConfigMap goes into, and its objects have none.
 */
export const CLUSTER_EDITS: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  "src/kind.ts": [["  namespaced: true,\n", "  namespaced: false,\n"]],
  "src/schema.ts": [
    [
      "  plural: WIDGETS.plural,\n",
      '  plural: WIDGETS.plural,\n  scope: "Cluster", // as kind.ts says: namespaced: false\n',
    ],
    [
      '    message: z.string().min(1).describe("What the ConfigMap says."),\n',
      '    message: z.string().min(1).describe("What the ConfigMap says."),\n' +
      "    namespace: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/).max(63)\n" +
      '      .describe("The namespace the ConfigMap goes into."),\n',
    ],
  ],
  "src/controller.ts": [[
    "  const { name, namespace } = widget.metadata;\n",
    "  const { metadata: { name }, spec: { namespace } } = widget;\n",
  ]],
  "tests/unit/controller_test.ts": [
    [
      '  metadata: { name: "sample", namespace: "demo", uid: "u-1" },\n' +
      '  spec: { message: "Hello" },\n',
      '  metadata: { name: "sample", uid: "u-1" },\n' +
      '  spec: { message: "Hello", namespace: "demo" },\n',
    ],
    ['metadata: { name: "sample", namespace: "demo" } };', 'metadata: { name: "sample" } };'],
    ['cluster.object<Widget>(WIDGETS, "demo/sample")', 'cluster.object<Widget>(WIDGETS, "sample")'],
  ],
  "tests/e2e/operator_test.ts": [
    [
      '      metadata: { name: "sample", namespace },\n      spec: { message: "Hello" },\n',
      '      metadata: { name: "sample" },\n      spec: { message: "Hello", namespace },\n',
    ],
    [
      "  } finally {\n    await running.stop();\n  }\n",
      "  } finally {\n    await running.stop();\n" +
      "    // Cluster-scoped, it outlives the test's namespace.\n" +
      '    await client.delete(WIDGETS, "sample", { ignoreNotFound: true });\n  }\n',
    ],
  ],
  // Its objects have no namespace: the harness's goes into the spec.
  "bench/target.json": [[
    '      "name": "{name}",\n      "namespace": "{namespace}"\n    },\n' +
    '    "spec": {\n      "message": "{name}"\n    }\n',
    '      "name": "{name}"\n    },\n' +
    '    "spec": {\n      "message": "{name}",\n      "namespace": "{namespace}"\n    }\n',
  ]],
  "README.md": [
    [
      "holds a\nmessage; its controller writes it into a ConfigMap it owns, named `<name>-widget`, " +
      "puts it back when\nit is changed or deleted,",
      "is\ncluster-scoped and holds a message and a namespace; its controller writes the message " +
      "into a\nConfigMap it owns in that namespace, named `<name>-widget`, puts it back when it is " +
      "changed or\ndeleted,",
    ],
    ["spec: { message: Hello }\n", "spec: { message: Hello, namespace: default }\n"],
    [
      "kubectl get configmap sample-widget -o yaml\n",
      "kubectl get configmap sample-widget -o yaml --namespace default\n",
    ],
  ],
};

/**
 * The scaffold's files under `dir`, by path (with `/` between folders),
 * sorted.
 */
export async function readScaffold(dir: string): Promise<Map<string, string>> {
  const paths: string[] = [];
  const walk = async (at: string) => {
    for await (const entry of Deno.readDir(at)) {
      const path = join(at, entry.name);
      if (entry.isDirectory) await walk(path);
      else paths.push(relative(dir, path).split(sep).join("/"));
    }
  };
  await walk(dir);
  paths.sort();
  return new Map(
    await Promise.all(paths.map(async (path): Promise<[string, string]> => [
      path,
      await Deno.readTextFile(join(dir, path)),
    ])),
  );
}

/**
 * The cluster-scoped variant of the files {@link CLUSTER_EDITS} edits.
 *
 * @throws {Error} naming the file and the text when an edit's text is not
 * found exactly once: the scaffold changed, and the edit must follow.
 */
export function clusterVariant(files: ReadonlyMap<string, string>): Map<string, string> {
  const variant = new Map<string, string>();
  for (const [path, edits] of Object.entries(CLUSTER_EDITS)) {
    let text = files.get(path);
    if (text === undefined) throw new Error(`scaffold/${path}: missing, yet edited for Cluster`);
    for (const [from, to] of edits) {
      const count = text.split(from).length - 1;
      if (count !== 1) {
        throw new Error(
          `scaffold/${path}: the cluster-scoped edit of ${JSON.stringify(from)} finds it ` +
            `${count} times, not once; make it follow the scaffold`,
        );
      }
      text = text.replace(from, () => to);
    }
    variant.set(path, text);
  }
  return variant;
}

/** The module's records for the scaffold under `dir`: its files, and their cluster-scoped variant. */
async function generated(dir: string): Promise<{ [name in RecordName]: Map<string, string> }> {
  const files = await readScaffold(dir);
  return { NAMESPACED_FILES: files, CLUSTER_FILES: clusterVariant(files) };
}

/** The records of {@link SCAFFOLD_MODULE}, each with its doc. */
const RECORDS = {
  NAMESPACED_FILES: "The scaffold's files, by path.",
  CLUSTER_FILES: "The files of a cluster-scoped kind's project that differ, by path.",
} as const;
type RecordName = keyof typeof RECORDS;

/**
 * The content of {@link SCAFFOLD_MODULE} for the scaffold under `dir` (left
 * out of `deno fmt`, like the other generated modules).
 *
 * @example
 * ```ts
 * import { SCAFFOLD_DIR, scaffoldModule } from "./gen_scaffold.ts";
 * (await scaffoldModule(SCAFFOLD_DIR)).includes('"src/controller.ts"'); // true
 * ```
 */
export async function scaffoldModule(dir: string): Promise<string> {
  const records = await generated(dir);
  let source = "// Generated by `deno task scaffold` from scaffold/. Do not edit.\n" +
    "/**\n" +
    " * The scaffold's files, which `scaffold.ts` turns into a project's: those of\n" +
    " * a namespaced kind, and those a cluster-scoped kind's project holds instead.\n" +
    " *\n * @module\n */\n";
  for (const [name, doc] of Object.entries(RECORDS)) {
    const entries = [...records[name as RecordName]].map(([path, text]) =>
      `  ${JSON.stringify(path)}:\n    ${JSON.stringify(text)},\n`
    );
    source += `\n/** ${doc} */\nexport const ${name}: Readonly<Record<string, string>> = {\n` +
      `${entries.join("")}};\n`;
  }
  return source;
}

/**
 * How {@link SCAFFOLD_MODULE} differs from what the scaffold under `dir`
 * generates, file by file where the committed module loads: empty when it
 * is up to date.
 *
 * @example
 * ```ts
 * import { compareScaffold, SCAFFOLD_DIR } from "./gen_scaffold.ts";
 * await compareScaffold(SCAFFOLD_DIR); // [] when lib/cli/init/_scaffold.ts is up to date
 * ```
 */
export async function compareScaffold(dir: string): Promise<string[]> {
  const expected = await scaffoldModule(dir);
  const actual = await readIfExists(SCAFFOLD_MODULE);
  if (actual === undefined) return [`${SCAFFOLD_MODULE}: missing`];
  if (actual === expected) return [];
  const problems: string[] = [];
  // Each file's text is one line of the module: where it differs says more file by file.
  const committed: { [name in RecordName]?: Readonly<Record<string, string>> } = await import(
    "../lib/cli/init/_scaffold.ts"
  ).catch(() => ({}));
  for (const [name, files] of Object.entries(await generated(dir))) {
    const found = committed[name as RecordName] ?? {};
    const where = name === "CLUSTER_FILES" ? " (cluster-scoped)" : "";
    for (const [path, text] of files) {
      const have = found[path];
      const at = `${SCAFFOLD_MODULE}: ${path}${where}`;
      if (have === undefined) problems.push(`${at}: missing`);
      else if (have !== text) problems.push(`${at}: ${firstDifference(text, have)}`);
    }
    for (const path of Object.keys(found)) {
      if (!files.has(path)) problems.push(`${SCAFFOLD_MODULE}: ${path}${where}: not generated`);
    }
  }
  return problems.length ? problems : [`${SCAFFOLD_MODULE}: ${firstDifference(expected, actual)}`];
}

if (import.meta.main) {
  await runGenerator({
    defaultDir: SCAFFOLD_DIR,
    compare: compareScaffold,
    async write(dir) {
      const content = await scaffoldModule(dir);
      if ((await readIfExists(SCAFFOLD_MODULE)) === content) return [];
      await Deno.writeTextFile(SCAFFOLD_MODULE, content);
      return [`wrote ${SCAFFOLD_MODULE}`];
    },
    outOfDate: "The scaffold's module is out of date: run `deno task scaffold` and commit " +
      "lib/cli/init/_scaffold.ts.",
    count: "lib/cli/init/_scaffold.ts holds it",
  }, Deno.args);
}
