import assert from "node:assert/strict";
import type { KubeObject } from "../../lib/kube/types.ts";
import { objectKey } from "../../lib/kube/object_key.ts";
import {
  type EvictionReason,
  Store,
  type StoreChange,
  stripTransform,
} from "../../lib/runtime/cache/store.ts";
import { estimateBytes } from "../../lib/runtime/cache/estimate_bytes.ts";
import { metadataFingerprint } from "../../lib/runtime/cache/fingerprint.ts";

interface Spec {
  rv?: string;
  owners?: string[];
  generation?: number;
  data?: string;
}

function cm(name: string, spec: Spec = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      namespace: "default",
      name,
      uid: `uid-${name}`,
      resourceVersion: spec.rv ?? "1",
      generation: spec.generation,
      ownerReferences: spec.owners?.map((uid) => ({
        apiVersion: "v1",
        kind: "Owner",
        name: uid,
        uid,
      })),
    },
    data: { value: spec.data ?? name },
  };
}

const noFetch = () => Promise.reject(new Error("fetch not expected"));

Deno.test("store keys objects by namespace and name and tracks the resourceVersion", () => {
  const store = new Store();
  store.apply({ type: "applied", object: cm("a", { rv: "5" }) });
  store.apply({ type: "applied", object: { metadata: { name: "node-1", resourceVersion: "6" } } });
  assert.deepEqual(store.keys(), ["default/a", "node-1"]);
  assert.equal(store.resourceVersion, "6");
  store.apply({ type: "applied", object: cm("a", { rv: "7", data: "new" }) });
  assert.deepEqual(store.get("default/a")?.data, { value: "new" });
  store.apply({ type: "bookmark", resourceVersion: "9" });
  assert.equal(store.resourceVersion, "9");
  assert.equal(store.size, 2);
  store.apply({ type: "deleted", object: cm("a", { rv: "10" }) });
  assert.equal(store.has("default/a"), false);
  assert.equal(store.get("default/a"), undefined);
  assert.equal(store.resourceVersion, "10");
});

Deno.test("store without a budget counts its objects and their bytes through updates, deletes and a relist", () => {
  const size = (name: string, data?: string) => estimateBytes(stripTransform(cm(name, { data })));
  const store = new Store();
  store.apply({ type: "applied", object: cm("a") });
  store.apply({ type: "applied", object: cm("b") });
  store.apply({ type: "applied", object: cm("a", { rv: "2", data: "longer value" }) });
  assert.ok(store.get("default/b"), "a read changes nothing without a budget");
  assert.equal(store.residentBytes("default/a"), size("a", "longer value"));
  assert.deepEqual([store.stats().objects, store.stats().bytes], [
    2,
    size("a", "longer value") + size("b"),
  ]);
  store.apply({ type: "deleted", object: cm("a") });
  assert.deepEqual([store.stats().objects, store.stats().bytes], [1, size("b")]);
  assert.equal(store.residentBytes("default/a"), undefined);
  store.apply({ type: "init" });
  store.apply({ type: "initPage", objects: [cm("c"), cm("d")] });
  store.apply({ type: "initDone", resourceVersion: "9" });
  assert.deepEqual([store.stats().objects, store.stats().bytes], [2, size("c") + size("d")]);
  assert.deepEqual(store.list().map(objectKey), ["default/c", "default/d"]);
  assert.equal(store.entry("default/c")?.cached, true);
  assert.equal(store.stats().evictions, 0);
});

Deno.test("store under a budget counts an updated object as the most recently used", () => {
  const { store, evicted } = evictingStore(2);
  store.apply({ type: "applied", object: cm("a") });
  store.apply({ type: "applied", object: cm("b") });
  store.apply({ type: "applied", object: cm("a", { rv: "2" }) });
  store.apply({ type: "applied", object: cm("c") });
  assert.deepEqual(evicted, ["default/b"]);
  store.apply({ type: "deleted", object: cm("a") });
  store.apply({ type: "applied", object: cm("d") });
  assert.deepEqual(evicted, ["default/b"], "a deleted object leaves room");
  store.apply({ type: "applied", object: cm("e") });
  assert.deepEqual(evicted, ["default/b", "default/c"]);
  assert.equal(store.stats().objects, 2);
});

