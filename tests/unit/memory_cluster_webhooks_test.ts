/** The in-memory API server runs a kind's admission and conversion webhooks as the API server would. */
import assert from "node:assert/strict";
import {
  ApiError,
  CUSTOM_RESOURCE_DEFINITIONS,
  isForbidden,
  isNotFound,
  type KubeObject,
  type Resource,
  type WatchEvent,
} from "../../lib/kube/mod.ts";
import { resetLogging, setupLogging } from "../../lib/log.ts";
import {
  type AdmissionWebhook,
  allowed,
  defineConversion,
  denied,
} from "../../lib/runtime/webhook/mod.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";

const V1: Resource = {
  group: "example.com",
  version: "v1",
  plural: "databases",
  kind: "Database",
  namespaced: true,
};
const V2: Resource = { ...V1, version: "v2" };
const STORAGE_CLASSES: Resource = {
  group: "storage.k8s.io",
  version: "v1",
  plural: "storageclasses",
  kind: "StorageClass",
  namespaced: false,
};

type Database = KubeObject & {
  spec?: { storageClass?: string; replicas?: number; engine?: string };
};

/** Defaults replicas; denies a storage class that does not exist, and a change of engine. */
const ADMISSION: AdmissionWebhook<Database> = {
  resource: V1,
  operations: ["CREATE", "UPDATE", "DELETE"],
  default: (object) => ({ ...object, spec: { replicas: 1, ...object.spec } }),
  validate: async ({ operation, object, oldObject }, { client }) => {
    if (operation === "DELETE") {
      return oldObject?.metadata?.labels?.protected
        ? denied("the database is protected")
        : allowed();
    }
    const engine = object?.spec?.engine;
    if (oldObject && oldObject.spec?.engine !== engine) return denied("spec.engine is immutable");
    const name = object?.spec?.storageClass ?? "";
    try {
      await client.get(STORAGE_CLASSES, name);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        return denied(`storage class "${name}" does not exist`);
      }
      throw error;
    }
    return allowed();
  },
};

function database(spec: Database["spec"], labels: Record<string, string> = {}): Database {
  return {
    apiVersion: "example.com/v1",
    kind: "Database",
    metadata: { name: "orders", namespace: "default", labels },
    spec,
  };
}

function withStorageClass(cluster: MemoryCluster): MemoryCluster {
  cluster.put(STORAGE_CLASSES, {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: "fast" },
  });
  return cluster;
}

Deno.test("a create is defaulted, then validated; a denial is the API server's 403 with the message", async () => {
  const cluster = withStorageClass(new MemoryCluster({ webhooks: [ADMISSION] }));
  const created = await cluster.create(V1, database({ storageClass: "fast", engine: "pg" }));
  assert.deepEqual(created.spec, { replicas: 1, storageClass: "fast", engine: "pg" });
  assert.equal(cluster.object<Database>(V1, "default/orders")?.spec?.replicas, 1);

  const refused = await cluster.create(V1, {
    ...database({ storageClass: "slow" }),
    metadata: { name: "other", namespace: "default" },
  }).catch((e) => e);
  assert.ok(isForbidden(refused));
  assert.match(
    refused.message,
    /admission webhook "vdatabases.example.com" denied the request: storage class "slow" does not exist/,
  );
  assert.equal(cluster.object(V1, "default/other"), undefined);
});

Deno.test("updates are validated with the old object, by replace, merge patch and apply alike", async () => {
  const cluster = withStorageClass(new MemoryCluster({ webhooks: [ADMISSION] }));
  await cluster.create(V1, database({ storageClass: "fast", engine: "pg" }));
  const stored = cluster.object<Database>(V1, "default/orders")!;
  const writes: [string, () => Promise<unknown>][] = [
    ["replace", () => cluster.replace(V1, { ...stored, spec: { ...stored.spec, engine: "my" } })],
    ["patch", () =>
      cluster.patch(V1, "orders", { spec: { engine: "my" } }, {
        type: "merge",
        namespace: "default",
      })],
    ["apply", () =>
      cluster.apply(V1, database({ storageClass: "fast", engine: "my" }), {
        fieldManager: "test",
      })],
  ];
  for (const [how, write] of writes) {
    await assert.rejects(write(), /spec.engine is immutable/, how);
  }
  const scaled = await cluster.patch<Database>(V1, "orders", { spec: { replicas: 3 } }, {
    type: "merge",
    namespace: "default",
  });
  assert.equal(scaled.spec?.replicas, 3);
});

