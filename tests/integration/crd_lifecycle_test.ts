/**
 * kinglet's CRDs over their life against the real control plane: the
 * start-up check that says when they are missing or older than the binary,
 * and `kinglet uninstall`, which refuses while custom resources exist.
 * Every test leaves the CRDs installed as `kinglet install` installs them.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/crd_lifecycle_test.ts
 */
import assert from "node:assert/strict";
import { CRD_SCHEMA_HASHES } from "../../crds/schema_hashes.ts";
import { grantsFromEnv } from "../../hack/_permissions.ts";
import { checkCrds } from "../../lib/cli/crd_check.ts";
import { install } from "../../lib/cli/install.ts";
import { ResourcesExistError, uninstall } from "../../lib/cli/uninstall.ts";
import type { KubeClient } from "../../lib/kube/client.ts";
import { CUSTOM_RESOURCE_DEFINITIONS, NAMESPACES, PODS } from "../../lib/kube/resources.ts";
import { SCHEMA_HASH_ANNOTATION } from "../../lib/crd/mod.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { kubectl, testKubeconfig } from "../_support/cluster.ts";
import { operatorKubeconfig } from "../_support/crds.ts";
import { kingletArgs } from "../_support/kinglet_bundle.ts";
import { startOperator } from "../_support/operator.ts";
import { adminClient, createNamespace, deleteNamespace, getOrUndefined } from "../_support/kube.ts";

const NAMES = Object.keys(CRD_SCHEMA_HASHES);
const INSTALL = "kinglet install --kubeconfig /etc/kinglet/kubeconfig";

