import assert from "node:assert/strict";
import { FakeClock, flushMicrotasks, Semaphore } from "../../lib/async/mod.ts";
import { CONFIG_MAPS, DEPLOYMENTS, type KubeObject, NODES, SECRETS } from "../../lib/kube/mod.ts";
import type { Action } from "../../lib/runtime/controller/mod.ts";
import {
  type ControllerSpec,
  fixedErrorPolicy,
  type ReconcileContext,
  TerminalError,
} from "../../lib/runtime/mod.ts";
import { Caches, stripTransform } from "../../lib/runtime/cache/mod.ts";
import { Controller } from "../../lib/runtime/controller/mod.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";
import { resetLogging, setupLogging } from "../../lib/log.ts";
import { Happenings, until } from "./_until.ts";

/** A controller of ConfigMaps over an in-memory cluster, on a fake clock. */
function harness(
  reconcile: (object: KubeObject, context: ReconcileContext) => Promise<Action>,
  extra: Partial<ControllerSpec<KubeObject>> = {},
  random?: () => number,
) {
  const clock = new FakeClock();
  const cluster = new MemoryCluster({ namespaces: ["ns"] });
  const caches = new Caches({ client: cluster, clock, watcherOptions: { streamingList: "off" } });
  const controller = new Controller({ name: "test", resource: CONFIG_MAPS, reconcile, ...extra }, {
    client: cluster,
    semaphore: new Semaphore(2),
    caches,
    clock,
    ...(random && { random }),
  });
  const stop = new AbortController();
  let running: Promise<unknown> | undefined;
  return {
    clock,
    cluster,
    controller,
    start() {
      running = Promise.all([caches.run(stop.signal), controller.run(stop.signal)]);
    },
    async [Symbol.asyncDispose]() {
      stop.abort();
      await running;
    },
  };
}

/** Lets the fake-clock pipeline run until `check` holds, without moving the clock. */
async function settled(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  assert.ok(check(), `${what}: not after 200 turns of the event loop`);
}

const configMap = (name: string, data: Record<string, string> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns" },
  spec: data,
});

Deno.test("a controller reconciles every object once its caches have synced", async () => {
  const calls = new Happenings<string>();
  await using h = harness((_object, { key }) => {
    calls.push(key);
    return Promise.resolve({});
  });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.cluster.put(CONFIG_MAPS, configMap("b"));
  h.start();
  await h.controller.synced;
  assert.deepEqual((await calls.count(2, "reconciles")).toSorted(), ["ns/a", "ns/b"]);
});

Deno.test("a status-only change does not reconcile again; a new generation does", async () => {
  const calls = new Happenings<string>();
  await using h = harness((object, { key }) => {
    calls.push(`${key}@${object.metadata?.generation}`);
    return Promise.resolve({});
  });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.cluster.put(CONFIG_MAPS, configMap("b"));
  h.start();
  await calls.count(2, "first reconciles");
  h.cluster.put(CONFIG_MAPS, { ...configMap("a"), status: { seen: true } });
  h.cluster.put(CONFIG_MAPS, configMap("b", { changed: "yes" }));
  await calls.count(3, "the reconcile of the new generation");
  await flushMicrotasks();
  assert.deepEqual(calls.items.slice(2), ["ns/b@2"]);
});

Deno.test("at debug level each reconcile is logged with its key, its time and its outcome", async () => {
  const lines: Record<string, unknown>[] = [];
  setupLogging({ level: "debug", format: "json", write: (line) => lines.push(JSON.parse(line)) });
  try {
    const started = new Happenings<string>();
    const calls = new Happenings<string>();
    await using h = harness(async (_object, { key, clock }) => {
      started.push(key);
      await clock.sleep(25);
      calls.push(key);
      if (key === "ns/b") throw new Error("transient");
      return {};
    });
    h.cluster.put(CONFIG_MAPS, configMap("a"));
    h.cluster.put(CONFIG_MAPS, configMap("b"));
    h.start();
    await started.count(2, "both reconciles asleep");
    await h.clock.advance(25);
    await calls.count(2, "reconciles");
    await flushMicrotasks();
    const reconciled = lines
      .filter((line) => String(line.message).startsWith("reconciled "))
      .map((line) => [line.message, line.properties, line.logger]);
    assert.deepEqual(reconciled.toSorted(), [
      [
        'reconciled "ns/a" in 25 ms: "success"',
        { key: "ns/a", ms: 25, outcome: "success" },
        "kinglet.controller.test",
      ],
      [
        'reconciled "ns/b" in 25 ms: "error"',
        { key: "ns/b", ms: 25, outcome: "error" },
        "kinglet.controller.test",
      ],
    ]);
  } finally {
    resetLogging();
  }
});