Deno.test("objectKey refuses an object without a name", () => {
  assert.equal(objectKey(cm("a")), "default/a");
  assert.throws(() => objectKey({ kind: "Pod", metadata: {} }), /Cannot key a Pod/);
  assert.throws(() => new Store().apply({ type: "applied", object: {} }), TypeError);
});

Deno.test("store strips managed fields and the last-applied annotation by default", () => {
  const raw: KubeObject = {
    metadata: {
      name: "a",
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{}", keep: "yes" },
      managedFields: [{ manager: "kubectl" }],
    },
  };
  const store = new Store();
  store.apply({ type: "applied", object: raw });
  const cached = store.get("a")!;
  assert.equal("managedFields" in cached.metadata!, false);
  assert.deepEqual(cached.metadata!.annotations, { keep: "yes" });
  assert.ok(raw.metadata!.managedFields, "the received object is not mutated");
  const plain = cm("b");
  assert.equal(stripTransform(plain), plain, "nothing to strip, nothing copied");
});

Deno.test("store caches what a custom projection returns but indexes the received object", () => {
  const store = new Store<{ metadata: { name?: string }; value?: string }>({
    transform: (o) => ({
      metadata: { name: o.metadata?.name },
      value: (o.data as { value?: string } | undefined)?.value,
    }),
  });
  store.apply({ type: "applied", object: cm("a", { owners: ["o1"], generation: 3 }) });
  assert.deepEqual(store.get("default/a"), { metadata: { name: "a" }, value: "a" });
  assert.deepEqual(store.byOwner("o1"), ["default/a"]);
  assert.equal(store.entry("default/a")?.generation, 3);
  assert.equal(store.entry("default/a")?.uid, "uid-a");
});

Deno.test("store indexes every owner reference and follows owner changes", () => {
  const store = new Store();
  store.apply({ type: "applied", object: cm("a", { owners: ["o1", "o2"] }) });
  store.apply({ type: "applied", object: cm("b", { owners: ["o1"] }) });
  store.apply({ type: "applied", object: cm("c") });
  assert.deepEqual(store.byOwner("o1"), ["default/a", "default/b"]);
  assert.deepEqual(store.byOwner("o2"), ["default/a"]);
  store.apply({ type: "applied", object: cm("a", { owners: ["o3"] }) });
  assert.deepEqual(store.byOwner("o1"), ["default/b"]);
  assert.deepEqual(store.byOwner("o2"), []);
  assert.deepEqual(store.byOwner("o3"), ["default/a"]);
  store.apply({ type: "deleted", object: cm("b") });
  assert.deepEqual(store.byOwner("o1"), []);
  assert.deepEqual(store.entry("default/a")?.ownerUids, ["o3"]);
});

Deno.test("store answers by owner alike when first asked before the objects, after them, and after a relist", () => {
  const store = new Store({ budget: { maxObjects: 1 }, fetch: noFetch });
  assert.deepEqual(store.byOwner("o1"), [], "asked before anything came");
  store.apply({ type: "applied", object: cm("a", { owners: ["o1"] }) });
  store.apply({ type: "applied", object: cm("b", { owners: ["o1", "o2"] }) });
  assert.deepEqual(store.byOwner("o1"), ["default/a", "default/b"], "a evicted, still indexed");
  store.apply({ type: "init" });
  store.apply({
    type: "initPage",
    objects: [cm("b", { owners: ["o2"] }), cm("c", { owners: ["o1"] })],
  });
  store.apply({ type: "initDone", resourceVersion: "5" });
  store.apply({ type: "applied", object: cm("d", { owners: ["o1"] }) });
  assert.deepEqual(store.byOwner("o1"), ["default/c", "default/d"], "first asked after the relist");
  store.apply({ type: "deleted", object: cm("c") });
  assert.deepEqual(store.byOwner("o1"), ["default/d"]);
  assert.deepEqual(store.byOwner("o2"), ["default/b"]);
});

