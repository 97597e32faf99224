/**
 * Writes `lib/cli/init/_scaffold.ts`, the files `kinglet init` writes from
 * the scaffold, the project in `scaffold/` (a namespaced `Widget` of
 * `example.org`, checked, linted, formatted and tested as kinglet's code):
 * each file by its path, and the cluster-scoped variant of the files where
 * `--scope Cluster` differs, made from the scaffold's by the exact edits of
 * {@link CLUSTER_EDITS}, and the variant of those `--webhook` edits
 * ({@link WEBHOOK_EDITS}; the scaffold's src/webhook.ts and its test are
 * written only then). `lib/cli/init/scaffold.ts` puts the author's names
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
  "src/webhook.ts": [[
    "    const { name: widget, namespace } = object.metadata;\n",
    "    const { metadata: { name: widget }, spec: { namespace } } = object;\n",
  ]],
  "tests/unit/webhook_test.ts": [
    [
      '  metadata: { name: "sample", namespace: "demo" },\n  spec: { message: "Hello" },\n',
      '  metadata: { name: "sample" },\n  spec: { message: "Hello", namespace: "demo" },\n',
    ],
    ['cluster.object<Widget>(WIDGETS, "demo/sample")', 'cluster.object<Widget>(WIDGETS, "sample")'],
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
 * What a project of `kinglet init --webhook` says instead of the scaffold, by
 * path, as {@link CLUSTER_EDITS} does: main.ts serves src/webhook.ts,
 * src/operator.ts declares it (so that deploy writes its configurations and
 * RBAC), the README lists it, and the e2e test has the API server call it.
 * Each text is found once in the scaffold's file and in its cluster-scoped
 * variant, so the edits apply to either.
 */
