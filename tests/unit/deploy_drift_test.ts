import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { commentedYaml } from "../../hack/_commented_yaml.ts";
import { compareDeploy, DEPLOY_DIR, deployFiles } from "../../hack/gen_deploy.ts";

Deno.test("the committed RBAC in deploy/ is what the controller specs generate (run `deno task deploy` if this fails)", async () => {
  assert.deepEqual(await compareDeploy(DEPLOY_DIR), []);
});

Deno.test("every rule of the generated ClusterRole and Role has a comment that says why", () => {
  for (const file of ["clusterrole.yaml", "role.yaml"]) {
    const lines = deployFiles().get(file)!.split("\n");
    const rules = lines.flatMap((line, i) => line.startsWith("  - apiGroups:") ? [i] : []);
    assert.ok(rules.length > 0, `no rule in ${file}`);
    for (const i of rules) assert.match(lines[i - 1]!, /^ {2}# /, `${file} line ${i + 1}`);
  }
});

Deno.test("drift detection reports an edited and a missing manifest", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-deploy-" });
  try {
    const files = [...deployFiles()];
    const [edited, missing, ...kept] = files;
    await Deno.writeTextFile(join(dir, edited![0]), edited![1].replace("kinglet-system", "edge"));
    for (const [name, content] of kept) await Deno.writeTextFile(join(dir, name), content);
    const problems = await compareDeploy(dir);
    assert.equal(problems.length, 2);
    assert.match(
      problems[0]!,
      /serviceaccount\.yaml: differs from line \d+: expected ".*kinglet-system"/,
    );
    assert.equal(problems[1], `${join(dir, missing![0])}: missing`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("commented YAML parses back to the object it was written from", () => {
  const object = {
    apiVersion: "v1",
    kind: "Thing",
    metadata: { name: "a", labels: { "app.kubernetes.io/name": "x", on: "yes" } },
    flags: [true, 1, "null"],
    items: [{ name: "first", values: ["1", "two words"] }, { nested: { deep: "#not a comment" } }],
    off: false,
  };
  const text = commentedYaml(object, {
    header: [
      "A header long enough to be wrapped at the line width of one hundred characters, or so.",
    ],
    comments: (path) => /^items\[\d\]$|^off$/.test(path) ? [`about ${path}`] : undefined,
  });
  assert.deepEqual(parse(text), object);
  assert.match(text, /^ {2}# about items\[1\]\n {2}- nested:$/m);
  assert.match(text, /^# about off\n"off": false$/m);
});

const GEN_DEPLOY = new URL("../../hack/gen_deploy.ts", import.meta.url).pathname;

Deno.test("gen_deploy --check exits 0 on the committed manifests and 1 with a hint on stale ones", async () => {
  const run = async (dir: string) => {
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", GEN_DEPLOY, "--check", `--dir=${dir}`],
    }).output();
    return { code, stderr: new TextDecoder().decode(stderr) };
  };
  const current = await run(DEPLOY_DIR);
  assert.equal(current.code, 0, current.stderr);
  const dir = await Deno.makeTempDir({ prefix: "kinglet-deploy-" });
  try {
    const stale = await run(dir);
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /clusterrole\.yaml: missing/);
    assert.match(stale.stderr, /run `deno task deploy` and commit deploy\//);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