Deno.test("store answers custom indexers and rejects unknown ones", () => {
  const store = new Store({
    indexers: { data: (o) => [String((o.data as { value: string }).value)] },
  });
  store.apply({ type: "applied", object: cm("a", { data: "x" }) });
  store.apply({ type: "applied", object: cm("b", { data: "x" }) });
  store.apply({ type: "applied", object: cm("b", { data: "y" }) });
  assert.deepEqual(store.byIndex("data", "x"), ["default/a"]);
  assert.deepEqual(store.byIndex("data", "y"), ["default/b"]);
  assert.throws(() => store.byIndex("nope", "x"), /no such indexer \(known: 'data'\)/);
});

Deno.test("store under an object budget evicts least recently read objects but keeps their keys", () => {
  const evicted: [string, EvictionReason][] = [];
  const store = new Store({
    budget: { maxObjects: 2 },
    fetch: noFetch,
    onEvict: (key, reason) => evicted.push([key, reason]),
    indexers: { data: (o) => [String((o.data as { value: string }).value)] },
  });
  store.apply({ type: "applied", object: cm("a", { owners: ["o1"] }) });
  store.apply({ type: "applied", object: cm("b") });
  assert.ok(store.get("default/a"), "reading a makes b the least recently used");
  store.apply({ type: "applied", object: cm("c") });
  assert.deepEqual(evicted, [["default/b", "budget-objects"]]);
  assert.deepEqual(store.keys(), ["default/a", "default/b", "default/c"]);
  assert.equal(store.has("default/b"), true);
  assert.equal(store.get("default/b"), undefined);
  assert.deepEqual(store.list().map(objectKey), ["default/a", "default/c"]);
  assert.deepEqual(store.byIndex("data", "b"), ["default/b"]);
  assert.deepEqual(store.entry("default/b"), {
    key: "default/b",
    uid: "uid-b",
    resourceVersion: "1",
    generation: undefined,
    ownerUids: [],
    deleting: false,
    fingerprint: metadataFingerprint(cm("b")),
    memo: undefined,
    cached: false,
  });
  const stats = store.stats();
  assert.deepEqual(
    { objects: stats.objects, keys: stats.keys, hits: stats.hits, misses: stats.misses },
    { objects: 2, keys: 3, hits: 1, misses: 1 },
  );
  assert.equal(stats.evictions, 1);
  store.apply({ type: "applied", object: cm("d") });
  store.apply({ type: "applied", object: cm("e") });
  assert.deepEqual(store.byOwner("o1"), ["default/a"], "owner index survives eviction");
  assert.equal(store.get("default/a"), undefined);
});

Deno.test("store under a byte budget evicts until the estimate fits", () => {
  const evicted: [string, EvictionReason][] = [];
  const one = estimateBytes(stripTransform(cm("a")));
  const store = new Store({
    budget: { maxBytes: one * 2 + 10 },
    fetch: noFetch,
    onEvict: (key, reason) => evicted.push([key, reason]),
  });
  for (const name of ["a", "b", "c"]) store.apply({ type: "applied", object: cm(name) });
  assert.deepEqual(evicted, [["default/a", "budget-bytes"]]);
  assert.equal(store.stats().bytes, one * 2);
  store.apply({ type: "applied", object: cm("big", { data: "x".repeat(one * 4) }) });
  assert.equal(store.stats().objects, 0, "an object larger than the budget is only indexed");
  assert.equal(store.size, 4);
});