Deno.test("a failed reconcile is retried after the rate limiter's delay on the fake clock", async () => {
  const calls = new Happenings<string>();
  await using h = harness((_object, { key }) => {
    calls.push(key);
    if (calls.items.length === 1) return Promise.reject(new Error("transient"));
    return Promise.resolve({});
  }, { requeueJitter: 0 });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.start();
  await calls.count(1, "the first reconcile");
  await flushMicrotasks();
  assert.equal(h.controller.failures("ns/a"), 1);
  await h.clock.advance(4);
  assert.equal(calls.items.length, 1, "not before the 5 ms of the first retry");
  await h.clock.advance(1);
  await calls.count(2, "the retry");
  await flushMicrotasks();
  assert.equal(h.controller.failures("ns/a"), 0, "a success forgets the failures");
});

Deno.test("keys failing together under an error policy come back spread over the jitter window before their delay, not in one instant", async () => {
  const failedAt = new Map<string, number>();
  const retriedAt = new Map<string, number>();
  let turn = 0;
  await using h = harness(
    (_object, { key }) => {
      if (!failedAt.has(key)) {
        failedAt.set(key, h.clock.now());
        return Promise.reject(new Error("the API server is down"));
      }
      retriedAt.set(key, h.clock.now());
      return Promise.resolve({});
    },
    { errorPolicy: fixedErrorPolicy(10_000), requeueJitter: 0.1 },
    () => (turn++ % 20) / 20,
  );
  const names = Array.from({ length: 20 }, (_, i) => `k${String(i).padStart(2, "0")}`);
  for (const name of names) h.cluster.put(CONFIG_MAPS, configMap(name));
  h.start();
  await settled("every key failed once", () => failedAt.size === 20);
  for (let t = 0; t < 10_100; t += 100) await h.clock.advance(100);
  await settled("every key retried", () => retriedAt.size === 20);
  const delays = names.map((n) => retriedAt.get(`ns/${n}`)! - failedAt.get(`ns/${n}`)!);
  assert.ok(delays.every((d) => d >= 9_000 && d <= 10_000), `delays ${delays}`);
  const spread = Math.max(...delays) - Math.min(...delays);
  assert.ok(spread >= 850, `20 retries spread over ${spread} ms of the 1 s window`);
  assert.ok(new Set(delays).size >= 15, `only ${new Set(delays).size} distinct retry times`);
});

Deno.test("retries past the bucket's burst trickle back at its rate, with or without a policy", async () => {
  const failed = new Set<string>();
  const retriedAt: number[] = [];
  await using h = harness(
    (_object, { key }) => {
      if (!failed.has(key)) {
        failed.add(key);
        return Promise.reject(new Error("the API server is down"));
      }
      retriedAt.push(h.clock.now());
      return Promise.resolve({});
    },
    { errorPolicy: fixedErrorPolicy(0) },
  );
  for (let i = 0; i < 130; i++) h.cluster.put(CONFIG_MAPS, configMap(`k${i}`));
  h.start();
  await settled("every key failed once", () => failed.size === 130);
  await settled("the burst retried", () => retriedAt.length === 100);
  assert.equal(retriedAt.length, 100, "more than the burst of 100 came back at once");
  await h.clock.advance(1_000);
  await settled("a second's worth", () => retriedAt.length === 110);
  for (let t = 0; t < 2_000; t += 100) await h.clock.advance(100);
  await settled("every key retried", () => retriedAt.length === 130);
  assert.ok(Math.max(...retriedAt) >= 2_900, `the last retry came at ${Math.max(...retriedAt)} ms`);
});

