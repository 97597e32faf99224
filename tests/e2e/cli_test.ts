/**
 * The CLI as users run it (`deno task start`'s permissions): version, crds,
 * install against the real API server, help, and exit code 2 for bad flags.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { grantsFromEnv } from "../../hack/_permissions.ts";
import { CUSTOM_RESOURCE_DEFINITIONS } from "../../lib/kube/resources.ts";
import { testKubeconfig } from "../_support/cluster.ts";
import { kingletArgs } from "../_support/kinglet_bundle.ts";
import { adminClient, condition } from "../_support/kube.ts";

async function kinglet(args: string[], read: string[] = []) {
  const grants = grantsFromEnv({ KINGLET_ALLOW_READ: read.join(",") || undefined });
  const out = await new Deno.Command(Deno.execPath(), {
    args: await kingletArgs(args, { grants }),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

Deno.test("kinglet version and --version print the version from deno.json", async () => {
  const { version } = JSON.parse(
    await Deno.readTextFile(new URL("../../deno.json", import.meta.url)),
  );
  for (const args of [["version"], ["--version"]]) {
    const { code, stdout } = await kinglet(args);
    assert.equal(code, 0);
    assert.equal(stdout.trim(), version);
  }
});

Deno.test("kinglet crds prints the three CRDs as YAML documents", async () => {
  const { code, stdout } = await kinglet(["crds"]);
  assert.equal(code, 0);
  const names = parseAllDocuments(stdout).map((d) => d.toJSON()?.metadata?.name);
  assert.deepEqual(names, [
    "webapps.kinglet.dev",
    "databaseclusters.kinglet.dev",
    "inferenceservices.kinglet.dev",
  ]);
});

Deno.test("help exits 0 and bad flags exit 2 with a pointer to --help", async () => {
  for (const args of [["--help"], ["run", "--help"], ["install", "--help"], ["crds", "--help"]]) {
    const { code, stdout } = await kinglet(args);
    assert.equal(code, 0, args.join(" "));
    assert.match(stdout, /kinglet/);
  }
  for (const args of [["run", "--bogus"], ["install", "--log-level=loud"], ["frobnicate"]]) {
    const { code, stderr } = await kinglet(args);
    assert.equal(code, 2, args.join(" "));
    assert.match(stderr, /Run 'kinglet --help' for usage\./);
    assert.doesNotMatch(stderr, /^\s+at /m, "no stack trace");
  }
});

Deno.test("kinglet install applies the CRDs and returns once they are Established", async () => {
  const kubeconfig = testKubeconfig();
  const { code, stdout, stderr } = await kinglet(["install", "--kubeconfig", kubeconfig], [
    kubeconfig,
  ]);
  assert.equal(code, 0, stderr);
  assert.match(stdout, /installed and Established: webapps\.kinglet\.dev/);
  const client = await adminClient();
  try {
    for (const name of ["webapps", "databaseclusters", "inferenceservices"]) {
      const crd = await client.get(CUSTOM_RESOURCE_DEFINITIONS, `${name}.kinglet.dev`);
      assert.equal(condition(crd, "Established")?.status, "True");
    }
  } finally {
    client.close();
  }
});

Deno.test("a kubeconfig kinglet may not read gets a message naming what to grant", async () => {
  const { code, stderr } = await kinglet(["install", "--kubeconfig", testKubeconfig()]);
  assert.equal(code, 1);
  assert.match(stderr, /KINGLET_ALLOW_READ=/);
  assert.doesNotMatch(stderr, /^\s+at /m, "no stack trace");
});