Deno.test("store reads an evicted object back with one live GET for concurrent readers", async () => {
  const calls: string[] = [];
  let answer!: (o: KubeObject) => void;
  const store = new Store({
    transform: (object) => ({ ...object }),
    budget: { maxObjects: 1 },
    fetch: (key) => {
      calls.push(key);
      return new Promise((resolve) => answer = resolve);
    },
  });
  store.apply({ type: "applied", object: cm("a", { rv: "3" }) });
  store.apply({ type: "applied", object: cm("b") });
  const reads = [store.getOrFetch("default/a"), store.getOrFetch("default/a")];
  answer(cm("a", { rv: "3", data: "live" }));
  const [first, second] = await Promise.all(reads);
  assert.deepEqual(calls, ["default/a"]);
  assert.deepEqual(first?.data, { value: "live" });
  assert.equal(second, first, "both readers get the one object that was cached");
  assert.deepEqual(store.get("default/a")?.data, { value: "live" }, "re-cached");
  assert.equal(store.get("default/b"), undefined, "and b made room for it");
  assert.equal(await store.getOrFetch("default/a"), first, "a hit needs no GET");
  assert.deepEqual(calls, ["default/a"]);
  assert.equal(await store.getOrFetch("default/unknown"), undefined);
  assert.deepEqual(calls, ["default/a"], "unknown keys are not fetched");
});

Deno.test("store does not cache a fetched object of another version", async () => {
  const store = new Store({
    budget: { maxObjects: 1 },
    fetch: () => Promise.resolve(cm("a", { rv: "4", data: "newer" })),
  });
  store.apply({ type: "applied", object: cm("a", { rv: "3" }) });
  store.apply({ type: "applied", object: cm("b") });
  assert.deepEqual((await store.getOrFetch("default/a"))?.data, { value: "newer" });
  assert.equal(store.get("default/a"), undefined, "the watch will deliver version 4");
  assert.equal(store.entry("default/a")?.resourceVersion, "3");
});

Deno.test("store cancels a live GET only when every reader gave up", async () => {
  let fetchSignal: AbortSignal | undefined;
  let answer!: (o: KubeObject | undefined) => void;
  const store = new Store({
    budget: { maxObjects: 1 },
    fetch: (_key, signal) => {
      fetchSignal = signal;
      return new Promise((resolve) => answer = resolve);
    },
  });
  store.apply({ type: "applied", object: cm("a") });
  store.apply({ type: "applied", object: cm("b") });
  const impatient = new AbortController();
  const patient = store.getOrFetch("default/a");
  const gaveUp = store.getOrFetch("default/a", impatient.signal);
  impatient.abort(new Error("timeout"));
  await assert.rejects(gaveUp, /timeout/);
  assert.equal(fetchSignal?.aborted, false);
  answer(undefined);
  assert.equal(await patient, undefined, "a 404 reads as gone");

  const alone = new AbortController();
  const read = store.getOrFetch("default/a", alone.signal);
  alone.abort(new Error("stop"));
  await assert.rejects(read, /stop/);
  assert.equal(fetchSignal?.aborted, true);
});

/** A (re)list of `pages` as the watcher delivers it. */
function relist(store: Store, pages: KubeObject[][], resourceVersion: string): void {
  store.apply({ type: "init" });
  for (const objects of pages) store.apply({ type: "initPage", objects });
  store.apply({ type: "initDone", resourceVersion });
}

Deno.test("store relist swaps everything at once and drops keys that vanished", () => {
  const store = new Store();
  store.apply({ type: "applied", object: cm("a", { owners: ["o1"] }) });
  store.apply({ type: "applied", object: cm("b") });
  const seen: string[] = [];
  store.subscribe((change: StoreChange<KubeObject>) => {
    // Every listener call sees the finished swap, never a half-applied relist.
    assert.deepEqual(store.keys(), ["default/b", "default/c", "default/d"]);
    assert.equal(store.resourceVersion, "100");
    assert.equal(store.has("default/a"), false);
    if (change.type === "replace") seen.push(`replace ${change.keys}`);
    else seen.push(`${change.type} ${change.key} previous=${change.previous?.resourceVersion}`);
  });
  relist(store, [[cm("b", { rv: "2" }), cm("c", { rv: "3" })], [cm("d", { rv: "4" })]], "100");
  assert.deepEqual(seen, [
    "upsert default/b previous=1",
    "upsert default/c previous=undefined",
    "upsert default/d previous=undefined",
    "delete default/a previous=1",
    "replace 3",
  ]);
  assert.deepEqual(store.byOwner("o1"), []);
  assert.equal(store.get("default/b")?.metadata?.resourceVersion, "2");
});