Deno.test("a controller's own concurrency limit holds under a larger global one", async () => {
  const running = new Set<string>();
  let most = 0;
  const release = Promise.withResolvers<void>();
  const started = new Happenings<string>();
  await using h = harness(async (_object, { key }) => {
    running.add(key);
    most = Math.max(most, running.size);
    started.push(key);
    await release.promise;
    running.delete(key);
    return {};
  }, { maxConcurrentReconciles: 1 });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.cluster.put(CONFIG_MAPS, configMap("b"));
  h.start();
  await started.count(1, "the first reconcile");
  await flushMicrotasks();
  assert.equal(running.size, 1, "a second reconcile ran beside the first: the global limit is 2");
  release.resolve();
  await started.count(2, "the second reconcile, once the first ended");
  assert.equal(most, 1);
  assert.throws(
    () => harness(() => Promise.resolve({}), { maxConcurrentReconciles: 0 }),
    /RangeError: Cannot create controller 'test': 'maxConcurrentReconciles' must be a positive integer, got 0/,
  );
});

Deno.test("a terminal error is not retried until the object changes", async () => {
  const calls = new Happenings<number | undefined>();
  await using h = harness((object) => {
    calls.push(object.metadata?.generation);
    return object.metadata?.generation === 1
      ? Promise.reject(new TerminalError("invalid spec"))
      : Promise.resolve({});
  });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.start();
  await calls.count(1, "the first reconcile");
  await h.clock.advance(1_000_000);
  assert.deepEqual(calls.items, [1]);
  h.cluster.put(CONFIG_MAPS, configMap("a", { fixed: "yes" }));
  assert.deepEqual(await calls.count(2, "the reconcile of the fixed spec"), [1, 2]);
});

Deno.test("requeueAfterMs brings the key back after that long", async () => {
  const calls = new Happenings<string>();
  await using h = harness((_object, { key }) => {
    calls.push(key);
    return Promise.resolve(calls.items.length === 1 ? { requeueAfterMs: 30_000 } : {});
  }, { requeueJitter: 0 });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.start();
  await calls.count(1, "the first reconcile");
  await h.clock.advance(29_999);
  assert.equal(calls.items.length, 1);
  await h.clock.advance(1);
  await calls.count(2, "the requeued reconcile");
});

Deno.test("a change made after the caches synced is reconciled ahead of the initial list, which still converges", async () => {
  const calls = new Happenings<string>();
  const gate = Promise.withResolvers<void>();
  await using h = harness(async (_object, { key }) => {
    calls.push(key);
    if (calls.items.length <= 2) await gate.promise;
    return {};
  });
  const names = Array.from({ length: 40 }, (_, i) => `k${String(i).padStart(2, "0")}`);
  for (const name of names) h.cluster.put(CONFIG_MAPS, configMap(name));
  h.start();
  await calls.count(2, "both workers busy with the initial list");
  h.cluster.put(CONFIG_MAPS, configMap("k39", { edited: "yes" }));
  h.cluster.put(CONFIG_MAPS, configMap("new"));
  try {
    await settled("both changes seen", () => h.controller.store.has("ns/new"));
  } finally {
    gate.resolve();
  }
  await calls.count(41, "every key reconciled, the edited one once");
  // The runner holds the one key it took before a worker was free; the fresh keys come next.
  const next = calls.items.slice(2, 5);
  assert.ok(next.includes("ns/k39") && next.includes("ns/new"), `next were ${next}`);
  assert.deepEqual(
    new Set(calls.items),
    new Set([...names, "new"].map((n) => `ns/${n}`)),
    "and every key of the initial list after them",
  );
});