Deno.test("status writes are not admitted", async () => {
  const cluster = withStorageClass(new MemoryCluster({ webhooks: [ADMISSION] }));
  await cluster.create(V1, database({ storageClass: "fast", engine: "pg" }));
  cluster.remove(STORAGE_CLASSES, "fast");
  const written = await cluster.patch<Database>(V1, "orders", { status: { phase: "Ready" } }, {
    type: "merge",
    namespace: "default",
    subresource: "status",
  });
  assert.deepEqual(written.status, { phase: "Ready" });
});

Deno.test("a delete the validator denies leaves the object in place", async () => {
  const cluster = withStorageClass(new MemoryCluster({ webhooks: [ADMISSION] }));
  await cluster.create(V1, database({ storageClass: "fast" }, { protected: "yes" }));
  await assert.rejects(
    cluster.delete(V1, "orders", { namespace: "default" }),
    /denied the request: the database is protected/,
  );
  assert.ok(cluster.object(V1, "default/orders"));
  await cluster.patch(V1, "orders", { metadata: { labels: { protected: null } } }, {
    type: "merge",
    namespace: "default",
  });
  await cluster.delete(V1, "orders", { namespace: "default" });
  await assert.rejects(cluster.get(V1, "orders", { namespace: "default" }), isNotFound);
});

Deno.test("a validator that throws denies under Fail, saying so", async () => {
  const throwing: AdmissionWebhook = {
    resource: V1,
    validate: () => {
      throw new Error("the catalogue is down");
    },
  };
  const cluster = new MemoryCluster({ webhooks: [throwing] });
  setupLogging({ write: () => {} });
  try {
    const refused = await cluster.create(V1, database({})).catch((e) => e);
    assert.equal(refused.status, 500);
    assert.match(
      refused.message,
      /denied the request: validation of Database default\/orders failed: the handler failed: the catalogue is down/,
    );
  } finally {
    resetLogging();
  }
});

/** v1 has `size`, v2 (the hub) `replicas`. */
const CONVERSION = defineConversion({
  resource: V2,
  hub: "v2",
  versions: {
    v1: {
      toHub: ({ spec, ...rest }) => {
        const { size, ...others } = spec as { size?: number };
        return { ...rest, spec: { ...others, ...(size !== undefined && { replicas: size }) } };
      },
      fromHub: ({ spec, ...rest }) => {
        const { replicas, ...others } = spec as { replicas?: number };
        return { ...rest, spec: { ...others, ...(replicas !== undefined && { size: replicas }) } };
      },
    },
  },
});

Deno.test("a converted kind is stored in its hub and read and written in either version", async () => {
  const cluster = new MemoryCluster({ webhooks: [CONVERSION] });
  const created = await cluster.create(V1, {
    apiVersion: "example.com/v1",
    kind: "Database",
    metadata: { name: "orders", namespace: "default", labels: { team: "a" } },
    spec: { size: 2 },
  });
  assert.equal(created.apiVersion, "example.com/v1");
  assert.deepEqual(created.spec, { size: 2 });
  const stored = cluster.object(V2, "default/orders")!;
  assert.equal(stored.apiVersion, "example.com/v2");
  assert.deepEqual(stored.spec, { replicas: 2 });

  const asV2 = await cluster.get(V2, "orders", { namespace: "default" });
  assert.deepEqual(asV2.spec, { replicas: 2 });
  assert.deepEqual(asV2.metadata, created.metadata, "metadata is kept across versions");
  const listed = await cluster.list(V1, { namespace: "default" });
  assert.deepEqual(listed.items.map((o) => [o.apiVersion, o.spec]), [["example.com/v1", {
    size: 2,
  }]]);

  const patched = await cluster.patch(V1, "orders", { spec: { size: 5 } }, {
    type: "merge",
    namespace: "default",
  });
  assert.deepEqual(patched.spec, { size: 5 });
  assert.deepEqual(cluster.object(V2, "default/orders")?.spec, { replicas: 5 });
});