Deno.test("store readers and listeners see the old contents until the list is done", () => {
  const store = new Store({
    indexers: { data: (o) => [String((o.data as { value: string }).value)] },
  });
  store.apply({ type: "applied", object: cm("a", { owners: ["o1"], rv: "3", data: "x" }) });
  const before = {
    keys: store.keys(),
    list: store.list(),
    entry: store.entry("default/a"),
    stats: store.stats(),
  };
  const changes: string[] = [];
  store.subscribe((c) => changes.push(c.type));
  store.apply({ type: "init" });
  store.apply({
    type: "initPage",
    objects: [cm("b", { owners: ["o1"], rv: "5", data: "x" }), cm("a", { rv: "5", data: "y" })],
  });
  assert.deepEqual(changes, [], "listeners are told nothing before initDone");
  assert.deepEqual(store.keys(), before.keys);
  assert.deepEqual(store.list(), before.list);
  assert.deepEqual(store.entry("default/a"), before.entry);
  assert.equal(store.entry("default/b"), undefined);
  assert.equal(store.has("default/b"), false);
  assert.equal(store.size, 1);
  assert.deepEqual(store.byOwner("o1"), ["default/a"]);
  assert.deepEqual(store.byIndex("data", "x"), ["default/a"]);
  assert.deepEqual(store.byIndex("data", "y"), []);
  assert.equal(store.resourceVersion, "3");
  assert.deepEqual(store.stats(), before.stats);
  assert.deepEqual(store.get("default/a")?.data, { value: "x" });

  store.apply({ type: "initDone", resourceVersion: "6" });
  assert.deepEqual(changes, ["upsert", "upsert", "replace"]);
  assert.deepEqual(store.keys(), ["default/b", "default/a"]);
  assert.deepEqual(store.byOwner("o1"), ["default/b"]);
  assert.deepEqual(store.byIndex("data", "y"), ["default/a"]);
  assert.equal(store.resourceVersion, "6");
  assert.equal(store.stats().objects, 2);
});

Deno.test("store relist with a nameless object abandons the list and leaves the store unchanged", () => {
  const store = new Store();
  store.apply({ type: "applied", object: cm("a") });
  const changes: string[] = [];
  store.subscribe((c) => changes.push(c.type));
  store.apply({ type: "init" });
  store.apply({ type: "initPage", objects: [cm("b")] });
  assert.throws(
    () => store.apply({ type: "initPage", objects: [cm("c"), { metadata: {} }] }),
    { name: "TypeError", message: /Cannot key/ },
  );
  assert.throws(
    () => store.apply({ type: "initPage", objects: [cm("d")] }),
    { name: "TypeError", message: /no list is under way/ },
  );
  assert.throws(
    () => store.apply({ type: "initDone", resourceVersion: "5" }),
    { name: "TypeError", message: /'initDone': no list is under way/ },
  );
  assert.deepEqual(store.keys(), ["default/a"]);
  assert.equal(store.resourceVersion, "1");
  assert.deepEqual(changes, []);
  relist(store, [[cm("e", { rv: "7" })]], "7");
  assert.deepEqual(store.keys(), ["default/e"], "the next list goes through");
});

Deno.test("store drops an unfinished list when another init comes", () => {
  const store = new Store();
  store.apply({ type: "init" });
  store.apply({ type: "initPage", objects: [cm("a"), cm("b")] });
  relist(store, [[cm("c")]], "9");
  assert.deepEqual(store.keys(), ["default/c"]);
});

Deno.test("store refuses a page or an end of list without init", () => {
  const store = new Store();
  assert.throws(() => store.apply({ type: "initPage", objects: [cm("a")] }), TypeError);
  assert.throws(() => store.apply({ type: "initDone", resourceVersion: "1" }), TypeError);
  assert.equal(store.size, 0);
});

