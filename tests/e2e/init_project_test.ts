/**
 * A project from `kinglet init` passes its own e2e test (`deno task e2e`:
 * its `main.ts` as a process against a real API server) on the local
 * control plane, as generated. The project finds the cluster as its README
 * says, through `KINGLET_TEST_KUBECONFIG`, which `hack/with_cluster.ts` sets.
 * Then its node-mode credentials step (`main.ts install`, what the generated
 * credentials unit runs) writes a kubeconfig of the operator's own
 * ServiceAccount, which may list what the operator caches and nothing else.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CONFIG_MAPS,
  CUSTOM_RESOURCE_DEFINITIONS,
  isForbidden,
  KubeClient,
  loadConfig,
  SECRETS,
} from "../../lib/kube/mod.ts";
import { testKubeconfig } from "../_support/cluster.ts";
import { adminClient } from "../_support/kube.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** A group of its own, so that its CRD meets no other test's. */
const GROUP = "init.e2e.kinglet.dev";

async function deno(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdin: "null",
    env: { NO_COLOR: "1", KINGLET_TEST_KUBECONFIG: testKubeconfig() },
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, output: decode(out.stdout) + decode(out.stderr) };
}

Deno.test("a project from kinglet init passes its e2e test against the control plane", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-init-e2e-" });
  const project = join(dir, "mirror-operator");
  const client = await adminClient();
  try {
    const init = await deno([
      "run",
      "--allow-all",
      join(ROOT, "main.ts"),
      "init",
      project,
      `--group=${GROUP}`,
      "--kind=Mirror",
      `--kinglet=${ROOT}`,
    ], dir);
    assert.equal(init.code, 0, init.output);
    const e2e = await deno(["task", "e2e"], project);
    assert.equal(e2e.code, 0, e2e.output);
    assert.match(e2e.output, /ok \| 1 passed \| 0 failed/);

    const nodeKubeconfig = join(dir, "node", "kubeconfig");
    await Deno.mkdir(join(dir, "node"));
    const install = await deno([
      "run",
      "--allow-all",
      "main.ts",
      "install",
      "--kubeconfig",
      testKubeconfig(),
      "--node-kubeconfig",
      nodeKubeconfig,
    ], project);
    assert.equal(install.code, 0, install.output);
    const node = new KubeClient(await loadConfig({ kubeconfig: nodeKubeconfig }));
    try {
      // The controller owns ConfigMaps: its account lists them everywhere, and no Secret.
      assert.ok(Array.isArray((await node.list(CONFIG_MAPS)).items));
      await assert.rejects(() => node.list(SECRETS), (error) => isForbidden(error));
    } finally {
      node.close();
    }
  } finally {
    await client.delete(CUSTOM_RESOURCE_DEFINITIONS, `mirrors.${GROUP}`, { ignoreNotFound: true });
    client.close();
    await Deno.remove(dir, { recursive: true });
  }
});
