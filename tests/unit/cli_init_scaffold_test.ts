/**
 * The scaffold, `scaffold/`, and what `kinglet init` makes of it: the module
 * `deno task scaffold` writes from it is up to date, init writes it unchanged
 * for its own names and leaves none of them in a project of others, and its
 * operator description is the one init writes the deploy files from.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { deployFiles } from "../../lib/deploy/mod.ts";
import { importMap, kingletParagraph, VENDORED } from "../../lib/cli/init/dependency.ts";
import { projectNames } from "../../lib/cli/init/names.ts";
import { projectDeployFiles, projectFiles, RUN_PERMISSIONS } from "../../lib/cli/init/project.ts";
import {
  SCAFFOLD_INPUT,
  SCAFFOLD_KINGLET,
  substitute,
  substitutions,
  WEBHOOK_ONLY_FILES,
} from "../../lib/cli/init/scaffold.ts";
import {
  clusterVariant,
  compareScaffold,
  readScaffold,
  SCAFFOLD_DIR,
} from "../../hack/gen_scaffold.ts";
import { operator } from "../../scaffold/src/operator.ts";

const SCAFFOLD = await readScaffold(SCAFFOLD_DIR);

Deno.test("the scaffold's module is what the scaffold generates (run `deno task scaffold` if this fails)", async () => {
  assert.deepEqual(await compareScaffold(SCAFFOLD_DIR), []);
});

Deno.test("drift detection reports a scaffold changed since its module was written", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-scaffold-" });
  try {
    for (const [path, text] of SCAFFOLD) {
      await Deno.mkdir(join(dir, path, ".."), { recursive: true });
      const edited = path === "main.ts" ? text.replace("SIGTERM", "SIGHUP") : text;
      await Deno.writeTextFile(join(dir, path), edited);
    }
    const problems = await compareScaffold(dir);
    // The scaffold's main.ts, and the webhook variants', namespaced and cluster-scoped.
    assert.equal(problems.length, 3, problems.join("\n"));
    assert.match(problems[0]!, /_scaffold\.ts: main\.ts: differs from line \d+: expected .*SIGHUP/);
    assert.match(problems[1]!, /_scaffold\.ts: main\.ts \(WEBHOOK_FILES\): differs from line/);
    assert.match(problems[2]!, /main\.ts \(CLUSTER_WEBHOOK_FILES\): differs from line/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a cluster-scoped edit whose text the scaffold lost fails, naming the file", () => {
  const files = new Map(SCAFFOLD);
  files.set("src/controller.ts", files.get("src/controller.ts")!.replace("widget.metadata", "w"));
  assert.throws(
    () => clusterVariant(files),
    /scaffold\/src\/controller\.ts: the cluster-scoped edit of .* finds it 0 times, not once/,
  );
});

Deno.test("init writes the scaffold unchanged for the scaffold's own names and kinglet", () => {
  const files = projectFiles(projectNames(SCAFFOLD_INPUT), SCAFFOLD_KINGLET);
  for (const [path, text] of SCAFFOLD) {
    // Only a vendored kinglet has a copy to test; only a project with a webhook has one.
    if (path === "tests/unit/kinglet_test.ts" || WEBHOOK_ONLY_FILES.includes(path)) {
      assert.ok(!files.has(path), path);
    } else assert.equal(files.get(path), text, path);
  }
});

Deno.test("init --webhook writes the webhook and its test, served by main.ts and declared for deploy", () => {
  const names = projectNames(SCAFFOLD_INPUT);
  const files = projectFiles(names, SCAFFOLD_KINGLET, { webhook: true });
  for (const path of WEBHOOK_ONLY_FILES) assert.equal(files.get(path), SCAFFOLD.get(path), path);
  const main = files.get("main.ts")!;
  assert.match(main, /^manager\.addWebhook\(widgetWebhook\);$/m);
  assert.match(
    files.get("src/operator.ts")!,
    /^ {2}webhooks: \{ admission: \[widgetWebhook\] \},$/m,
  );
  // Deploy writes the configurations by Service and by loopback URL, and the webhook's RBAC.
  const inCluster = files.get("deploy/webhooks.yaml") ?? "";
  assert.match(inCluster, /name: widget-operator-mutating/);
  assert.match(inCluster, /name: widget-operator-validating/);
  assert.match(
    files.get("deploy/systemd/webhooks.yaml") ?? "",
    /url: https:\/\/127\.0\.0\.1:9443\//,
  );
  assert.match(files.get("deploy/deployment.yaml") ?? "", /WEBHOOK_ADDRESS/);
  const build = JSON.parse(files.get("deno.json")!).tasks.build as string;
  assert.match(build, /--allow-env=METRICS_ADDRESS,HEALTH_ADDRESS,WEBHOOK_ADDRESS$/);
  // Without the flag, none of it.
  const plain = projectFiles(names, SCAFFOLD_KINGLET);
  assert.ok(!plain.has("deploy/webhooks.yaml"));
  assert.doesNotMatch(plain.get("main.ts")!, /webhook/i);
});

Deno.test("a cluster-scoped project with a webhook reads its ConfigMap's namespace from the spec", () => {
  const names = projectNames({ ...SCAFFOLD_INPUT, scope: "Cluster" });
  const files = projectFiles(names, SCAFFOLD_KINGLET, { webhook: true });
  assert.match(files.get("src/webhook.ts")!, /spec: \{ namespace \} \} = object;/);
  assert.match(files.get("tests/unit/webhook_test.ts")!, /namespace: "demo" \},\n/);
  assert.match(files.get("main.ts")!, /manager\.addWebhook/);
});

Deno.test("each name the scaffold spells is in it, and none is left in a project of other names", () => {
  const names = substitutions(projectNames(SCAFFOLD_INPUT));
  const all = [...SCAFFOLD.values()].join("\n");
  for (const [from] of names) assert.ok(all.includes(from), from);
  const paragraph = kingletParagraph(SCAFFOLD_KINGLET);
  assert.ok(SCAFFOLD.get("README.md")!.includes(`\n\n${paragraph}\n\n`), paragraph);
  assert.equal(new Set(names.map(([from]) => from)).size, names.length);
  const input = { group: "example.dev", kind: "EdgeSite", plural: "edge-sites", version: "v1" };
  for (const scope of ["Namespaced", "Cluster"]) {
    const names = projectNames({ ...input, scope });
    const files = projectFiles(names, { source: "../kinglet" }, { webhook: true });
    for (const path of SCAFFOLD.keys()) {
      const text = files.get(path) ?? "";
      assert.doesNotMatch(text, /widget|example\.org|v1alpha1/i, `${scope} ${path}`);
    }
    assert.match(files.get("src/kind.ts")!, /^ {2}plural: "edge-sites",$/m);
    assert.match(files.get("src/schema.ts")!, /^export const edgeSites = defineKind\(\{$/m);
    assert.match(files.get("src/controller.ts")!, /name: `\$\{name\}-edgesite`,/);
    assert.match(files.get("src/controller.ts")!, /^export function renderConfigMap\(edgeSite:/m);
    assert.match(files.get("main.ts")!, /reportingController: "example\.dev\/edgesite-operator",/);
    assert.match(files.get("src/operator.ts")!, /envPrefix: "EDGESITE_OPERATOR_",/);
    assert.match(files.get("src/webhook.ts")!, /const name = `\$\{edgeSite\}-edgesite`;/);
  }
});

Deno.test("a substitution writes the longest name at each place, and writes nothing twice", () => {
  const pairs = [["widget", "mirror"], ["widgets", "mirrors"], ["-widget", "-m"]] as const;
  assert.equal(substitute("widgets of a-widget widget", pairs), "mirrors of a-m mirror");
  assert.equal(substitute("Widget", [["Widget", "WidgetWidget"]]), "WidgetWidget");
  assert.equal(substitute("$& $1", [["$&", "$1"]]), "$1 $1");
});

Deno.test("the scaffold's operator is the one init writes the deploy files from", () => {
  assert.deepEqual(deployFiles(operator), projectDeployFiles(projectNames(SCAFFOLD_INPUT)));
});

Deno.test("the scaffold imports only what a project's import map maps", () => {
  const map = importMap(VENDORED);
  const FROM = /(?:^|\n)\s*(?:import|export)\b[^"';]*?from\s*["']([^"'.][^"']*)["']/g;
  for (const [path, text] of SCAFFOLD) {
    if (!path.endsWith(".ts")) continue;
    for (const [, specifier] of text.matchAll(FROM)) {
      assert.ok(specifier!.startsWith("node:") || specifier! in map, `${path}: ${specifier}`);
    }
  }
});

Deno.test("the scaffold's README runs the operator with the permissions of deno task start", () => {
  assert.ok(SCAFFOLD.get("README.md")!.includes(`\`${RUN_PERMISSIONS}\``));
});