Deno.test("store applies a watch event that comes during a list at once, and the list replaces it when done", () => {
  const store = new Store();
  store.apply({ type: "init" });
  store.apply({ type: "initPage", objects: [cm("a", { rv: "2" })] });
  store.apply({ type: "applied", object: cm("z", { rv: "3" }) });
  assert.deepEqual(store.keys(), ["default/z"]);
  store.apply({ type: "initDone", resourceVersion: "2" });
  assert.deepEqual(store.keys(), ["default/a"]);
  assert.equal(store.resourceVersion, "2");
});

Deno.test("store keeps the budget on a list under way and still tells listeners every listed object", () => {
  const { store, evicted } = evictingStore(2);
  store.apply({ type: "applied", object: cm("old") });
  const upserts: [string, unknown][] = [];
  store.subscribe((c) => c.type === "upsert" && upserts.push([c.key, c.object.data]));
  store.apply({ type: "init" });
  store.apply({ type: "initPage", objects: [cm("a"), cm("b")] });
  store.apply({ type: "initPage", objects: [cm("c"), cm("d")] });
  assert.deepEqual(evicted, ["default/a", "default/b"], "the list under way stays within budget");
  assert.deepEqual(store.keys(), ["default/old"]);
  assert.deepEqual(
    [store.stats().objects, store.stats().keys],
    [1, 1],
    "readers still see the old contents",
  );
  store.apply({ type: "initDone", resourceVersion: "9" });
  assert.deepEqual(upserts, [
    ["default/a", { value: "a" }],
    ["default/b", { value: "b" }],
    ["default/c", { value: "c" }],
    ["default/d", { value: "d" }],
  ]);
  assert.deepEqual(store.keys(), ["default/a", "default/b", "default/c", "default/d"]);
  assert.deepEqual(store.list().map(objectKey), ["default/c", "default/d"]);
  assert.equal(store.get("default/a"), undefined);
  assert.deepEqual([store.stats().objects, store.stats().keys], [2, 4]);
});

Deno.test("store tells listeners about upserts and deletes with the previous entry", () => {
  const store = new Store();
  const changes: StoreChange<KubeObject>[] = [];
  const unsubscribe = store.subscribe((c) => changes.push(c));
  store.subscribe(() => {
    throw new Error("a broken listener does not stop the others");
  });
  store.apply({ type: "applied", object: cm("a", { generation: 1 }) });
  store.apply({ type: "applied", object: cm("a", { generation: 2, rv: "2" }) });
  store.apply({ type: "deleted", object: cm("a", { rv: "3" }) });
  store.apply({ type: "deleted", object: cm("never-seen") });
  unsubscribe();
  store.apply({ type: "applied", object: cm("b") });
  assert.deepEqual(
    changes.map((c) => c.type === "replace" ? c.type : [c.type, c.previous?.generation]),
    [["upsert", undefined], ["upsert", 1], ["delete", 2]],
  );
  const deleted = changes[2]!;
  assert.equal(deleted.type === "delete" && deleted.object?.metadata?.resourceVersion, "3");
});

Deno.test("store tells listeners the object it held before an update, as transformed, unless a budget evicted it", () => {
  const fetch = () => Promise.resolve(undefined);
  const transform = (o: KubeObject) => ({ metadata: o.metadata, data: o.data }) as KubeObject;
  const store = new Store({ transform, budget: { maxObjects: 1 }, fetch });
  const before: (KubeObject | undefined)[] = [];
  store.subscribe((c) => c.type === "upsert" && before.push(c.previousObject));
  store.apply({ type: "applied", object: cm("a", { data: "old" }) });
  store.apply({ type: "applied", object: cm("a", { rv: "2", data: "new" }) });
  store.apply({ type: "applied", object: cm("b") });
  store.apply({ type: "applied", object: cm("a", { rv: "3" }) });
  store.apply({ type: "init" });
  store.apply({ type: "initPage", objects: [cm("a", { rv: "4" }), cm("b", { rv: "5" })] });
  store.apply({ type: "initDone", resourceVersion: "5" });
  assert.deepEqual(before.map((o) => o && (o.data as { value: string }).value), [
    undefined, // a is new
    "old",
    undefined, // b is new
    undefined, // a was evicted for b
    "a", // the relist finds a as the last update left it
    undefined, // and b evicted for it
  ]);
  assert.deepEqual(Object.keys(before[1]!), ["metadata", "data"], "the transformed object");
});

