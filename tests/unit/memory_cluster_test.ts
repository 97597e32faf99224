/** The in-memory API server of the test kit: what it models, as a client sees it. */
import assert from "node:assert/strict";
import {
  CONFIG_MAPS,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isNotFound,
  type KubeObject,
  NAMESPACES,
  NODES,
  type WatchEvent,
} from "../../lib/kube/mod.ts";
import { FakeClock, MemoryCluster } from "../../lib/testing/mod.ts";

const configMap = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns", labels },
});

/** The first `n` events of a watch, then the watch is stopped. */
async function take(events: AsyncIterable<WatchEvent>, n: number, stop: AbortController) {
  const seen: string[] = [];
  for await (const { type, object } of events) {
    const annotations = object.metadata?.annotations ?? {};
    seen.push(`${type} ${object.metadata?.name ?? annotations["k8s.io/initial-events-end"]}`);
    if (seen.length === n) break;
  }
  stop.abort();
  return seen;
}

Deno.test("the in-memory API server lists and watches by namespace and label selector", async () => {
  const cluster = new MemoryCluster();
  cluster.put(CONFIG_MAPS, configMap("ours", { app: "web" }));
  cluster.put(CONFIG_MAPS, configMap("theirs", { app: "db" }));
  const listed = await cluster.list(CONFIG_MAPS, { namespace: "ns", labelSelector: "app=web" });
  assert.deepEqual(listed.items.map((o) => o.metadata?.name), ["ours"]);
  const none = await cluster.list(CONFIG_MAPS, { labelSelector: "app,!app" });
  assert.deepEqual(none.items, []);
  const stop = new AbortController();
  const watch = take(
    cluster.watch(CONFIG_MAPS, {
      labelSelector: "app!=db",
      resourceVersion: listed.metadata.resourceVersion,
      signal: stop.signal,
    }),
    3,
    stop,
  );
  cluster.put(CONFIG_MAPS, configMap("theirs", { app: "web" }));
  cluster.put(CONFIG_MAPS, configMap("ours", { app: "db" }));
  cluster.put(CONFIG_MAPS, configMap("other", { app: "db" }));
  cluster.put(CONFIG_MAPS, configMap("new", { app: "web" }));
  assert.deepEqual(await watch, ["ADDED theirs", "DELETED ours", "ADDED new"]);
});

Deno.test("the in-memory API server streams a list: the objects, then a bookmark marking their end", async () => {
  const cluster = new MemoryCluster();
  cluster.put(CONFIG_MAPS, configMap("a"));
  const stop = new AbortController();
  const watch = take(
    cluster.watch(CONFIG_MAPS, { sendInitialEvents: true, signal: stop.signal }),
    3,
    stop,
  );
  cluster.put(CONFIG_MAPS, configMap("b"));
  assert.deepEqual(await watch, ["ADDED a", "BOOKMARK true", "ADDED b"]);
});

Deno.test("the in-memory API server gives metadata alone to a metadata-only read", async () => {
  const cluster = new MemoryCluster();
  cluster.put(CONFIG_MAPS, { ...configMap("a"), data: { password: "hunter2" } });
  const read = await cluster.get(CONFIG_MAPS, "a", { namespace: "ns", metadataOnly: true });
  assert.equal(read.kind, "PartialObjectMetadata");
  assert.equal(read.metadata?.name, "a");
  assert.equal(read.data, undefined);
});

Deno.test("the in-memory API server moves the generation on a spec change, not on status or metadata", async () => {
  const cluster = new MemoryCluster({ namespaces: ["ns"] });
  const created = await cluster.create(CONFIG_MAPS, { ...configMap("a"), spec: { n: 1 } });
  assert.equal(created.metadata?.generation, 1);
  assert.ok(created.metadata?.uid && created.metadata.creationTimestamp);
  await cluster.apply(CONFIG_MAPS, { ...configMap("a"), status: { ready: true } }, {
    fieldManager: "test",
    subresource: "status",
  });
  await cluster.patch(CONFIG_MAPS, "a", { metadata: { labels: { x: "y" } } }, {
    type: "merge",
    namespace: "ns",
  });
  assert.equal(cluster.object(CONFIG_MAPS, "ns/a")?.metadata?.generation, 1);
  const changed = await cluster.apply<KubeObject>(CONFIG_MAPS, {
    ...configMap("a"),
    spec: { n: 2 },
  }, {
    fieldManager: "test",
  });
  assert.equal(changed.metadata?.generation, 2);
  assert.deepEqual(changed.status, { ready: true }, "an apply of the object keeps its status");
  assert.deepEqual(cluster.applies, ["configmaps/status ns/a", "configmaps ns/a"]);
});

