import assert from "node:assert/strict";
import { FakeClock } from "../../lib/async/mod.ts";
import { CONFIG_MAPS, type KubeObject } from "../../lib/kube/mod.ts";
import { Reflector, Store } from "../../lib/runtime/cache/mod.ts";
import { listerWatcher, watcher } from "../../lib/runtime/watcher/mod.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";
import { Happenings } from "./_until.ts";

const configMap = (name: string, value = "1"): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns" },
  data: { value },
});

function reflect(cluster: MemoryCluster) {
  const store = new Store();
  const changes = new Happenings<string>();
  store.subscribe((c) => changes.push(c.type === "replace" ? "replace" : `${c.type} ${c.key}`));
  const reflector = new Reflector(
    store,
    watcher(listerWatcher(cluster, CONFIG_MAPS), {
      streamingList: "off",
      clock: new FakeClock(),
    }),
  );
  const stop = new AbortController();
  const running = reflector.run(stop.signal);
  return {
    store,
    reflector,
    changes,
    async [Symbol.asyncDispose]() {
      stop.abort();
      await running;
    },
  };
}

Deno.test("a reflector's store holds the whole first list when synced resolves", async () => {
  const cluster = new MemoryCluster();
  cluster.put(CONFIG_MAPS, configMap("a"));
  const b = cluster.put(CONFIG_MAPS, configMap("b"));
  await using r = reflect(cluster);
  await r.reflector.synced;
  assert.deepEqual(r.store.keys().toSorted(), ["ns/a", "ns/b"]);
  assert.equal(r.store.resourceVersion, b.metadata?.resourceVersion, "the list's version");
  assert.deepEqual(r.changes.items, ["upsert ns/a", "upsert ns/b", "replace"]);
  assert.equal(r.reflector.freshness.synced, true);
});

Deno.test("a reflector follows the watch after the list: changes and deletions", async () => {
  const cluster = new MemoryCluster();
  cluster.put(CONFIG_MAPS, configMap("a"));
  await using r = reflect(cluster);
  await r.reflector.synced;
  cluster.put(CONFIG_MAPS, configMap("a", "2"));
  const c = cluster.put(CONFIG_MAPS, configMap("c"));
  cluster.remove(CONFIG_MAPS, "ns/a");
  await r.changes.count(5, "the watched changes");
  assert.deepEqual(r.changes.items.slice(2), ["upsert ns/a", "upsert ns/c", "delete ns/a"]);
  assert.deepEqual(r.store.keys(), ["ns/c"]);
  assert.equal(r.store.resourceVersion, String(Number(c.metadata?.resourceVersion) + 1));
});