Deno.test("store marks entries being deleted", () => {
  const store = new Store();
  const object = cm("a");
  object.metadata!.deletionTimestamp = "2024-01-01T00:00:00Z";
  store.apply({ type: "applied", object });
  assert.equal(store.entry("default/a")?.deleting, true);
});

Deno.test("store rejects a budget without fetch and limits that are not positive integers", () => {
  assert.throws(() => new Store({ budget: { maxObjects: 10 } }), /needs 'fetch'/);
  assert.throws(
    () => new Store({ budget: { maxObjects: 0 }, fetch: noFetch }),
    /'maxObjects' must be a positive integer, got 0/,
  );
  assert.throws(() => new Store({ budget: { maxBytes: 1.5 }, fetch: noFetch }), RangeError);
});

Deno.test("byte estimate grows with content and ignores shared property names", () => {
  const small = estimateBytes(cm("a"));
  const large = estimateBytes(cm("a", { data: "x".repeat(1000) }));
  assert.ok(large - small > 990 && large - small <= 1000, `grew by ${large - small}`);
  assert.equal(estimateBytes({ a: 1 }), estimateBytes({ somethingMuchLonger: 2 }));
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.ok(Number.isFinite(estimateBytes(cyclic)), "a cyclic projection does not hang the walk");
});

/** A store under a budget of `maxObjects`, recording the keys it evicts. */
function evictingStore(maxObjects: number): { store: Store; evicted: string[] } {
  const evicted: string[] = [];
  const store = new Store({
    budget: { maxObjects },
    fetch: noFetch,
    onEvict: (key) => evicted.push(key),
  });
  return { store, evicted };
}

Deno.test("a store entry's fingerprint moves with labels and annotations, not with status or Kubernetes' own annotations", () => {
  const store = new Store({ transform: () => ({}) });
  const at = (metadata: Record<string, unknown>, status?: object) => {
    store.apply({
      type: "applied",
      object: { metadata: { name: "a", namespace: "ns", ...metadata }, ...(status && { status }) },
    });
    return store.entry("ns/a")!.fingerprint;
  };
  const first = at({ labels: { app: "web" } });
  assert.equal(at({ labels: { app: "web" } }, { ready: true }), first);
  assert.equal(
    at({ labels: { app: "web" }, annotations: { "deployment.kubernetes.io/revision": "2" } }),
    first,
  );
  assert.notEqual(at({ labels: { app: "api" } }), first);
  assert.notEqual(at({ labels: { app: "web" }, annotations: { note: "x" } }), first);
  const deleting = at({ labels: { app: "web" }, deletionTimestamp: "2026-11-23T10:00:00Z" });
  assert.equal(deleting, first, "the deletion mark is kept apart");
  assert.equal(store.entry("ns/a")!.deleting, true);
});

Deno.test("store read gives the entry with its object and counts as a get", () => {
  const store = new Store({ budget: { maxObjects: 1 }, fetch: noFetch });
  store.apply({ type: "applied", object: cm("a", { generation: 2 }) });
  store.apply({ type: "applied", object: cm("b") });
  const evicted = store.read("default/a");
  assert.equal(evicted?.entry.generation, 2);
  assert.equal(evicted?.entry.cached, false);
  assert.equal(evicted?.object, undefined);
  const cached = store.read("default/b");
  assert.equal(cached?.entry.cached, true);
  assert.deepEqual(cached?.object, cm("b"));
  assert.equal(store.read("default/none"), undefined);
  const { hits, misses } = store.stats();
  assert.deepEqual({ hits, misses }, { hits: 1, misses: 1 });
});
