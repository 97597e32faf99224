import assert from "node:assert/strict";
import type { KubeObject, ObjectKey } from "../../lib/kube/types.ts";
import { type EvictionReason, Store } from "../../lib/runtime/cache/store.ts";

function cm(name: string, rv = "1"): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { namespace: "default", name, uid: `uid-${name}`, resourceVersion: rv },
    data: { value: name.repeat(20) },
  };
}

/** A budgeted store whose live GETs answer from `server` and are counted. */
function budgeted(maxObjects: number) {
  const server = new Map<ObjectKey, KubeObject>();
  const fetched: ObjectKey[] = [];
  const evicted: [ObjectKey, EvictionReason][] = [];
  const store = new Store({
    budget: { maxObjects },
    fetch: (key) => {
      fetched.push(key);
      return Promise.resolve(server.get(key));
    },
    onEvict: (key, reason) => evicted.push([key, reason]),
  });
  const put = (object: KubeObject) => {
    server.set(`default/${object.metadata!.name}`, object);
    store.apply({ type: "applied", object });
  };
  return { store, put, fetched, evicted };
}

Deno.test("store budget shrunk at run time evicts down to it, least recently read first, and loses no key", async () => {
  const { store, put, fetched, evicted } = budgeted(100);
  const names = ["a", "b", "c", "d", "e", "f"];
  for (const name of names) put(cm(name));
  store.get("default/a");
  store.get("default/b");
  assert.equal(store.stats().objects, 6);

  store.setBudget({ maxObjects: 2 });
  assert.deepEqual(
    evicted.map(([key]) => key),
    ["default/c", "default/d", "default/e", "default/f"],
    "the objects read least recently leave first",
  );
  assert.ok(evicted.every(([, reason]) => reason === "budget-objects"));
  assert.deepEqual([store.stats().objects, store.size], [2, 6]);
  assert.deepEqual(store.keys().sort(), names.map((n) => `default/${n}`));

  const object = await store.getOrFetch("default/e");
  assert.equal(object?.metadata?.name, "e", "an evicted key is read back live");
  assert.deepEqual(fetched, ["default/e"]);
  assert.equal(store.stats().objects, 2, "the object read back still fits the budget");
});

Deno.test("store budget shrunk by bytes evicts until the estimate fits, and relaxing it stops evicting", async () => {
  const { store, put, evicted } = budgeted(100);
  for (const name of ["a", "b", "c", "d"]) put(cm(name));
  const one = store.residentBytes("default/a")!;
  store.setBudget({ maxBytes: one * 2 });
  assert.equal(store.stats().objects, 2);
  assert.ok(store.stats().bytes <= one * 2);
  assert.deepEqual(evicted, [["default/a", "budget-bytes"], ["default/b", "budget-bytes"]]);

  store.setBudget(undefined);
  for (const name of ["a", "b"]) await store.getOrFetch(`default/${name}`);
  put(cm("e"));
  assert.equal(store.stats().objects, 5, "without a budget, objects read back stay cached");
  assert.equal(evicted.length, 2, "nothing more was evicted");
});

Deno.test("store budget shrunk during a list keeps the list under way within it", () => {
  const { store, evicted } = budgeted(100);
  store.apply({ type: "init" });
  store.apply({ type: "initPage", objects: [cm("a"), cm("b"), cm("c")] });
  store.setBudget({ maxObjects: 1 });
  assert.equal(evicted.length, 2);
  const listed: string[] = [];
  store.subscribe((change) => change.type === "upsert" && listed.push(change.key));
  store.apply({ type: "initDone", resourceVersion: "5" });
  assert.deepEqual(listed, ["default/a", "default/b", "default/c"], "listeners see every object");
  assert.deepEqual([store.stats().objects, store.size], [1, 3]);
});

Deno.test("store budget cannot be set on a store created without one, nor to a limit below 1", () => {
  assert.throws(() => new Store().setBudget({ maxObjects: 5 }), /created without one/);
  const { store } = budgeted(5);
  assert.throws(
    () => store.setBudget({ maxBytes: 0 }),
    /Cannot set the store's budget: budget 'maxBytes' must be a positive integer, got 0/,
  );
});
