import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { compareDeploy, kingletFiles, ROOT } from "../../hack/gen_deploy.ts";

Deno.test("kinglet's committed deploy files are what its description generates (run `deno task deploy` if this fails)", async () => {
  assert.deepEqual(await compareDeploy(ROOT), []);
});

Deno.test("every deploy file kinglet commits is generated, and so drift-checked", () => {
  assert.deepEqual([...kingletFiles().keys()].sort(), [
    "Dockerfile.scratch",
    "Dockerfile.scratch.dockerignore",
    "crds/kustomization.yaml",
    "deploy/clusterrole.yaml",
    "deploy/clusterrolebinding.yaml",
    "deploy/deployment.yaml",
    "deploy/kustomization.yaml",
    "deploy/namespace.yaml",
    "deploy/role.yaml",
    "deploy/rolebinding.yaml",
    "deploy/serviceaccount.yaml",
    "deploy/systemd/kinglet-credentials.service",
    "deploy/systemd/kinglet-credentials.timer",
    "deploy/systemd/kinglet.env",
    "deploy/systemd/kinglet.service",
    "deploy/systemd/webhooks.yaml",
    "deploy/validatingadmissionpolicy.yaml",
    "deploy/validatingadmissionpolicybinding.yaml",
    "deploy/webhook-role.yaml",
    "deploy/webhook-rolebinding.yaml",
    "deploy/webhooks.yaml",
    "hack/scratch_files.txt",
  ]);
});

Deno.test("every rule of the generated ClusterRole and Role has a comment that says why", () => {
  for (const file of ["deploy/clusterrole.yaml", "deploy/role.yaml", "deploy/webhook-role.yaml"]) {
    const lines = kingletFiles().get(file)!.split("\n");
    const rules = lines.flatMap((line, i) => line.startsWith("  - apiGroups:") ? [i] : []);
    assert.ok(rules.length > 0, `no rule in ${file}`);
    for (const i of rules) assert.match(lines[i - 1]!, /^ {2}# /, `${file} line ${i + 1}`);
  }
});

Deno.test("drift detection reports an edited and a missing file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-deploy-" });
  try {
    const files = [...kingletFiles()];
    const [edited, missing, ...kept] = files;
    const write = async (name: string, content: string) => {
      await Deno.mkdir(dirname(join(dir, name)), { recursive: true });
      await Deno.writeTextFile(join(dir, name), content);
    };
    await write(edited![0], edited![1].replace("kinglet-system", "edge"));
    for (const [name, content] of kept) await write(name, content);
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

const GEN_DEPLOY = new URL("../../hack/gen_deploy.ts", import.meta.url).pathname;

Deno.test("gen_deploy --check exits 0 on the committed manifests and 1 with a hint on stale ones", async () => {
  const run = async (dir: string) => {
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", GEN_DEPLOY, "--check", `--dir=${dir}`],
    }).output();
    return { code, stderr: new TextDecoder().decode(stderr) };
  };
  const current = await run(ROOT);
  assert.equal(current.code, 0, current.stderr);
  const dir = await Deno.makeTempDir({ prefix: "kinglet-deploy-" });
  try {
    const stale = await run(dir);
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /deploy\/clusterrole\.yaml: missing/);
    assert.match(stale.stderr, /deploy\/systemd\/kinglet\.service: missing/);
    assert.match(stale.stderr, /Dockerfile\.scratch: missing/);
    assert.match(stale.stderr, /run `deno task deploy` and commit deploy\//);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