Deno.test("the in-memory API server refuses a duplicate create, a stale replace and a failed test", async () => {
  const cluster = new MemoryCluster({ namespaces: ["ns"] });
  const stored = cluster.put(CONFIG_MAPS, configMap("a"));
  assert.equal((await cluster.create(CONFIG_MAPS, configMap("a")).catch((e) => e)).status, 409);
  cluster.put(CONFIG_MAPS, { ...stored, data: { moved: "on" } });
  assert.ok(isConflict(await cluster.replace(CONFIG_MAPS, stored).catch((e) => e)));
  const failed = await cluster.patch(CONFIG_MAPS, "a", [
    { op: "test", path: "/metadata/resourceVersion", value: stored.metadata?.resourceVersion },
    { op: "add", path: "/metadata/finalizers", value: ["x.io/y"] },
  ], { type: "json", namespace: "ns" }).catch((e) => e);
  assert.ok(isInvalid(failed), String(failed));
  assert.equal(cluster.object(CONFIG_MAPS, "ns/a")?.metadata?.finalizers, undefined);
  assert.ok(isNotFound(await cluster.get(CONFIG_MAPS, "b", { namespace: "ns" }).catch((e) => e)));
});

Deno.test("the in-memory API server holds a deleted object until its last finalizer goes", async () => {
  const cluster = new MemoryCluster({ clock: { now: () => Date.UTC(2025, 0, 1) } });
  cluster.put(CONFIG_MAPS, {
    ...configMap("a"),
    metadata: { ...configMap("a").metadata, finalizers: ["x.io/y"] },
  });
  await cluster.delete(CONFIG_MAPS, "a", { namespace: "ns" });
  const held = cluster.object(CONFIG_MAPS, "ns/a");
  assert.equal(String(held?.metadata?.deletionTimestamp), "2025-01-01T00:00:00Z");
  await cluster.patch(CONFIG_MAPS, "a", { metadata: { finalizers: null } }, {
    type: "merge",
    namespace: "ns",
  });
  assert.equal(cluster.object(CONFIG_MAPS, "ns/a"), undefined);
  assert.deepEqual(cluster.changes.at(-1), "DELETED configmaps ns/a");
});

Deno.test("the in-memory API server refuses a set-based label selector with a clear message", () => {
  const cluster = new MemoryCluster();
  assert.throws(
    () => cluster.list(CONFIG_MAPS, { labelSelector: "app in (web,db)" }),
    { name: "TypeError", message: /cannot select labels by "app in \(web": it knows "key=value"/ },
  );
});

Deno.test("the in-memory API server refuses a create or an apply into a namespace that does not exist", async () => {
  const cluster = new MemoryCluster({ namespaces: ["ns"] });
  const into = (namespace: string) => ({ ...configMap("a"), metadata: { name: "a", namespace } });
  await cluster.create(CONFIG_MAPS, into("ns"));
  await cluster.create(CONFIG_MAPS, into("default"));
  await cluster.apply(CONFIG_MAPS, into("kube-system"), { fieldManager: "test" });
  const refused = await cluster.create(CONFIG_MAPS, into("shop")).catch((e) => e);
  assert.ok(isNotFound(refused), String(refused));
  assert.match(refused.message, /: namespaces "shop" not found \(404 NotFound\)$/);
  assert.ok(isNotFound(
    await cluster.apply(CONFIG_MAPS, into("shop"), { fieldManager: "test" }).catch((e) => e),
  ));
  assert.equal(cluster.object(CONFIG_MAPS, "shop/a"), undefined);
  await cluster.create(NAMESPACES, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "shop" },
  });
  await cluster.apply(CONFIG_MAPS, into("shop"), { fieldManager: "test" });
  assert.ok(cluster.object(CONFIG_MAPS, "shop/a"));
});

