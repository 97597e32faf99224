/**
 * The Backup example run as its readers run it (`deno run
 * examples/backup/main.ts` with the permissions docs/writing-operators.md gives), against
 * the real control plane: plan, Ready, observedGeneration, the Lease, and
 * the Event and garbage collection on delete. Its CRD is applied from
 * `examples/backup/crds/` first, as a user applies it, and it runs as a
 * ServiceAccount bound to exactly the RBAC derived from its controller spec
 * and its leader election: a request it is denied fails the test, naming the
 * verb and the resource.
 *
 * Its admission webhook is called by the API server on loopback, as in node
 * mode: `examples/backup/webhooks.yaml` is applied (its port moved to one of
 * the test's own), the example makes its CA and certificate in the Secret
 * `default/backup-operator-webhook-tls`, injects the CA with no more RBAC
 * than `deploy` derives for its webhook, and a second Backup of a claim is
 * denied with the example's message.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import {
  ApiError,
  CONFIG_MAPS,
  type KubeObject,
  LEASES,
  PERSISTENT_VOLUME_CLAIMS,
  SECRETS,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
} from "../../lib/kube/mod.ts";
import { describeOperator } from "../../lib/deploy/mod.ts";
import { webhookClusterRules, webhookSecretRules } from "../../lib/deploy/webhook_files.ts";
import type { PolicyRule, RbacRule } from "../../lib/runtime/rbac/mod.ts";
import { webhookObjectNames } from "../../lib/runtime/webhook/mod.ts";
import { findCondition } from "../../lib/runtime/mod.ts";
import { controllerRules, leaderElectionRules } from "../../lib/runtime/rbac/mod.ts";
import { testCluster } from "../../lib/testing/mod.ts";
import { backupController } from "../../examples/backup/backup.ts";
import { type Backup, BACKUPS } from "../../examples/backup/kind.ts";
import { backupWebhook } from "../../examples/backup/webhook.ts";
import { applyExampleCrds, dropFinalizers, freePort, startExample } from "./_example.ts";
import { eventsFor, getOrUndefined } from "../_support/kube.ts";

type ConfigMap = KubeObject & { data?: Record<string, string> };
type Configuration = KubeObject & {
  webhooks: { clientConfig: { url?: string; caBundle?: string } }[];
};

const NAMES = webhookObjectNames("backup-operator");
/** The example as `deploy` describes it, for the RBAC of its webhook alone. */
const OPERATOR = describeOperator({
  name: "backup-operator",
  namespace: "default",
  envPrefix: "BACKUP_",
  image: "example.kinglet.dev/backup-operator:0.0.0",
  controllers: [backupController],
  webhooks: { admission: [backupWebhook] },
});
const policy = (rules: RbacRule[]): PolicyRule[] =>
  rules.map(({ apiGroups, resources, resourceNames, verbs }) => ({
    apiGroups,
    resources,
    verbs,
    ...(resourceNames && { resourceNames }),
  }));

/** `examples/backup/webhooks.yaml` as a reader applies it, its URL moved to `port`. */
async function webhookConfiguration(port: number): Promise<Configuration> {
  const yaml = await Deno.readTextFile(
    new URL("../../examples/backup/webhooks.yaml", import.meta.url),
  );
  return parse(yaml.replace("https://127.0.0.1:9443/", `https://127.0.0.1:${port}/`));
}

