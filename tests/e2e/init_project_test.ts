/**
 * Projects from `kinglet init` pass their own check, unit tests and e2e test
 * (`deno task e2e`: their `main.ts` as a process against a real API server)
 * on the local control plane, as generated, for a short name and a long one:
 * `mirror-operator` (namespaced, kinglet found in this checkout; its check
 * and unit tests run in tests/unit/cli_init_project_test.ts, on the same
 * project) and `edgesite-operator` (cluster-scoped, kinglet vendored as by
 * default, with the admission webhook of `--webhook`, which its e2e test has
 * the API server call on loopback: a default applied, a denial returned). The two run side by side on one cluster. A project finds the cluster as its
 * README says, through `KINGLET_TEST_KUBECONFIG`, which `hack/with_cluster.ts`
 * sets; their e2e tests start `main.ts --kubeconfig <its ServiceAccount's>`.
 * Then the short one's node-mode credentials step (`main.ts install`, what
 * the generated credentials unit runs) writes a kubeconfig of the operator's
 * own ServiceAccount, which may list what the operator caches and nothing
 * else, and says to run the operator with it through `--kubeconfig`.
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

/** A project to generate: its folder, what init is told, and the CRD it installs. */
interface Project {
  dir: string;
  args: string[];
  crd: string;
  /**
   * Whether its check and unit tests run here too; the short one's run in
   * tests/unit/cli_init_project_test.ts, generated the same way.
   */
  checked: boolean;
}

/** The projects, each in a group of its own, so that its CRD meets no other test's. */
const PROJECTS: readonly Project[] = [
  {
    dir: "mirror-operator",
    args: ["--group=init.e2e.kinglet.dev", "--kind=Mirror", `--kinglet=${ROOT}`],
    crd: "mirrors.init.e2e.kinglet.dev",
    checked: false,
  },
  {
    dir: "edgesite-operator",
    args: [
      "--group=edge.sites.init.e2e.kinglet.dev",
      "--kind=EdgeSite",
      "--scope=Cluster",
      "--webhook",
    ],
    crd: "edgesites.edge.sites.init.e2e.kinglet.dev",
    checked: true,
  },
];

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

/** Runs `deno <args>` in `cwd`, failing with its output and `what` unless it exits 0. */
async function passes(what: string, args: string[], cwd: string): Promise<string> {
  const { code, output } = await deno(args, cwd);
  assert.equal(code, 0, `${what}: deno ${args.join(" ")} exited ${code}:\n${output}`);
  return output;
}

/** Generates `project` into `parent`, then runs its check and unit tests if asked, and its e2e test. */
async function generateAndTest(parent: string, project: Project): Promise<string> {
  const dir = join(parent, project.dir);
  await passes(project.dir, [
    "run",
    "--allow-all",
    join(ROOT, "main.ts"),
    "init",
    dir,
    ...project.args,
  ], parent);
  if (project.checked) {
    await passes(project.dir, ["task", "check"], dir);
    assert.match(await passes(project.dir, ["task", "test"], dir), /ok \| \d+ passed \| 0 failed/);
  }
  const e2e = await passes(project.dir, ["task", "e2e"], dir);
  assert.match(e2e, /ok \| 1 passed \| 0 failed/);
  return dir;
}

Deno.test("projects from kinglet init, short and long named, pass their check, unit and e2e tests", async () => {
  const parent = await Deno.makeTempDir({ prefix: "kinglet-init-e2e-" });
  const client = await adminClient();
  try {
    const [mirror] = await Promise.all(PROJECTS.map((project) => generateAndTest(parent, project)));

    const nodeKubeconfig = join(parent, "node", "kubeconfig");
    await Deno.mkdir(join(parent, "node"));
    const install = await passes("install", [
      "run",
      "--allow-all",
      "main.ts",
      "install",
      "--kubeconfig",
      testKubeconfig(),
      "--node-kubeconfig",
      nodeKubeconfig,
    ], mirror!);
    assert.match(install, new RegExp(`run mirror-operator with --kubeconfig ${nodeKubeconfig}`));
    const node = new KubeClient(await loadConfig({ kubeconfig: nodeKubeconfig }));
    try {
      // The controller owns ConfigMaps: its account lists them everywhere, and no Secret.
      assert.ok(Array.isArray((await node.list(CONFIG_MAPS)).items));
      await assert.rejects(() => node.list(SECRETS), (error) => isForbidden(error));
    } finally {
      node.close();
    }
  } finally {
    for (const { crd } of PROJECTS) {
      await client.delete(CUSTOM_RESOURCE_DEFINITIONS, crd, { ignoreNotFound: true });
    }
    client.close();
    await Deno.remove(parent, { recursive: true });
  }
});