export const WEBHOOK_EDITS: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  "main.ts": [
    [
      " * `METRICS_ADDRESS` (default `127.0.0.1:8080`).\n",
      " * `METRICS_ADDRESS` (default `127.0.0.1:8080`), and its admission webhook\n" +
      " * (src/webhook.ts) over HTTPS on `WEBHOOK_ADDRESS` (default `127.0.0.1:9443`).\n",
    ],
    [
      'import { operator } from "./src/operator.ts";\n',
      'import { operator } from "./src/operator.ts";\nimport { widgetWebhook } from "./src/webhook.ts";\n',
    ],
    [
      "setupLogging(flags.logging); // a failing reconcile is logged, not only counted\n",
      "setupLogging(flags.logging); // a failing reconcile is logged, not only counted\n" +
      "// On a node, loopback: the API server beside it calls https://127.0.0.1:9443\n" +
      "// (deploy/systemd/webhooks.yaml). In the pod, deploy/deployment.yaml sets :9443, every\n" +
      "// interface, and the API server calls through the Service of deploy/webhooks.yaml.\n" +
      'const webhookAddress = Deno.env.get("WEBHOOK_ADDRESS") ?? "127.0.0.1:9443";\n',
    ],
    [
      "    leaderElection: { namespace: operator.namespace, name: operator.leaseName },\n  }),\n});\n" +
      "manager.add(widgetController);\n",
      "    leaderElection: { namespace: operator.namespace, name: operator.leaseName },\n  }),\n" +
      "  // Served on every replica, leader or not. Its CA and certificate live in the Secret\n" +
      "  // widget-operator-webhook-tls, made, rotated and put into the configurations here.\n" +
      "  webhook: {\n" +
      "    operator: operator.name,\n" +
      "    address: webhookAddress,\n" +
      '    ...(webhookAddress.startsWith(":") && { service: { namespace: operator.namespace } }),\n' +
      "    certificates: { namespace: operator.namespace },\n" +
      "  },\n});\n" +
      "manager.add(widgetController);\nmanager.addWebhook(widgetWebhook);\n",
    ],
  ],
  "src/controller.ts": [[
    "  owns: [{ resource: CONFIG_MAPS, labelSelector: `${MANAGED_BY}=${OPERATOR}` }],\n",
    "  owns: [{ resource: CONFIG_MAPS, labelSelector: `${MANAGED_BY}=${OPERATOR}` }],\n" +
    "  // What src/webhook.ts reads by client, past the cache: the RBAC derived from this grants it.\n" +
    '  rbac: [{ ...WEBHOOK_READS, reason: "the webhook reads the ConfigMap a Widget would write" }],\n',
  ], [
    "/** The controller of Widget objects. */\n",
    'const WEBHOOK_READS = { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] };\n\n' +
    "/** The controller of Widget objects. */\n",
  ]],
  "src/operator.ts": [
    [
      'import { widgetController } from "./controller.ts";\n',
      'import { widgetController } from "./controller.ts";\nimport { widgetWebhook } from "./webhook.ts";\n',
    ],
    [
      "  controllers: [widgetController],\n",
      "  controllers: [widgetController],\n" +
      "  // deploy writes its configurations, its Service and the RBAC it needs (webhooks.yaml).\n" +
      "  webhooks: { admission: [widgetWebhook] },\n",
    ],
    [
      '    comment: ["/healthz and /readyz for the kubelet; /metrics stays on loopback."],\n  }],\n',
      '    comment: ["/healthz and /readyz for the kubelet; /metrics stays on loopback."],\n  }, {\n' +
      '    name: "WEBHOOK_ADDRESS",\n' +
      '    value: ":9443",\n' +
      '    comment: ["The webhook on every interface, for the Service of webhooks.yaml."],\n  }],\n',
    ],
  ],
  "tests/e2e/operator_test.ts": [
    [
      " * request it is denied fails the test, naming the verb and the resource.\n */\n",
      " * request it is denied fails the test, naming the verb and the resource.\n * Its webhook is called by the API server on loopback, as on a node: the\n * configurations of deploy/systemd/webhooks.yaml are applied first, and\n * the operator keeps its certificates in its namespace with the webhook's RBAC.\n */\n",
    ],
    [
      'import { parse } from "yaml";\nimport { CONFIG_MAPS, type KubeObject } from "@kinglet/kinglet/kube";\n',
      'import { parse, parseAllDocuments } from "yaml";\nimport {\n  CONFIG_MAPS,\n  type KubeObject,\n  MUTATING_WEBHOOK_CONFIGURATIONS,\n  NAMESPACES,\n  type Resource,\n  SECRETS,\n  VALIDATING_WEBHOOK_CONFIGURATIONS,\n} from "@kinglet/kinglet/kube";\nimport { webhookObjectNames } from "@kinglet/kinglet/runtime/webhook";\n',
    ],
    [
      "  listener.close();\n  return port;\n}\n",
      '  listener.close();\n  return port;\n}\n\n/** Where the webhook listens: on loopback, as on a node, on a port of the test\'s own. */\nconst WEBHOOK_PORT = freePort();\nconst WEBHOOK = webhookObjectNames(operator.name);\nconst CONFIGURATIONS: Record<string, Resource> = {\n  ValidatingWebhookConfiguration: VALIDATING_WEBHOOK_CONFIGURATIONS,\n  MutatingWebhookConfiguration: MUTATING_WEBHOOK_CONFIGURATIONS,\n};\n\n/** The configurations deno task deploy writes for a node, calling WEBHOOK_PORT. */\nasync function webhookConfigurations(): Promise<KubeObject[]> {\n  const file = new URL("../../deploy/systemd/webhooks.yaml", import.meta.url);\n  const text = (await Deno.readTextFile(file)).replaceAll(":9443/", `:${WEBHOOK_PORT}/`);\n  return parseAllDocuments(text).map((document) => document.toJS() as KubeObject);\n}\n\n/** What the webhook needs besides the controllers\' rules, as deploy/\'s webhook roles grant. */\nconst WEBHOOK_RULES = [{\n  apiGroups: ["admissionregistration.k8s.io"],\n  resources: ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"],\n  resourceNames: [WEBHOOK.validating, WEBHOOK.mutating],\n  verbs: ["get", "patch"],\n}];\nconst SECRET_RULES = [\n  { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },\n  { apiGroups: [""], resources: ["secrets"], resourceNames: [WEBHOOK.secret], verbs: ["get", "update"] },\n];\n',
    ],
    [
      '    env: { HEALTH_ADDRESS: health, METRICS_ADDRESS: "0" },\n',
      '    env: { HEALTH_ADDRESS: health, METRICS_ADDRESS: "0", WEBHOOK_ADDRESS: `127.0.0.1:${WEBHOOK_PORT}` },\n',
    ],
    [
      '  await installCrds(cluster.client, [crd], { fieldManager: "kubectl" });\n',
      '  await installCrds(cluster.client, [crd], { fieldManager: "kubectl" });\n  // As the node install applies deploy/systemd/webhooks.yaml; the Secret goes in its namespace.\n  const configurations = await webhookConfigurations();\n  for (const configuration of configurations) {\n    const resource = CONFIGURATIONS[configuration.kind!]!;\n    await cluster.client.apply(resource, configuration, { fieldManager: "kubectl", force: true });\n  }\n  const system = { apiVersion: "v1", kind: "Namespace", metadata: { name: operator.namespace } };\n  await cluster.client.apply(NAMESPACES, system, { fieldManager: "kubectl" });\n',
    ],
    [
      "    rules: controllerRules(operator.controllers),\n",
      "    rules: [...controllerRules(operator.controllers), ...WEBHOOK_RULES],\n    namespaced: { [operator.namespace]: SECRET_RULES },\n",
    ],
    [
      "    assert.equal(ready.status?.observedGeneration, ready.metadata.generation);\n",
      '    assert.equal(ready.status?.observedGeneration, ready.metadata.generation);\n    // The API server calls the webhook: defaulting trims the message...\n    const changed = await client.patch<Widget>(WIDGETS, "sample", { spec: { message: "  Bye  " } }, {\n      type: "merge",\n    });\n    assert.equal(changed.spec.message, "Bye");\n    // ...and validation keeps a Widget from a ConfigMap that is another\'s.\n    await client.create(CONFIG_MAPS, {\n      apiVersion: "v1",\n      kind: "ConfigMap",\n      metadata: { name: "taken-widget" },\n    });\n    const { metadata: { namespace: where }, spec } = ready;\n    const taken = client.create(WIDGETS, {\n      apiVersion: ready.apiVersion,\n      kind: ready.kind,\n      metadata: { name: "taken", ...(where && { namespace: where }) },\n      spec,\n    });\n    await assert.rejects(taken, /ConfigMap .*taken-widget exists and is not this Widget\'s/);\n',
    ],
    [
      "  } finally {\n    await running.stop();\n",
      "  } finally {\n    await running.stop();\n    // Cluster-wide and failing closed: they must not outlive the operator they call.\n    for (const configuration of configurations) {\n      const resource = CONFIGURATIONS[configuration.kind!]!;\n      await client.delete(resource, configuration.metadata!.name!, { ignoreNotFound: true });\n    }\n    const secret = { namespace: operator.namespace, ignoreNotFound: true };\n    await client.delete(SECRETS, WEBHOOK.secret, secret);\n",
    ],
  ],
  "README.md": [[
    "  whose `reconcile` applies it and sets the condition\n",
    "  whose `reconcile` applies it and sets the condition\n" +
    "- `src/webhook.ts`: the admission webhook (`kinglet init --webhook`): defaulting trims the\n" +
    "  message, validation denies a Widget whose ConfigMap is another's; `main.ts` serves it on\n" +
    "  `WEBHOOK_ADDRESS` (default `127.0.0.1:9443`, where the API server of a node calls it), and\n" +
    "  `deno task deploy` writes its configurations from `src/operator.ts`\n",
  ]],
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
 * The files `edits` edits, each edit applied to the file of `files`.
 *
 * @throws {Error} naming the file and the text when an edit's text is not
 * found exactly once: the scaffold changed, and the edit must follow.
 */