Deno.test("the Backup example plans, reports Ready, follows its spec and says it stopped", async (t) => {
  await using cluster = await testCluster({ namespacePrefix: "e2e-backup" });
  await applyExampleCrds(cluster.client, "backup");
  const webhookPort = freePort();
  await cluster.client.apply(
    VALIDATING_WEBHOOK_CONFIGURATIONS,
    await webhookConfiguration(webhookPort),
    {
      fieldManager: "kubectl",
      force: true,
    },
  );
  await using account = await cluster.serviceAccount({
    name: "backup-operator",
    rules: [...controllerRules([backupController]), ...policy(webhookClusterRules(OPERATOR))],
    // Its writes confined to what it owns, as the ownership policy deploy generates does.
    policy: [backupController],
    // main.ts campaigns for the Lease default/backup-operator and keeps its certificates there.
    namespaced: {
      default: [...leaderElectionRules("backup-operator"), ...policy(webhookSecretRules(OPERATOR))],
    },
  });
  const { client, namespace } = cluster;
  const example = startExample("backup", account.kubeconfig, {
    WEBHOOK_ADDRESS: `127.0.0.1:${webhookPort}`,
  });
  const { waitFor } = example; // fails at once when the example is denied a request
  try {
    await example.ready();
    const plan = (key: string, expected: string) =>
      waitFor(`the plan's ${key} to be ${expected}`, async () => {
        const cm = await getOrUndefined<ConfigMap>(
          client,
          CONFIG_MAPS,
          "nightly-backup-plan",
          namespace,
        );
        return cm?.data?.[key] === expected && cm;
      });
    const current = () => client.get<Backup>(BACKUPS, "nightly", { namespace });

    await t.step("a Backup of an existing claim gets its plan, Ready and a finalizer", async () => {
      await client.create(PERSISTENT_VOLUME_CLAIMS, {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: "data", namespace },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
      });
      await client.create(BACKUPS, {
        apiVersion: "example.kinglet.dev/v1",
        kind: "Backup",
        metadata: { name: "nightly", namespace },
        spec: { source: "data", schedule: "0 3 * * *", destination: "s3://backups" },
      });
      const cm = await plan("destination", `s3://backups/${namespace}/nightly`);
      assert.equal(cm.data?.keep, "7", "the CRD's default reaches the plan");
      const backup = await waitFor("Ready", async () => {
        const b = await current();
        return findCondition(b.status?.conditions, "Ready")?.status === "True" && b;
      });
      assert.equal(backup.status?.observedGeneration, backup.metadata.generation);
      assert.equal(backup.status?.plan, "nightly-backup-plan");
      assert.deepEqual(backup.metadata.finalizers, ["example.kinglet.dev/backup"]);
      assert.equal(cm.metadata?.ownerReferences?.[0]?.uid, backup.metadata.uid);
      const lease = await client.get<KubeObject & { spec?: { holderIdentity?: string } }>(
        LEASES,
        "backup-operator",
        { namespace: "default" },
      );
      assert.ok(lease.spec?.holderIdentity, "the example holds its Lease");
    });

    await t.step("a second Backup of the claim is denied by the example's webhook", async () => {
      const configuration = await client.get<Configuration>(
        VALIDATING_WEBHOOK_CONFIGURATIONS,
        NAMES.validating,
      );
      assert.ok(configuration.webhooks[0]?.clientConfig.caBundle, "the example injected its CA");
      const secret = await client.get(SECRETS, NAMES.secret, { namespace: "default" });
      assert.equal(secret.metadata?.labels?.["app.kubernetes.io/managed-by"], "backup-operator");
      const duplicate = client.create(BACKUPS, {
        apiVersion: "example.kinglet.dev/v1",
        kind: "Backup",
        metadata: { name: "hourly", namespace },
        spec: { source: "data", schedule: "@hourly", destination: "s3://backups" },
      });
      await assert.rejects(duplicate, (e: unknown) => {
        assert.ok(e instanceof ApiError, String(e));
        assert.match(
          e.message,
          /admission webhook "vbackups\.example\.kinglet\.dev" denied the request: spec\.source: claim data is already copied by Backup nightly/,
        );
        return true;
      });
    });

    await t.step("a changed schedule reaches the plan and observedGeneration", async () => {
      await client.patch(BACKUPS, "nightly", { spec: { schedule: "@hourly" } }, {
        type: "merge",
        namespace,
      });
      await plan("schedule", "@hourly");
      await waitFor("observedGeneration to follow", async () => {
        const b = await current();
        return b.metadata.generation === 2 && b.status?.observedGeneration === 2;
      });
    });

    await t.step("a deleted Backup records that it stopped, then goes with its plan", async () => {
      await client.delete(BACKUPS, "nightly", { namespace });
      await waitFor(
        "the Backup to be gone",
        async () =>
          (await getOrUndefined(client, BACKUPS, "nightly", namespace)) ===
            undefined,
      );
      const stopped = await waitFor(
        "a Stopped Event",
        async () => (await eventsFor(client, namespace, "nightly", "Stopped"))[0],
      );
      assert.equal(stopped.note, "Stopped copying data; the copies in s3://backups are kept");
      await waitFor(
        "the plan to be collected",
        async () =>
          (await getOrUndefined(client, CONFIG_MAPS, "nightly-backup-plan", namespace)) ===
            undefined,
      );
    });

    const code = await example.stop();
    example.assertNoDenials();
    assert.equal(code, 0, example.output());
  } finally {
    await example.stop();
    // Cluster-wide and failing closed: with the example stopped, it would refuse the updates
    // that drop the finalizers.
    await client.delete(VALIDATING_WEBHOOK_CONFIGURATIONS, NAMES.validating).catch(() => {});
    await client.delete(SECRETS, NAMES.secret, { namespace: "default" }).catch(() => {});
    await dropFinalizers(client, BACKUPS, namespace);
  }
});
