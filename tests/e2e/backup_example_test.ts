/**
 * The Backup example run as its readers run it (`deno run
 * examples/backup/main.ts` with the permissions docs/writing-operators.md gives), against
 * the real control plane: plan, Ready, observedGeneration, the Lease, and
 * the Event and garbage collection on delete. Its CRD is applied from
 * `examples/backup/crds/` first, as a user applies it, and it runs as a
 * ServiceAccount bound to exactly the RBAC derived from its controller spec
 * and its leader election: a request it is denied fails the test, naming the
 * verb and the resource.
 */
import assert from "node:assert/strict";
import {
  CONFIG_MAPS,
  type KubeObject,
  LEASES,
  PERSISTENT_VOLUME_CLAIMS,
} from "../../lib/kube/mod.ts";
import { findCondition } from "../../lib/runtime/mod.ts";
import { controllerRules, leaderElectionRules } from "../../lib/runtime/rbac/mod.ts";
import { testCluster } from "../../lib/testing/mod.ts";
import { backupController } from "../../examples/backup/backup.ts";
import { type Backup, BACKUPS } from "../../examples/backup/kind.ts";
import { applyExampleCrds, dropFinalizers, startExample } from "./_example.ts";
import { eventsFor, getOrUndefined } from "../_support/kube.ts";

type ConfigMap = KubeObject & { data?: Record<string, string> };

Deno.test("the Backup example plans, reports Ready, follows its spec and says it stopped", async (t) => {
  await using cluster = await testCluster({ namespacePrefix: "e2e-backup" });
  await applyExampleCrds(cluster.client, "backup");
  await using account = await cluster.serviceAccount({
    name: "backup-operator",
    rules: controllerRules([backupController]),
    // Its writes confined to what it owns, as the ownership policy deploy generates does.
    policy: [backupController],
    // main.ts campaigns for the Lease default/backup-operator.
    namespaced: { default: leaderElectionRules("backup-operator") },
  });
  const { client, namespace } = cluster;
  const example = startExample("backup", account.kubeconfig);
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
    await dropFinalizers(client, BACKUPS, namespace);
  }
});
