/**
 * The Backup example with the public test kit: its controller in a Manager
 * over the in-memory API server on a fake clock, and its admission webhook
 * run by the in-memory API server as the real one calls it.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import {
  ApiError,
  CONFIG_MAPS,
  CUSTOM_RESOURCE_DEFINITIONS,
  EVENTS,
  type KubeObject,
  PERSISTENT_VOLUME_CLAIMS,
} from "../../lib/kube/mod.ts";
import { findCondition, Manager } from "../../lib/runtime/mod.ts";
import type { KubeEvent } from "../../lib/runtime/events/mod.ts";
import {
  DEFAULT_WEBHOOK_PORT,
  webhookName,
  webhookObjectNames,
  webhookPaths,
} from "../../lib/runtime/webhook/mod.ts";
import { FakeClock, MemoryCluster, waitFor } from "../../lib/testing/mod.ts";
import { backupController, renderPlan } from "../../examples/backup/backup.ts";
import { type Backup, BACKUPS } from "../../examples/backup/kind.ts";
import { backups } from "../../examples/backup/schema.ts";
import { backupWebhook } from "../../examples/backup/webhook.ts";

const nightly: Backup = {
  apiVersion: "example.kinglet.dev/v1",
  kind: "Backup",
  metadata: { name: "nightly", namespace: "shop" },
  spec: { source: "data", schedule: "0 3 * * *", destination: "s3://backups", keep: 7 },
};
const claim: KubeObject = {
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name: "data", namespace: "shop" },
};
type ConfigMap = KubeObject & { data?: Record<string, string> };

Deno.test("the example's Backup renders a plan it controls, labelled for the owned cache", () => {
  const plan = renderPlan({ ...nightly, metadata: { ...nightly.metadata, uid: "u-1" } });
  assert.equal(plan.metadata.name, "nightly-backup-plan");
  assert.equal(plan.metadata.namespace, "shop");
  assert.deepEqual(plan.metadata.labels, { "app.kubernetes.io/managed-by": "backup-operator" });
  assert.deepEqual(plan.data, {
    source: "data",
    schedule: "0 3 * * *",
    destination: "s3://backups/shop/nightly",
    keep: "7",
  });
  assert.equal(plan.metadata.ownerReferences[0]?.uid, "u-1");
  assert.equal(plan.metadata.ownerReferences[0]?.controller, true);
});

Deno.test("the example's Backup CRD refuses a schedule that is not cron and shows Ready", () => {
  assert.equal(backups.spec.safeParse({ ...nightly.spec, schedule: "nightly" }).success, false);
  assert.equal(backups.spec.safeParse({ ...nightly.spec, schedule: "@daily" }).success, true);
  const [version] = backups.crd().spec.versions;
  assert.deepEqual(version?.additionalPrinterColumns?.map((c) => c.name), [
    "Source",
    "Schedule",
    "Ready",
    "Age",
  ]);
});

Deno.test("the example's controller plans, reports Ready, looks again each minute, backs off and says it stopped", async (t) => {
  const clock = new FakeClock();
  const cluster = new MemoryCluster({ clock, namespaces: ["shop"] });
  // With the CRD in the cluster, every write of a Backup's status is checked against its schema.
  cluster.put(CUSTOM_RESOURCE_DEFINITIONS, backups.crd());
  const manager = new Manager({
    client: cluster,
    clock,
    metricsAddress: "0",
    healthAddress: "0",
    reportingInstance: "test",
  });
  manager.add({ ...backupController, requeueJitter: 0 });
  const stop = new AbortController();
  const running = manager.run(stop.signal);
  const backup = () => cluster.object<Backup>(BACKUPS, "shop/nightly");
  const ready = () => findCondition(backup()?.status?.conditions, "Ready");
  try {
    await t.step("a Backup of an existing volume gets its plan and is Ready", async () => {
      cluster.put(PERSISTENT_VOLUME_CLAIMS, claim);
      cluster.put(BACKUPS, nightly);
      const plan = await waitFor(
        "the plan",
        () => cluster.object<ConfigMap>(CONFIG_MAPS, "shop/nightly-backup-plan"),
      );
      assert.equal(plan.data?.destination, "s3://backups/shop/nightly");
      await waitFor("Ready", () => ready()?.status === "True");
      const { metadata, status } = backup()!;
      assert.equal(ready()?.reason, "Scheduled");
      assert.equal(ready()?.lastTransitionTime, "1970-01-01T00:00:00Z", "the fake clock's time");
      assert.equal(status?.observedGeneration, metadata.generation);
      assert.equal(status?.plan, "nightly-backup-plan");
      assert.deepEqual(metadata.finalizers, ["example.kinglet.dev/backup"]);
      assert.equal(plan.metadata?.ownerReferences?.[0]?.uid, metadata.uid);
    });

    await t.step("a volume gone is noticed by the requeue a minute later", async () => {
      cluster.remove(PERSISTENT_VOLUME_CLAIMS, "shop/data");
      await clock.advance(59_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(ready()?.status, "True", "looked again before the minute was up");
      await clock.advance(1_000);
      await waitFor("Ready=False", () => ready()?.status === "False");
      assert.equal(ready()?.reason, "SourceNotFound");
      assert.equal(ready()?.lastTransitionTime, "1970-01-01T00:01:00Z", "a minute on");
    });

    await t.step(
      "a failing Backup is retried after the error policy's first tier, 30 s",
      async () => {
        cluster.put(PERSISTENT_VOLUME_CLAIMS, claim);
        await clock.advance(29_000);
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.equal(ready()?.status, "False", "retried before 30 s");
        await clock.advance(1_000);
        await waitFor("Ready again", () => ready()?.status === "True");
      },
    );

    await t.step("a deleted Backup records that it stopped, then goes", async () => {
      await cluster.delete(BACKUPS, "nightly", { namespace: "shop" });
      await waitFor("the Backup to go", () => backup() === undefined);
      const stopped = await waitFor(
        "a Stopped Event",
        () => cluster.objects<KubeEvent & KubeObject>(EVENTS).find((e) => e.reason === "Stopped"),
      );
      assert.equal(stopped.note, "Stopped copying data; the copies in s3://backups are kept");
    });
  } finally {
    stop.abort();
    await running;
  }
});

Deno.test("the snippet of docs/writing-operators.md reaches the minute's requeue by 66 s, whatever the jitter draws", async () => {
  const random = Math.random;
  // The latest draw: a ±10 % jitter puts the requeue just short of 66 s, past 60 s.
  Math.random = () => 0.999_999;
  const clock = new FakeClock();
  const cluster = new MemoryCluster({ clock, namespaces: ["shop"] });
  const manager = new Manager({
    client: cluster,
    clock,
    metricsAddress: "0",
    healthAddress: "0",
    reportingInstance: "test",
  });
  let reconciles = 0;
  manager.add({
    ...backupController,
    reconcile: (backup, context) => {
      reconciles++;
      return backupController.reconcile(backup, context);
    },
  });
  const stop = new AbortController();
  const running = manager.run(stop.signal);
  try {
    cluster.put(PERSISTENT_VOLUME_CLAIMS, claim);
    cluster.put(BACKUPS, nightly);
    await waitFor("the plan", () => cluster.object(CONFIG_MAPS, "shop/nightly-backup-plan"));
    await waitFor(
      "the status",
      () => cluster.object<Backup>(BACKUPS, "shop/nightly")?.status,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const settled = reconciles;
    await clock.advance(65_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(reconciles, settled, "requeued before the jittered minute was up");
    await clock.advance(1_000);
    await waitFor("the requeue", () => reconciles > settled);
  } finally {
    Math.random = random;
    stop.abort();
    await running;
  }
});

Deno.test("the example's webhook denies a second Backup of a claim, as the API server would", async () => {
  const cluster = new MemoryCluster({ namespaces: ["shop"], webhooks: [backupWebhook] });
  await cluster.create(BACKUPS, nightly);
  const hourly = { ...nightly, metadata: { name: "hourly", namespace: "shop" } };
  await assert.rejects(
    cluster.create(BACKUPS, hourly),
    (e: unknown) =>
      e instanceof ApiError && e.status === 403 &&
      e.message.includes(
        'admission webhook "vbackups.example.kinglet.dev" denied the request: ' +
          "spec.source: claim data is already copied by Backup nightly",
      ),
  );
  // Another claim, or the same Backup changed in another field, is admitted.
  await cluster.create(BACKUPS, { ...hourly, spec: { ...hourly.spec, source: "logs" } });
  const stored = cluster.object<Backup>(BACKUPS, "shop/nightly")!;
  await cluster.replace(BACKUPS, { ...stored, spec: { ...stored.spec, keep: 3 } });
  assert.equal(cluster.object<Backup>(BACKUPS, "shop/nightly")?.spec.keep, 3);
  await assert.rejects(
    cluster.replace(BACKUPS, {
      ...cluster.object<Backup>(BACKUPS, "shop/hourly")!,
      spec: { ...hourly.spec, source: "data" },
    }),
    /claim data is already copied by Backup nightly/,
  );
});

Deno.test("the example's webhook configuration sends the API server to the example on loopback", async () => {
  const yaml = await Deno.readTextFile(
    new URL("../../examples/backup/webhooks.yaml", import.meta.url),
  );
  const configuration = parse(yaml.split("\n").filter((l) => !l.startsWith("#")).join("\n"));
  const [entry] = configuration.webhooks;
  assert.equal(configuration.metadata.name, webhookObjectNames("backup-operator").validating);
  assert.equal(entry.name, webhookName("validate", BACKUPS));
  assert.equal(
    entry.clientConfig.url,
    `https://127.0.0.1:${DEFAULT_WEBHOOK_PORT}${webhookPaths.validate(BACKUPS)}`,
  );
  assert.deepEqual(entry.rules[0].operations, ["CREATE", "UPDATE"]);
  assert.equal(entry.failurePolicy, "Fail");
});