async function kinglet(args: string[]) {
  const kubeconfig = testKubeconfig();
  const grants = grantsFromEnv({ KINGLET_ALLOW_READ: kubeconfig });
  const out = await new Deno.Command(Deno.execPath(), {
    args: await kingletArgs([...args, "--kubeconfig", kubeconfig], { grants }),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

async function annotate(name: string, value: string | undefined): Promise<void> {
  const assignment = value === undefined
    ? `${SCHEMA_HASH_ANNOTATION}-`
    : `${SCHEMA_HASH_ANNOTATION}=${value}`;
  const { code, stderr } = await kubectl(["annotate", "crd", name, assignment, "--overwrite"]);
  assert.equal(code, 0, stderr);
}

async function withCrds(test: (client: KubeClient) => Promise<void>): Promise<void> {
  const client = await adminClient();
  try {
    await install(client);
    await test(client);
  } finally {
    await install(client);
    client.close();
  }
}

Deno.test("the CRD check is silent when the installed CRDs are this binary's", async () => {
  await withCrds(async (client) => {
    assert.equal(await checkCrds(client, NAMES, INSTALL), undefined);
    for (const name of NAMES) {
      const crd = await client.get(CUSTOM_RESOURCE_DEFINITIONS, name);
      assert.equal(crd.metadata?.annotations?.[SCHEMA_HASH_ANNOTATION], CRD_SCHEMA_HASHES[name]);
    }
  });
});

Deno.test("the CRD check names a CRD of another schema or without a hash, in one line with the command", async () => {
  await withCrds(async (client) => {
    await annotate("webapps.kinglet.dev", "0123456789abcdef");
    await annotate("inferenceservices.kinglet.dev", undefined);
    const problem = await checkCrds(client, NAMES, INSTALL);
    assert.ok(problem);
    assert.doesNotMatch(problem, /\n/);
    assert.match(
      problem,
      new RegExp(
        `^CRDs webapps\\.kinglet\\.dev \\(schema 0123456789abcdef, this kinglet's is ` +
          `${CRD_SCHEMA_HASHES["webapps.kinglet.dev"]}\\), inferenceservices\\.kinglet\\.dev ` +
          `\\(installed without a schema hash, by an older kinglet\\) differ from this kinglet's; ` +
          `run: kinglet install --kubeconfig /etc/kinglet/kubeconfig$`,
      ),
    );
  });
});

Deno.test("kinglet run says at start-up, as its service account, that a CRD is older than the binary", async () => {
  await withCrds(async () => {
    await annotate("databaseclusters.kinglet.dev", "0000000000000000");
    const kubeconfig = await operatorKubeconfig();
    await using operator = await startOperator({
      kubeconfig,
      args: ["--controllers=databasecluster"],
    });
    await operator.ready();
    const lines = (await operator.log()).split("\n").filter((l) => l.includes("schema"));
    assert.equal(lines.length, 1, await operator.log());
    const record = JSON.parse(lines[0]!);
    assert.equal(record.level, "WARN");
    assert.match(record.message, /^CRD databaseclusters\.kinglet\.dev \(schema 0000000000000000/);
    assert.match(record.message, /run: kinglet install --kubeconfig /);
  });
});

Deno.test("uninstall refuses while custom resources exist, then --force removes the CRDs and install's namespace", async () => {
  await withCrds(async (client) => {
    const namespace = await createNamespace(client, "uninstall");
    const leaseNamespace = `kinglet-uninstall-${crypto.randomUUID().slice(0, 6)}`;
    try {
      await install(client, { namespace: leaseNamespace });
      await client.create(WEB_APPS, {
        apiVersion: "kinglet.dev/v1alpha1",
        kind: "WebApp",
        metadata: { name: "keep-me" },
        spec: { image: "nginx:1.27" },
      }, { namespace });

      await assert.rejects(
        uninstall(client, { namespace: leaseNamespace }),
        (error: unknown) => {
          assert.ok(error instanceof ResourcesExistError);
          assert.match(
            error.message,
            /^refusing to uninstall: 1 WebApp still exists, and deleting/,
          );
          assert.match(error.message, /or pass --force$/);
          return true;
        },
      );
      const cli = await kinglet(["uninstall", `--leader-election-namespace=${leaseNamespace}`]);
      assert.equal(cli.code, 1);
      assert.match(cli.stderr, /^kinglet: refusing to uninstall: 1 WebApp still exists/m);
      for (const name of NAMES) {
        assert.ok(await getOrUndefined(client, CUSTOM_RESOURCE_DEFINITIONS, name), `${name} kept`);
      }
      assert.ok(await getOrUndefined(client, NAMESPACES, leaseNamespace));

      const done = await uninstall(client, { namespace: leaseNamespace, force: true });
      assert.deepEqual(done, [
        ...NAMES.map((n) => `deleted CRD ${n}`),
        `deleted namespace ${leaseNamespace}`,
      ]);
      for (const name of NAMES) {
        assert.equal(await getOrUndefined(client, CUSTOM_RESOURCE_DEFINITIONS, name), undefined);
      }
      const problem = await checkCrds(client, NAMES, "kinglet install");
      assert.equal(
        problem,
        `CRDs ${NAMES.join(", ")} are not installed; run: kinglet install`,
      );
    } finally {
      await deleteNamespace(client, namespace);
      await deleteNamespace(client, leaseNamespace);
    }
  });
});

Deno.test("uninstall keeps a namespace that existed before install, and one where pods run", async () => {
  await withCrds(async (client) => {
    const existing = await createNamespace(client, "kinglet-existing");
    const busy = `kinglet-busy-${crypto.randomUUID().slice(0, 6)}`;
    try {
      await install(client, { namespace: existing });
      await install(client, { namespace: busy });
      await client.create(PODS, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "kinglet" },
        spec: { containers: [{ name: "kinglet", image: "kinglet:test" }] },
      }, { namespace: busy });
      assert.deepEqual(
        (await uninstall(client, { namespace: existing })).at(-1),
        `kept namespace ${existing}: it existed before kinglet install`,
      );
      await install(client);
      assert.deepEqual(
        (await uninstall(client, { namespace: busy })).at(-1),
        `kept namespace ${busy}: pods run in it (kinglet, …)`,
      );
      assert.ok(await getOrUndefined(client, NAMESPACES, existing));
      assert.ok(await getOrUndefined(client, NAMESPACES, busy));
    } finally {
      await deleteNamespace(client, existing);
      await deleteNamespace(client, busy);
    }
  });
});