Deno.test("the in-memory API server starts with a new cluster's namespaces, unannounced", async () => {
  const cluster = new MemoryCluster({ namespaces: ["shop"] });
  const names = (await cluster.list(NAMESPACES)).items.map((n) => n.metadata?.name);
  assert.deepEqual(names, ["default", "kube-system", "kube-public", "kube-node-lease", "shop"]);
  assert.deepEqual(cluster.changes, []);
});

Deno.test("the in-memory API server reads a missing object as undefined, and deletes it quietly when asked", async () => {
  const cluster = new MemoryCluster();
  cluster.put(CONFIG_MAPS, configMap("a"));
  const found = await cluster.getOptional(CONFIG_MAPS, "a", { namespace: "ns" });
  assert.equal(found?.metadata?.name, "a");
  assert.equal(await cluster.getOptional(CONFIG_MAPS, "b", { namespace: "ns" }), undefined);
  await cluster.delete(CONFIG_MAPS, "b", { namespace: "ns", ignoreNotFound: true });
  const refused = await cluster.delete(CONFIG_MAPS, "b", { namespace: "ns" }).catch((e) => e);
  assert.ok(isNotFound(refused));
  assert.match(refused.message, /configmaps "b" not found/);
});

type Node = KubeObject & {
  spec?: { taints?: { key: string; effect: string }[] };
  status?: {
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      lastHeartbeatTime?: string;
      lastTransitionTime?: string;
    }[];
  };
};

Deno.test("the in-memory API server makes test Nodes with the test's labels and a readiness it sets", async () => {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const cluster = new MemoryCluster({ clock });
  const node = await cluster.node("edge-1", { labels: { site: "a", zone: "z1" } });
  const ready = () => cluster.object<Node>(NODES, "edge-1")?.status?.conditions;
  assert.equal(node.name, "edge-1");
  assert.deepEqual(ready(), [{
    type: "Ready",
    status: "True",
    reason: "KubeletReady",
    message: "the test made this Node Ready",
    lastHeartbeatTime: "2026-01-01T00:00:00Z",
    lastTransitionTime: "2026-01-01T00:00:00Z",
  }]);
  assert.deepEqual(cluster.object<Node>(NODES, "edge-1")?.spec?.taints, [
    { key: "kinglet.dev/test-node", effect: "NoSchedule" },
  ]);

  await clock.advance(60_000);
  await node.setReady(false);
  assert.deepEqual(
    ready()?.map((c) => [c.status, c.reason, c.lastTransitionTime]),
    [["False", "KubeletNotReady", "2026-01-01T00:01:00Z"]],
  );
  await clock.advance(60_000);
  await node.setReady(false);
  assert.deepEqual(
    ready()?.map((c) => [c.lastHeartbeatTime, c.lastTransitionTime]),
    [["2026-01-01T00:02:00Z", "2026-01-01T00:01:00Z"]],
    "the heartbeat moves, the transition stays",
  );

  await node.setLabels({ site: "b", zone: null });
  assert.deepEqual(cluster.object(NODES, "edge-1")?.metadata?.labels, { site: "b" });
  assert.deepEqual(cluster.changes.filter((c) => c.includes("nodes")), [
    "ADDED nodes edge-1",
    "MODIFIED nodes edge-1",
    "MODIFIED nodes edge-1",
    "MODIFIED nodes edge-1",
    "MODIFIED nodes edge-1",
  ]);

  const notReady = await cluster.node("edge-2", { ready: false });
  const status = cluster.object<Node>(NODES, notReady.name)?.status?.conditions?.[0]?.status;
  assert.equal(status, "False");
  assert.ok(isAlreadyExists(await cluster.node("edge-1").catch((e) => e)));
});
