/**
 * DatabaseCluster's webhooks end to end, as a node runs them: kinglet as a
 * separate process under the deploy/ RBAC serves them on 127.0.0.1:9443,
 * deploy/systemd/webhooks.yaml (what `kinglet install --node-kubeconfig`
 * applies) sends admissions there, and kinglet puts its CA into that
 * configuration and the CRD's conversion. The real API server then refuses
 * a missing StorageClass through kubectl and converts v1alpha1 both ways.
 *
 * The operator watches another namespace, so it reconciles none of these
 * clusters: no volume of the shared pool is taken, and deletion needs no
 * finalizer. The webhooks do not depend on what it watches.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  CUSTOM_RESOURCE_DEFINITIONS,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
} from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { DATABASE_CLUSTERS } from "../../lib/operators/database/kind.ts";
import { kubectl } from "../_support/cluster.ts";
import { adminClient, createNamespace, deleteNamespace, waitFor } from "../_support/kube.ts";
import { startOperator } from "../_support/operator.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";

const NODE_WEBHOOKS = fileURLToPath(
  new URL("../../deploy/systemd/webhooks.yaml", import.meta.url),
);

/** A DatabaseCluster manifest in `version`, its class under the field that version names. */
function manifest(version: "v1alpha1" | "v1alpha2", ns: string, name: string, cls: string) {
  const field = version === "v1alpha1" ? "storageClassName" : "className";
  return JSON.stringify({
    apiVersion: `kinglet.dev/${version}`,
    kind: "DatabaseCluster",
    metadata: { name, namespace: ns },
    spec: { engine: "postgres", version: "17", storage: { size: "1Gi", [field]: cls } },
  });
}

type Configuration = KubeObject & { webhooks: { clientConfig: { caBundle?: string } }[] };
type Crd = KubeObject & {
  spec: { conversion?: { webhook?: { clientConfig?: { caBundle?: string } } } };
};

Deno.test("kinglet's webhooks: kubectl is refused a missing StorageClass with the classes there are; v1alpha1 reads as v1alpha2 and back", async () => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const applied = await kubectl(["apply", "--server-side", "-f", NODE_WEBHOOKS]);
  assert.equal(applied.code, 0, applied.stderr);
  const ns = await createNamespace(client, "e2e-dbc-webhooks");
  const watched = await createNamespace(client, "e2e-dbc-elsewhere");
  await using operator = await startOperator({
    kubeconfig: await operatorKubeconfig(),
    args: ["--webhook-bind-address=127.0.0.1:9443", `--namespace=${watched}`],
  });
  try {
    await operator.ready();
    await waitFor("kinglet's CA in the configuration and the CRD", async () => {
      const configuration = await client.get<Configuration>(
        VALIDATING_WEBHOOK_CONFIGURATIONS,
        "kinglet-validating",
      );
      const crd = await client.get<Crd>(
        CUSTOM_RESOURCE_DEFINITIONS,
        "databaseclusters.kinglet.dev",
      );
      return Boolean(configuration.webhooks[0]?.clientConfig.caBundle) &&
        Boolean(crd.spec.conversion?.webhook?.clientConfig?.caBundle);
    });

    for (const version of ["v1alpha2", "v1alpha1"] as const) {
      const refused = await kubectl(["apply", "-f", "-"], {
        stdin: manifest(version, ns, `missing-${version}`, "fast-ssd"),
      });
      assert.notEqual(refused.code, 0, `${version}: ${refused.stdout}`);
      assert.match(
        refused.stderr,
        /admission webhook "vdatabaseclusters\.kinglet\.dev" denied the request: spec\.storage\.className: StorageClass "fast-ssd" does not exist; name one of [^;]*\bstandard \(default\)[^;]*, or leave spec\.storage\.className unset for the cluster's default class/,
        version,
      );
    }

    const written = await kubectl(["apply", "-f", "-"], {
      stdin: manifest("v1alpha1", ns, "orders", "standard"),
    });
    assert.equal(written.code, 0, written.stderr);
    const stored = await client.get(DATABASE_CLUSTERS, "orders", { namespace: ns });
    assert.equal(stored.apiVersion, "kinglet.dev/v1alpha2");
    assert.deepEqual((stored.spec as { storage: unknown }).storage, {
      size: "1Gi",
      className: "standard",
    });
    const old = await kubectl([
      "get",
      "databaseclusters.v1alpha1.kinglet.dev",
      "orders",
      "-n",
      ns,
      "-o",
      "json",
    ]);
    assert.equal(old.code, 0, old.stderr);
    const back = JSON.parse(old.stdout) as KubeObject;
    assert.equal(back.apiVersion, "kinglet.dev/v1alpha1");
    assert.deepEqual((back.spec as { storage: unknown }).storage, {
      size: "1Gi",
      storageClassName: "standard",
    });
    assert.equal(back.metadata?.uid, stored.metadata?.uid);

    // An update through v1alpha1 keeps the class, and the StorageClass check lets it pass.
    const labelled = await kubectl([
      "label",
      "databaseclusters.v1alpha1.kinglet.dev",
      "orders",
      "-n",
      ns,
      "tier=gold",
    ]);
    assert.equal(labelled.code, 0, labelled.stderr);
    const updated = await client.get(DATABASE_CLUSTERS, "orders", { namespace: ns });
    assert.equal(updated.metadata?.labels?.tier, "gold");
    assert.deepEqual((updated.spec as { storage: unknown }).storage, {
      size: "1Gi",
      className: "standard",
    });
    assert.ok(
      await operator.metric("controller_runtime_webhook_requests_total") >= 4,
      "kinglet counted the admissions and conversions it answered",
    );
  } finally {
    await deleteNamespace(client, ns);
    await deleteNamespace(client, watched);
    await kubectl(["delete", "--ignore-not-found", "-f", NODE_WEBHOOKS]);
  }
});