Deno.test("a change of an owned child reconciles its controller owner", async () => {
  const calls = new Happenings<string>();
  await using h = harness((_object, { key }) => {
    calls.push(key);
    return Promise.resolve({});
  }, { owns: [{ resource: SECRETS }] });
  const owner = h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.start();
  await calls.count(1, "the first reconcile");
  h.cluster.put(SECRETS, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: "a-secret",
      namespace: "ns",
      ownerReferences: [{
        apiVersion: "v1",
        kind: "ConfigMap",
        name: "a",
        uid: owner.metadata!.uid!,
        controller: true,
      }],
    },
  });
  assert.deepEqual(await calls.count(2, "the owner's reconcile"), ["ns/a", "ns/a"]);
});

Deno.test("a Node relabelled from one site to another reconciles the site it left as well as the one it joined", async () => {
  const calls = new Happenings<string>();
  await using h = harness((_object, { key }) => {
    calls.push(key);
    return Promise.resolve({});
  }, {
    // Sites are ConfigMaps here; a Node belongs to the site its `site` label names.
    watches: [{
      resource: NODES,
      map: (node) => node.metadata?.labels?.site ? [`ns/${node.metadata.labels.site}`] : [],
    }],
  });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.cluster.put(CONFIG_MAPS, configMap("b"));
  const node = await h.cluster.node("n1", { labels: { site: "a" } });
  h.start();
  await until(calls, "both sites' first reconciles", () => calls.items.length >= 2);
  await settled(
    "the initial reconciles",
    () => h.controller.queue.len + h.controller.inFlight === 0,
  );
  const before = calls.items.length;
  await node.setLabels({ site: "b" });
  await until(
    calls,
    "the reconciles of the relabelled Node's old and new site",
    () => ["ns/a", "ns/b"].every((site) => calls.items.slice(before).includes(site)),
  );
});

Deno.test("an owned kind is cached lean by default, labels kept, and whole with a transform of its own", async () => {
  const seen = new Happenings<KubeObject | undefined>();
  for (const transform of [undefined, stripTransform]) {
    await using h = harness((_object, { cache }) => {
      seen.push(cache(SECRETS).get("ns/a-secret"));
      return Promise.resolve({});
    }, { owns: [{ resource: SECRETS, ...(transform && { transform }) }] });
    h.cluster.put(SECRETS, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "a-secret", namespace: "ns", labels: { app: "a" } },
      data: { password: "c2VjcmV0" },
    });
    h.cluster.put(CONFIG_MAPS, configMap("a"));
    h.start();
    await seen.count(transform ? 2 : 1, "the reconcile");
  }
  const [lean, whole] = seen.items;
  assert.equal(lean?.metadata?.name, "a-secret");
  assert.equal(lean?.data, undefined, "the default cache keeps no data");
  assert.deepEqual(lean?.metadata?.labels, { app: "a" }, "a map by label needs no transform");
  assert.deepEqual(whole?.data, { password: "c2VjcmV0" });
});

Deno.test("context.children writes a child once and skips it while it is as last applied", async () => {
  const calls = new Happenings<string>();
  await using h = harness(async (object, { key, children, signal }) => {
    await children.apply(SECRETS, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: `${object.metadata!.name}-secret`,
        namespace: "ns",
        ownerReferences: [{
          apiVersion: "v1",
          kind: "ConfigMap",
          name: object.metadata!.name!,
          uid: object.metadata!.uid!,
          controller: true,
        }],
      },
    }, signal);
    calls.push(key);
    return {};
  }, {
    owns: [{ resource: SECRETS }],
    applyChild: (resource, desired) => h.cluster.apply(resource, desired, { fieldManager: "test" }),
  });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.start();
  // The apply changes the child, whose event reconciles the owner a second time.
  await calls.count(2, "the reconcile the child's creation triggers");
  assert.deepEqual(h.cluster.applies, ["secrets ns/a-secret"]);
});

Deno.test("context.children and context.cache refuse what the controller does not declare", async () => {
  const errors = new Happenings<string>();
  await using h = harness((object, { cache, children, signal }) => {
    for (
      const attempt of [() => cache(DEPLOYMENTS), () => children.apply(SECRETS, object, signal)]
    ) {
      try {
        attempt();
      } catch (error) {
        errors.push(error instanceof TypeError ? error.message : String(error));
      }
    }
    return Promise.resolve({});
  });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.start();
  const [noCache, notOwned] = await errors.count(2, "the refusals");
  assert.match(noCache!, /has no cache of deployments: add it to 'owns' or 'watches'/);
  assert.match(notOwned!, /cannot apply secrets: add it to 'owns'/);
});

