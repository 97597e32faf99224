/**
 * DatabaseCluster's webhooks as the API server runs them, in-process through
 * MemoryCluster: the conversion between v1alpha1 and v1alpha2, and the
 * refusal of a StorageClass the cluster does not have.
 */
import assert from "node:assert/strict";
import { type KubeObject, type Resource, STORAGE_CLASSES } from "../../lib/kube/mod.ts";
import {
  DATABASE_CLUSTERS,
  databaseClusterAdmission,
  databaseClusterConversion,
  databaseClusterDefinition,
} from "../../lib/operators/mod.ts";
import { convertObject, defineConversion } from "../../lib/runtime/webhook/mod.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";

const V1ALPHA1: Resource = { ...DATABASE_CLUSTERS, version: "v1alpha1" };

function cluster(version: string, name: string, storage: Record<string, unknown>): KubeObject {
  return {
    apiVersion: `kinglet.dev/${version}`,
    kind: "DatabaseCluster",
    metadata: { name, namespace: "shop" },
    spec: { engine: "postgres", version: "17", storage },
  };
}

function storageClass(name: string, isDefault = false): KubeObject {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: {
      name,
      ...(isDefault &&
        { annotations: { "storageclass.kubernetes.io/is-default-class": "true" } }),
    },
  };
}

function memoryCluster(...classes: KubeObject[]): MemoryCluster {
  const memory = new MemoryCluster({
    namespaces: ["shop"],
    webhooks: [databaseClusterAdmission, databaseClusterConversion],
  });
  for (const c of classes) memory.put(STORAGE_CLASSES, c);
  return memory;
}

const storageOf = (object: KubeObject) => (object.spec as { storage: unknown }).storage;

Deno.test("the DatabaseCluster CRD serves v1alpha1 and v1alpha2, stores v1alpha2, converts by webhook", () => {
  const crd = databaseClusterDefinition.crd();
  assert.deepEqual(
    crd.spec.versions.map((v) => [v.name, v.served, v.storage]),
    [["v1alpha1", true, false], ["v1alpha2", true, true]],
  );
  assert.equal(crd.spec.conversion?.strategy, "Webhook");
  assert.equal(defineConversion(databaseClusterConversion), databaseClusterConversion);
  assert.equal(databaseClusterDefinition.resource.version, "v1alpha2");
  const storage = (name: string) =>
    Object.keys(
      // deno-lint-ignore no-explicit-any
      (crd.spec.versions.find((v) => v.name === name)!.schema.openAPIV3Schema as any)
        .properties.spec.properties.storage.properties,
    );
  assert.deepEqual(storage("v1alpha1"), ["size", "storageClassName"]);
  assert.deepEqual(storage("v1alpha2"), ["size", "className"]);
});

Deno.test("a v1alpha1 DatabaseCluster converts to v1alpha2 and back unchanged", () => {
  const old = cluster("v1alpha1", "orders", { size: "1Gi", storageClassName: "fast" });
  const hub = convertObject(databaseClusterConversion, old, "kinglet.dev/v1alpha2");
  assert.equal(hub.apiVersion, "kinglet.dev/v1alpha2");
  assert.deepEqual(storageOf(hub), { size: "1Gi", className: "fast" });
  assert.deepEqual(hub.metadata, old.metadata);
  assert.deepEqual(convertObject(databaseClusterConversion, hub, "kinglet.dev/v1alpha1"), old);
  const unset = cluster("v1alpha1", "orders", { size: "1Gi" });
  const back = convertObject(
    databaseClusterConversion,
    convertObject(databaseClusterConversion, unset, "kinglet.dev/v1alpha2"),
    "kinglet.dev/v1alpha1",
  );
  assert.deepEqual(back, unset);
});

Deno.test("a DatabaseCluster written as v1alpha1 is stored as v1alpha2 and reads as either", async () => {
  const memory = memoryCluster(storageClass("fast"));
  await memory.create(
    V1ALPHA1,
    cluster("v1alpha1", "orders", { size: "1Gi", storageClassName: "fast" }),
    { namespace: "shop" },
  );
  const stored = await memory.get(DATABASE_CLUSTERS, "orders", { namespace: "shop" });
  assert.equal(stored.apiVersion, "kinglet.dev/v1alpha2");
  assert.deepEqual(storageOf(stored), { size: "1Gi", className: "fast" });
  const old = await memory.get(V1ALPHA1, "orders", { namespace: "shop" });
  assert.equal(old.apiVersion, "kinglet.dev/v1alpha1");
  assert.deepEqual(storageOf(old), { size: "1Gi", storageClassName: "fast" });
});

Deno.test("a DatabaseCluster naming a missing StorageClass is refused with the classes there are", async () => {
  const memory = memoryCluster(storageClass("local-path", true), storageClass("nfs"));
  await assert.rejects(
    memory.create(
      DATABASE_CLUSTERS,
      cluster("v1alpha2", "orders", { size: "1Gi", className: "fast" }),
      { namespace: "shop" },
    ),
    (error: Error) => {
      assert.match(
        error.message,
        /StorageClass "fast" does not exist; name one of local-path \(default\), nfs, or leave spec.storage.className unset for the cluster's default class/,
      );
      return true;
    },
  );
  assert.equal(memory.objects(DATABASE_CLUSTERS).length, 0);
});

Deno.test("a v1alpha1 DatabaseCluster naming a missing StorageClass is refused too", async () => {
  const memory = memoryCluster();
  await assert.rejects(
    memory.create(
      V1ALPHA1,
      cluster("v1alpha1", "orders", { size: "1Gi", storageClassName: "fast" }),
      { namespace: "shop" },
    ),
    /StorageClass "fast" does not exist, and the cluster has no StorageClass: create it first/,
  );
});

Deno.test("a DatabaseCluster naming an existing StorageClass, or none, is admitted", async () => {
  const memory = memoryCluster(storageClass("local-path"));
  await memory.create(
    DATABASE_CLUSTERS,
    cluster("v1alpha2", "orders", { size: "1Gi", className: "local-path" }),
    { namespace: "shop" },
  );
  await memory.create(DATABASE_CLUSTERS, cluster("v1alpha2", "carts", { size: "1Gi" }), {
    namespace: "shop",
  });
  assert.equal(memory.objects(DATABASE_CLUSTERS).length, 2);
});

Deno.test("a DatabaseCluster whose StorageClass was deleted can still be updated and deleted", async () => {
  const memory = memoryCluster(storageClass("fast"));
  await memory.create(
    DATABASE_CLUSTERS,
    cluster("v1alpha2", "orders", { size: "1Gi", className: "fast" }),
    { namespace: "shop" },
  );
  memory.remove(STORAGE_CLASSES, "fast");
  await memory.patch(DATABASE_CLUSTERS, "orders", { metadata: { labels: { tier: "gold" } } }, {
    type: "merge",
    namespace: "shop",
  });
  await memory.delete(DATABASE_CLUSTERS, "orders", { namespace: "shop" });
  assert.equal(memory.objects(DATABASE_CLUSTERS).length, 0);
});
