/**
 * Node mode with kinglet's own rights: `kinglet install --node-kubeconfig`
 * (the command line users run, under its permissions) applies kinglet's
 * ServiceAccount and RBAC and writes a kubeconfig and token; kinglet run from
 * that kubeconfig converges, cannot do what the admin could, and picks up a
 * renewed token without a restart.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/node_credentials_test.ts
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { ApiError } from "../../lib/kube/errors.ts";
import { NAMESPACES, SECRETS } from "../../lib/kube/resources.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { testKubeconfig } from "../_support/cluster.ts";
import { installCrdsOnce } from "../_support/crds.ts";
import {
  adminClient,
  condition,
  createNamespace,
  deleteNamespace,
  waitFor,
} from "../_support/kube.ts";
import { startOperator } from "../_support/operator.ts";
import { runToExit } from "../reliability/_kinglet_cli.ts";

async function install(dir: string, lifetime = "1h") {
  const kubeconfig = join(dir, "kubeconfig");
  const result = await runToExit(
    [
      "install",
      "--kubeconfig",
      testKubeconfig(),
      "--node-kubeconfig",
      kubeconfig,
      "--token-lifetime",
      lifetime,
    ],
    { env: { KINGLET_ALLOW_READ: `${testKubeconfig()},${dir}`, KINGLET_ALLOW_WRITE: dir } },
    60_000,
  );
  assert.equal(result.code, 0, result.stderr);
  return { kubeconfig, token: `${kubeconfig}.token`, result };
}

async function refusal(write: Promise<unknown>): Promise<number> {
  const error = await write.then(() => undefined, (e) => e);
  assert.ok(error instanceof ApiError, `expected the API server to refuse, got ${error}`);
  return error.status;
}

Deno.test("kinglet run from the kubeconfig install writes converges a WebApp with no 403, and the admin's rights are gone", async () => {
  const admin = await adminClient();
  await installCrdsOnce(admin);
  const dir = await Deno.makeTempDir({ prefix: "kinglet_node_" });
  const namespace = await createNamespace(admin, "node-creds");
  try {
    const { kubeconfig, token, result } = await install(dir);
    assert.match(result.stdout, /applied the ServiceAccount kinglet-system\/kinglet and its RBAC/);
    assert.match(result.stdout, /valid until \d{4}-\d\d-\d\dT/);
    for (const file of [kubeconfig, token]) {
      assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600, `${file} is not 0600`);
    }
    assert.doesNotMatch(await Deno.readTextFile(kubeconfig), /token: |client-key/);

    // The directory as the unit's /var/lib/kinglet: kinglet reads the kubeconfig and the token beside it.
    await using operator = await startOperator({
      kubeconfig,
      args: [`--namespace=${namespace}`],
      env: { KINGLET_ALLOW_READ: dir },
    });
    await operator.ready();
    await admin.create(WEB_APPS, {
      apiVersion: "kinglet.dev/v1alpha1",
      kind: "WebApp",
      metadata: { name: "shop", namespace },
      spec: { image: "nginx:1.27", replicas: 1 },
    });
    await waitFor("the WebApp Ready", async () => {
      const app = await admin.get(WEB_APPS, "shop", { namespace });
      return condition(app, "Ready")?.status === "True" && app;
    }, 60_000);
    assert.doesNotMatch(await operator.log(), /\b403\b|forbidden/i);

    const kinglet = new KubeClient(await loadConfig({ kubeconfig }));
    try {
      await admin.create(SECRETS, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "not-kinglets", namespace },
        stringData: { password: "hunter2" },
      });
      assert.equal(await refusal(kinglet.get(SECRETS, "not-kinglets", { namespace })), 403);
      assert.equal(await refusal(kinglet.delete(NAMESPACES, namespace)), 403);
      assert.equal(await refusal(kinglet.list(NAMESPACES)), 403);
    } finally {
      kinglet.close();
    }
  } finally {
    await deleteNamespace(admin, namespace);
    admin.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a token renewed by running install again is picked up by a running client, without a restart", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet_node_" });
  try {
    const { kubeconfig, token } = await install(dir);
    // A node whose token expired (the timer was stopped, say): the API server refuses it.
    await Deno.writeTextFile(token, "expired-token");
    const client = new KubeClient(await loadConfig({ kubeconfig }));
    try {
      await client.list(WEB_APPS, { namespace: "kinglet-system" }).then(
        () => assert.fail("a token the API server does not know was accepted"),
        (error) => assert.ok(error instanceof ApiError && error.status === 401, String(error)),
      );
      await install(dir);
      const list = await client.list(WEB_APPS, { namespace: "kinglet-system" });
      assert.ok(Array.isArray(list.items), "the renewed token was not used");
    } finally {
      client.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