function edited(
  files: ReadonlyMap<string, string>,
  edits: Readonly<Record<string, readonly (readonly [string, string])[]>>,
  variant: string,
): Map<string, string> {
  const result = new Map<string, string>();
  for (const [path, pairs] of Object.entries(edits)) {
    let text = files.get(path);
    if (text === undefined) throw new Error(`scaffold/${path}: missing, yet edited for ${variant}`);
    for (const [from, to] of pairs) {
      const count = text.split(from).length - 1;
      if (count !== 1) {
        throw new Error(
          `scaffold/${path}: the ${variant} edit of ${JSON.stringify(from)} finds it ` +
            `${count} times, not once; make it follow the scaffold`,
        );
      }
      text = text.replace(from, () => to);
    }
    result.set(path, text);
  }
  return result;
}

/**
 * The cluster-scoped variant of the files {@link CLUSTER_EDITS} edits.
 *
 * @throws {Error} naming the file and the text when an edit's text is not
 * found exactly once: the scaffold changed, and the edit must follow.
 */
export function clusterVariant(files: ReadonlyMap<string, string>): Map<string, string> {
  return edited(files, CLUSTER_EDITS, "cluster-scoped");
}

/**
 * The variant of the files {@link WEBHOOK_EDITS} edits, for `kinglet init
 * --webhook`, from `files` (the scaffold's, or with their cluster-scoped
 * variant laid over them).
 *
 * @throws {Error} as {@link clusterVariant} does.
 */
export function webhookVariant(files: ReadonlyMap<string, string>): Map<string, string> {
  return edited(files, WEBHOOK_EDITS, "webhook");
}

/**
 * The module's records for the scaffold under `dir`: its files, their
 * cluster-scoped variant, and the webhook variant of each.
 */
async function generated(dir: string): Promise<{ [name in RecordName]: Map<string, string> }> {
  const files = await readScaffold(dir);
  const cluster = clusterVariant(files);
  return {
    NAMESPACED_FILES: files,
    CLUSTER_FILES: cluster,
    WEBHOOK_FILES: webhookVariant(files),
    CLUSTER_WEBHOOK_FILES: webhookVariant(new Map([...files, ...cluster])),
  };
}

/** The records of {@link SCAFFOLD_MODULE}, each with its doc. */
const RECORDS = {
  NAMESPACED_FILES: "The scaffold's files, by path.",
  CLUSTER_FILES: "The files of a cluster-scoped kind's project that differ, by path.",
  WEBHOOK_FILES: "The files of a project with a webhook (`--webhook`) that differ, by path.",
  CLUSTER_WEBHOOK_FILES: "The same, for a cluster-scoped kind's project with a webhook.",
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
    const where = name === "NAMESPACED_FILES" ? "" : ` (${name})`;
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