Deno.test("a controller stops taking keys when its signal aborts and drains what runs", async () => {
  const started = new Happenings<string>();
  const release = Promise.withResolvers<void>();
  const h = harness(async (_object, { key }) => {
    started.push(key);
    await release.promise;
    return {};
  });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.start();
  await started.count(1, "the reconcile");
  assert.equal(h.controller.inFlight, 1);
  const stopping = h[Symbol.asyncDispose]();
  release.resolve();
  await stopping;
  assert.equal(h.controller.inFlight, 0);
});

Deno.test("a reconcile past its timeout is aborted on the injected clock", async () => {
  const aborted = new Happenings<string>();
  await using h = harness((_object, { key, signal }) =>
    new Promise((_resolve, reject) => {
      signal.addEventListener("abort", () => {
        aborted.push(key);
        reject(signal.reason);
      });
    }), { reconcileTimeoutMs: 5_000 });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.start();
  await h.clock.advance(4_999);
  assert.equal(aborted.items.length, 0);
  await h.clock.advance(1);
  await aborted.count(1, "the aborted reconcile");
});

Deno.test("a watch's map finds primaries by a declared index, evicted ones too, so a source edit reconciles every one", async () => {
  const clock = new FakeClock();
  const cluster = new MemoryCluster({ namespaces: ["ns"] });
  const caches = new Caches({ client: cluster, clock, watcherOptions: { streamingList: "off" } });
  const reconciled = new Happenings<string>();
  const controller = new Controller<KubeObject & { data?: Record<string, string> }>({
    name: "mirrors",
    resource: CONFIG_MAPS,
    indexes: { bySource: (m) => m.data?.source ? [`ns/${m.data.source}`] : [] },
    watches: [{
      resource: SECRETS,
      map: (secret, primary) => primary.byIndex("bySource", `ns/${secret.metadata?.name}`),
    }],
    reconcile: (_object, { key }) => {
      reconciled.push(key);
      return Promise.resolve({});
    },
  }, { client: cluster, semaphore: new Semaphore(2), caches, clock, budget: { maxObjects: 1 } });
  for (const name of ["m1", "m2", "m3"]) {
    cluster.put(CONFIG_MAPS, { ...configMap(name), data: { source: "src" } });
  }
  cluster.put(CONFIG_MAPS, { ...configMap("other"), data: { source: "elsewhere" } });
  const secret = { apiVersion: "v1", kind: "Secret", metadata: { name: "src", namespace: "ns" } };
  cluster.put(SECRETS, secret);
  const stop = new AbortController();
  const running = Promise.all([caches.run(stop.signal), controller.run(stop.signal)]);
  try {
    await reconciled.count(4, "the initial reconciles");
    const evicted = ["ns/m1", "ns/m2", "ns/m3"].filter((k) =>
      controller.store.get(k) === undefined
    );
    assert.ok(evicted.length >= 2, `a budget of one object evicted ${evicted}`);
    cluster.put(SECRETS, { ...secret, data: { k: "dg==" } });
    const after = await reconciled.count(7, "the mirrors of the edited source");
    assert.deepEqual(after.slice(4).sort(), ["ns/m1", "ns/m2", "ns/m3"]);
  } finally {
    stop.abort();
    await running;
  }
});

Deno.test("a controller caching one kind twice among owns and watches is refused, with what to write", () => {
  const cluster = new MemoryCluster();
  assert.throws(
    () =>
      new Controller({
        name: "mirrors",
        resource: SECRETS,
        owns: [{ resource: CONFIG_MAPS }],
        watches: [{ resource: CONFIG_MAPS, map: () => [] }],
        reconcile: () => Promise.resolve({}),
      }, { client: cluster, semaphore: new Semaphore(1) }),
    /controller 'mirrors': watches\[0\] caches configmaps again after owns\[0\].*keep one entry/,
  );
});