Deno.test("a watch in a non-storage version sees converted objects", async () => {
  const cluster = new MemoryCluster({ webhooks: [CONVERSION] });
  const stop = new AbortController();
  const events = cluster.watch(V1, { signal: stop.signal });
  const first = events.next();
  await cluster.create(V2, {
    apiVersion: "example.com/v2",
    kind: "Database",
    metadata: { name: "orders", namespace: "default" },
    spec: { replicas: 4 },
  });
  const { value } = await first as IteratorResult<WatchEvent>;
  stop.abort();
  assert.equal(value.type, "ADDED");
  assert.equal(value.object.apiVersion, "example.com/v1");
  assert.deepEqual(value.object.spec, { size: 4 });
  await events.return(undefined);
});

Deno.test("the CRD's storage version wins over the hub", async () => {
  const cluster = new MemoryCluster({ webhooks: [CONVERSION] });
  cluster.put(CUSTOM_RESOURCE_DEFINITIONS, {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "databases.example.com" },
    spec: { versions: [{ name: "v1", storage: true }, { name: "v2", storage: false }] },
  });
  await cluster.create(V2, {
    apiVersion: "example.com/v2",
    kind: "Database",
    metadata: { name: "orders", namespace: "default" },
    spec: { replicas: 1 },
  });
  assert.deepEqual(cluster.object(V1, "default/orders")?.spec, { size: 1 });
  assert.equal(cluster.object(V1, "default/orders")?.apiVersion, "example.com/v1");
});

Deno.test("admission sees the object in its webhook's version, and the default comes back in the written one", async () => {
  let seen: string | undefined;
  const onV2: AdmissionWebhook = {
    resource: V2,
    default: (object) => ({ ...object, spec: { replicas: 3, ...object.spec as object } }),
    validate: ({ object }) => {
      seen = object?.apiVersion;
      return allowed();
    },
  };
  const cluster = new MemoryCluster({ webhooks: [CONVERSION, onV2] });
  const created = await cluster.create(V1, {
    apiVersion: "example.com/v1",
    kind: "Database",
    metadata: { name: "orders", namespace: "default" },
    spec: {},
  });
  assert.equal(seen, "example.com/v2");
  assert.equal(created.apiVersion, "example.com/v1");
  assert.deepEqual(created.spec, { size: 3 });
});

Deno.test("two admission webhooks for one kind are refused", () => {
  assert.throws(
    () =>
      new MemoryCluster({
        webhooks: [ADMISSION as AdmissionWebhook, ADMISSION as AdmissionWebhook],
      }),
    new TypeError(
      "Cannot create the MemoryCluster: 'webhooks' holds two admission webhooks of databases.example.com",
    ),
  );
});

Deno.test("a conversion that fails is the API server's 500, naming the object", async () => {
  const failing = defineConversion({
    ...CONVERSION,
    versions: {
      v1: {
        toHub: () => {
          throw new Error("size must be a number");
        },
        fromHub: (o) => o,
      },
    },
  });
  const cluster = new MemoryCluster({ webhooks: [failing] });
  const refused = await cluster.create(V1, database({})).catch((e) => e);
  assert.ok(refused instanceof ApiError);
  assert.equal(refused.status, 500);
  assert.match(
    refused.message,
    /^GET \/apis\/example.com\/v1\/namespaces\/default\/databases\/orders: conversion webhook for example.com\/v1, Kind=Database failed: Cannot convert Database orders from v1 to v2: size must be a number/,
  );
});
