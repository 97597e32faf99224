/**
 * The controller against the real control plane of `hack/with_cluster.ts`,
 * over a custom resource installed by the test (Gadget, with a status
 * subresource) and over ConfigMaps: level-triggered reconciles with the
 * generation predicate, owned children mapped to their owner, one reconcile
 * per key at a time, retries with backoff and terminal errors, resuming after
 * the connection to the API server is cut, relisting after 410 Gone, and a
 * watched Node's update mapped from its old and its new labels.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/controller_test.ts
 */
import assert from "node:assert/strict";
import type { KubeClient } from "../../lib/kube/client.ts";
import { CONFIG_MAPS, DEPLOYMENTS, NODES, SERVICES } from "../../lib/kube/resources.ts";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";
import { Caches } from "../../lib/runtime/cache/caches.ts";
import {
  type Action,
  type ControllerSpec,
  type ReconcileContext,
  TerminalError,
} from "../../lib/runtime/controller/spec.ts";
import { Controller, type ControllerClient } from "../../lib/runtime/controller/controller.ts";
import {
  type ControllerMetrics,
  type ReconcileResult,
  RuntimeMetrics,
} from "../../lib/runtime/metrics/metrics.ts";
import {
  ExponentialRateLimiter,
  type RateLimiter,
} from "../../lib/runtime/scheduling/rate_limiter.ts";
import { Semaphore } from "../../lib/async/semaphore.ts";
import { testCluster } from "../../lib/testing/cluster.ts";
import { compactEtcd } from "../_support/cluster.ts";
import { getOrUndefined, waitFor } from "../_support/kube.ts";
import {
  controllerRef,
  type Gadget,
  gadget,
  GADGETS,
  gadgetScope,
  keyOf,
  sleep,
  until,
} from "./_gadgets.ts";
import { ReconcileLog } from "./_reconciles.ts";
import { RecordingClient } from "./_recording_client.ts";
import { apiServerUrl, clientThrough, TcpProxy } from "./_tcp_proxy.ts";

const FINALIZER = "test.kinglet.dev/cleanup";

/** Every result the controller reports: one per key it processed, bar terminal skips. */
class Outcomes implements ControllerMetrics {
  readonly results: ReconcileResult[] = [];
  reconciled(result: ReconcileResult): void {
    this.results.push(result);
  }
  activeWorkers(): void {}
}

interface Options {
  client: ControllerClient;
  namespace: string;
  rateLimiter?: RateLimiter<string>;
  outcomes?: Outcomes;
}

/** Runs `spec` over caches of `namespace` until disposed. */
function start<T extends KubeObject>(spec: ControllerSpec<T>, options: Options) {
  const { client, namespace } = options;
  const caches = new Caches({
    client,
    namespace,
    backoff: { initialMs: 100, maxMs: 1_000 },
  });
  const controller = new Controller(spec, {
    client,
    semaphore: new Semaphore(4),
    caches,
    ...(options.rateLimiter && { rateLimiter: options.rateLimiter }),
    metrics: {
      queue: new RuntimeMetrics().queue(spec.name),
      controller: options.outcomes ?? new Outcomes(),
    },
  });
  let lists = 0;
  controller.store.subscribe((change) => {
    if (change.type === "replace") lists++;
  });
  const stop = new AbortController();
  const cachesDone = caches.run(stop.signal);
  let ended = false;
  const running = controller.run(stop.signal).finally(() => ended = true);
  return {
    controller,
    /** Complete lists the primary's store took in: 1 after the first sync. */
    lists: () => lists,
    /** Whether {@link Controller.run} returned (or threw) before being stopped. */
    ended: () => ended,
    async [Symbol.asyncDispose]() {
      stop.abort();
      await running;
      await cachesDone;
    },
  };
}

function statusPatch(client: KubeClient, namespace: string, name: string, status: object) {
  return client.patch(GADGETS, name, { status }, {
    type: "merge",
    namespace,
    subresource: "status",
  });
}

function specPatch(client: KubeClient, namespace: string, name: string, spec: object) {
  return client.patch<Gadget>(GADGETS, name, { spec }, { type: "merge", namespace });
}

/** Writes `observedGeneration` to status; removes the finalizer of an object being deleted. */
async function reconcileGadget(
  client: KubeClient,
  object: Gadget,
  context: ReconcileContext,
): Promise<Action> {
  const { name = "", namespace = "", finalizers = [] } = object.metadata ?? {};
  if (object.metadata?.deletionTimestamp) {
    if (finalizers.includes(FINALIZER)) {
      await client.patch(GADGETS, name, [
        { op: "test", path: "/metadata/finalizers", value: finalizers },
        {
          op: "replace",
          path: "/metadata/finalizers",
          value: finalizers.filter((f) => f !== FINALIZER),
        },
      ], { type: "json", namespace, signal: context.signal });
    }
    return {};
  }
  await client.patch(GADGETS, name, {
    status: { observedGeneration: object.metadata?.generation },
  }, { type: "merge", namespace, subresource: "status", signal: context.signal });
  return {};
}

Deno.test("a controller reconciles each new object and spec change once, and no status-only change", async () => {
  await using s = await gadgetScope("ctl-level");
  const { client, namespace } = s;
  const key = (name: string) => keyOf(namespace, name);
  const log = new ReconcileLog();
  const outcomes = new Outcomes();
  await using c = start<Gadget>({
    name: "gadgets",
    resource: GADGETS,
    reconcile: log.wrap("gadgets", (g, context) => reconcileGadget(client, g, context)),
  }, { client, namespace, outcomes });

  await client.create(GADGETS, gadget("g1", { size: 1 }), { namespace });
  await client.create(GADGETS, gadget("g2", { size: 1 }), { namespace });
  await client.create(GADGETS, gadget("g3", { size: 1 }, [FINALIZER]), { namespace });
  await until("g1, g2 and g3 reconciled", () => ["g1", "g2", "g3"].every((n) => log.count(key(n))));
  await waitFor("observedGeneration 1 on every gadget", async () => {
    const list = await client.list<Gadget>(GADGETS, { namespace });
    return list.items.length === 3 && list.items.every((g) => g.status?.observedGeneration === 1);
  });
  await log.settled();
  // Each reconcile wrote status: none of those writes may come back as a reconcile.
  assert.deepEqual(["g1", "g2", "g3"].map((n) => log.count(key(n))), [1, 1, 1]);

  const bumped = await specPatch(client, namespace, "g1", { size: 2 });
  assert.equal(bumped.metadata?.generation, 2);
  await until("g1 reconciled again", () => log.count(key("g1")) === 2);
  assert.equal(log.of(key("g1"))[1]?.generation, 2);

  const statusOnly = await statusPatch(client, namespace, "g2", {
    note: "written by someone else",
  });
  const relabelled = await client.patch<Gadget>(GADGETS, "g2", {
    metadata: { labels: { touched: "yes" } },
  }, { type: "merge", namespace });
  assert.equal(relabelled.metadata?.generation, statusOnly.metadata?.generation);
  await until(
    "the controller's cache to see both writes to g2",
    () =>
      c.controller.store.entry(key("g2"))?.resourceVersion === relabelled.metadata?.resourceVersion,
  );
  await log.settled();
  assert.equal(log.count(key("g2")), 1, "a status or metadata change triggered a reconcile");

  const processedBefore = outcomes.results.length;
  const callsBefore = log.calls.length;
  await client.delete(GADGETS, "g2", { namespace });
  await client.delete(GADGETS, "g3", { namespace });
  await until("g3 reconciled while being deleted", () => log.of(key("g3")).some((c) => c.deleting));
  await until(
    "g2 and g3 gone from the cache",
    () => !c.controller.store.has(key("g2")) && !c.controller.store.has(key("g3")),
  );
  await waitFor(
    "g3 to be deleted",
    async () => !(await getOrUndefined(client, GADGETS, "g3", namespace)),
  );
  await log.settled();
  // g2 and g3 were each processed once more after they vanished, without a reconcile call.
  const processed = outcomes.results.length - processedBefore;
  const calls = log.calls.length - callsBefore;
  assert.equal(calls, 1, "only g3's deletion (its finalizer) needed a reconcile");
  assert.equal(processed - calls, 2, "the deleted keys were not each processed and found gone");
  assert.deepEqual(log.overlaps, []);
  assert.ok(log.calls.every((call) => call.outcome === "ok"));
});

Deno.test("editing or deleting an owned child reconciles its owner, and only its owner", async () => {
  await using s = await gadgetScope("ctl-owns");
  const { client, namespace } = s;
  const key = (name: string) => keyOf(namespace, name);
  const log = new ReconcileLog();
  await using _c = start<Gadget>({
    name: "gadgets",
    resource: GADGETS,
    owns: [{ resource: CONFIG_MAPS }],
    reconcile: log.wrap("gadgets", async (g, context) => {
      await client.apply(CONFIG_MAPS, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: `${g.metadata?.name}-child`,
          namespace: g.metadata?.namespace,
          ownerReferences: [controllerRef(g)],
        },
        data: { size: String(g.spec?.size ?? 0) },
      }, { fieldManager: "gadget-test", force: true, signal: context.signal });
      return {};
    }),
  }, { client, namespace });

  for (const name of ["a", "b"]) {
    await client.create(GADGETS, gadget(name, { size: 1 }), { namespace });
  }
  await waitFor("both children", async () => {
    const list = await client.list(CONFIG_MAPS, { namespace });
    return ["a-child", "b-child"].every((n) => list.items.some((cm) => cm.metadata?.name === n));
  });
  await log.settled();
  const a = log.count(key("a"));
  const b = log.count(key("b"));
  assert.ok(a >= 1 && b >= 1);

  await client.patch(CONFIG_MAPS, "a-child", { data: { extra: "edited" } }, {
    type: "merge",
    namespace,
  });
  await until("a reconciled after its child was edited", () => log.count(key("a")) === a + 1);
  await log.settled();
  assert.equal(log.count(key("a")), a + 1);
  assert.equal(log.count(key("b")), b, "b was reconciled for a's child");

  await client.delete(CONFIG_MAPS, "b-child", { namespace });
  await until("b reconciled after its child was deleted", () => log.count(key("b")) > b);
  await waitFor(
    "b's child to be recreated",
    () => getOrUndefined(client, CONFIG_MAPS, "b-child", namespace),
  );
  await log.settled();
  assert.equal(log.count(key("a")), a + 1, "a was reconciled for b's child");

  const before = log.calls.length;
  await client.create(CONFIG_MAPS, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "orphan", namespace },
    data: { k: "v" },
  });
  await client.patch(CONFIG_MAPS, "orphan", { data: { k: "w" } }, { type: "merge", namespace });
  await sleep(500);
  await log.settled();
  assert.equal(log.calls.length, before, "a ConfigMap without an owner reconciled something");
  assert.deepEqual(log.overlaps, []);
});

Deno.test("a Node relabelled from one site to another reconciles the site it left as well as the one it joined", async () => {
  await using cluster = await testCluster({ namespacePrefix: "ctl-relabel" });
  const { client, namespace } = cluster;
  const key = (name: string) => keyOf(namespace, name);
  // Sites are ConfigMaps of the test's namespace; a Node belongs to the one its label names.
  const SITE = "test.kinglet.dev/site";
  const log = new ReconcileLog();
  await using _c = start<KubeObject>({
    name: "sites",
    resource: CONFIG_MAPS,
    watches: [{
      resource: NODES,
      map: (node) => {
        const site = node.metadata?.labels?.[SITE];
        return site?.startsWith(`${namespace}.`) ? [key(site.slice(namespace.length + 1))] : [];
      },
    }],
    reconcile: log.wrap("sites", () => Promise.resolve({})),
  }, { client, namespace });
  for (const name of ["a", "b"]) {
    await client.create(CONFIG_MAPS, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name },
    }, { namespace });
  }
  const node = await cluster.node("n1", { labels: { [SITE]: `${namespace}.a` } });
  await until("both sites reconciled", () => log.count(key("a")) > 0 && log.count(key("b")) > 0);
  await log.settled();
  const [a, b] = [log.count(key("a")), log.count(key("b"))];

  await node.setLabels({ [SITE]: `${namespace}.b` });
  await until("the site the Node joined reconciled", () => log.count(key("b")) > b);
  await until("the site the Node left reconciled", () => log.count(key("a")) > a);
  assert.deepEqual(log.overlaps, []);
});

Deno.test("a key is never reconciled twice at once, and a change during its reconcile runs it once more", async () => {
  await using s = await gadgetScope("ctl-once");
  const { client, namespace } = s;
  const key = (name: string) => keyOf(namespace, name);
  const log = new ReconcileLog();
  const gate = Promise.withResolvers<void>();
  const blocked = Promise.withResolvers<void>();
  await using c = start<Gadget>({
    name: "gadgets",
    resource: GADGETS,
    reconcile: log.wrap("gadgets", async (g) => {
      if (g.metadata?.name === "slow" && log.count(key("slow")) === 1) {
        blocked.resolve();
        await gate.promise;
      } else {
        await sleep(300);
      }
      return {};
    }),
  }, { client, namespace });

  await client.create(GADGETS, gadget("slow", { size: 1 }), { namespace });
  await blocked.promise;
  const others = ["o1", "o2", "o3", "o4", "o5", "o6"];
  for (const name of others) await client.create(GADGETS, gadget(name), { namespace });
  for (const size of [2, 3, 4]) await specPatch(client, namespace, "slow", { size });
  await until(
    "the cache to see generation 4",
    () => c.controller.store.entry(key("slow"))?.generation === 4,
  );
  await until(
    "the others reconciled while slow is stuck",
    () => others.every((n) => log.count(key(n)) === 1),
  );
  assert.equal(
    log.count(key("slow")),
    1,
    "slow was reconciled again while its first reconcile ran",
  );

  gate.resolve();
  await until("slow reconciled once more", () => log.count(key("slow")) === 2);
  await log.settled();
  assert.equal(log.count(key("slow")), 2, "the three changes made meanwhile were not coalesced");
  assert.equal(log.of(key("slow"))[1]?.generation, 4);
  assert.ok(log.of(key("slow"))[1]!.startedAt >= log.of(key("slow"))[0]!.endedAt!);
  assert.deepEqual(log.overlaps, []);
  assert.ok(log.maxRunning >= 2, `reconciles never ran in parallel (max ${log.maxRunning})`);
});

Deno.test("a failed reconcile is retried with backoff, a terminal one waits for a new generation, and neither stops the others", async () => {
  await using s = await gadgetScope("ctl-errors");
  const { client, namespace } = s;
  const key = (name: string) => keyOf(namespace, name);
  const log = new ReconcileLog();
  await using c = start<Gadget>({
    name: "gadgets",
    resource: GADGETS,
    owns: [{ resource: CONFIG_MAPS }],
    // The delays below are the limiter's own; the retry jitter has tests of its own.
    requeueJitter: 0,
    reconcile: log.wrap("gadgets", (g) => {
      const name = g.metadata?.name;
      if (name === "broken") throw new Error("broken for good");
      if (name === "flaky" && log.count(key("flaky")) <= 3) {
        return Promise.reject(new Error("flaky"));
      }
      if ((g.spec?.size ?? 0) < 0) {
        throw new TerminalError(`spec.size must not be negative, got ${g.spec?.size}`);
      }
      return Promise.resolve({});
    }),
  }, {
    client,
    namespace,
    rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 100 }),
  });

  await client.create(GADGETS, gadget("broken"), { namespace });
  await client.create(GADGETS, gadget("flaky"), { namespace });
  const invalid = await client.create<Gadget>(GADGETS, gadget("invalid", { size: -1 }), {
    namespace,
  });
  await client.create(CONFIG_MAPS, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "invalid-child", namespace, ownerReferences: [controllerRef(invalid)] },
    data: { v: "0" },
  });

  await until("flaky to succeed on its fourth attempt", () => log.count(key("flaky")) === 4);
  const flaky = log.of(key("flaky"));
  assert.deepEqual(flaky.map((call) => call.outcome), ["threw", "threw", "threw", "ok"]);
  const gaps = flaky.slice(1).map((call, i) => call.startedAt - flaky[i]!.endedAt!);
  [100, 200, 400].forEach((delay, i) => {
    assert.ok(gaps[i]! >= delay - 5, `retry ${i + 1} came after ${gaps[i]} ms, before ${delay} ms`);
  });
  assert.ok(gaps[2]! < 400 + 1_000, `retry 3 came after ${gaps[2]} ms`);

  await until("broken to have failed three times", () => log.count(key("broken")) >= 3);
  await client.create(GADGETS, gadget("late"), { namespace });
  await until(
    "a gadget created meanwhile to be reconciled",
    () => log.count(key("late")) === 1,
    5_000,
  );

  // Its child changing twice must not retry a terminal failure: only a new generation does.
  const children = c.controller.reflectors.find((r) => r !== c.controller.reflectors[0])!;
  for (const v of ["1", "2"]) {
    const child = await client.patch(CONFIG_MAPS, "invalid-child", { data: { v } }, {
      type: "merge",
      namespace,
    });
    await until(
      `the cache to see the child at v${v}`,
      () =>
        children.store.entry(key("invalid-child"))?.resourceVersion ===
          child.metadata?.resourceVersion,
    );
    await sleep(500);
  }
  assert.equal(log.count(key("flaky")), 4, "flaky was retried after it succeeded");
  assert.equal(log.count(key("invalid")), 1, "the terminal failure was retried");
  assert.equal(log.of(key("invalid"))[0]?.outcome, "threw");

  await specPatch(client, namespace, "invalid", { size: 1 });
  await until("invalid reconciled at its new generation", () => log.count(key("invalid")) === 2);
  assert.equal(log.of(key("invalid"))[1]?.outcome, "ok");
  assert.equal(log.of(key("invalid"))[1]?.generation, 2);

  assert.ok(log.count(key("broken")) >= 4, "broken stopped being retried");
  assert.ok(log.of(key("broken")).every((call) => call.outcome === "threw"));
  assert.equal(c.ended(), false, "the controller stopped");
  assert.deepEqual(log.overlaps, []);
});

/** A controller of `resource` that reads through `proxy` and only records its reconciles. */
async function throughProxy(resource: Resource, namespace: string, log: ReconcileLog) {
  const proxy = new TcpProxy(await apiServerUrl());
  const inner = await clientThrough(proxy);
  const client = new RecordingClient(inner);
  const running = start({
    name: resource.plural,
    resource,
    reconcile: log.wrap(resource.plural, () => Promise.resolve({})),
  }, { client, namespace });
  return {
    ...running,
    proxy,
    client,
    async [Symbol.asyncDispose]() {
      await running[Symbol.asyncDispose]();
      inner.close();
      await proxy.close();
    },
  };
}

Deno.test("after its connection is cut, a controller sees every change made meanwhile, without relisting", async () => {
  await using s = await gadgetScope("ctl-cut");
  const { client, namespace } = s;
  const key = (name: string) => keyOf(namespace, name);
  for (const name of ["a", "b", "c", "d"]) {
    await client.create(GADGETS, gadget(name, { size: 1 }), { namespace });
  }
  const log = new ReconcileLog();
  await using t = await throughProxy(GADGETS, namespace, log);
  await until(
    "a, b, c and d reconciled",
    () => ["a", "b", "c", "d"].every((n) => log.count(key(n))),
  );
  await log.settled();

  const failures = t.client.watchFailures.length;
  t.proxy.hold();
  t.proxy.cut();
  await until("the watch to fail", () => t.client.watchFailures.length === failures + 1);
  await until("the watcher to try again", () => t.proxy.waiting > 0);
  const freshness = t.controller.reflectors[0]!.freshness;
  const watchesBefore = t.client.watches.length;

  await client.create(GADGETS, gadget("e", { size: 1 }), { namespace });
  await specPatch(client, namespace, "a", { size: 2 });
  await statusPatch(client, namespace, "b", { note: "status only" });
  await client.delete(GADGETS, "c", { namespace });
  await sleep(1_000);
  assert.equal(log.count(key("e")), 0, "the controller was not cut off");
  assert.equal(t.controller.store.has(key("c")), true, "the controller was not cut off");

  t.proxy.release();
  await until("e reconciled", () => log.count(key("e")) === 1);
  await until("a reconciled at generation 2", () => log.count(key("a")) === 2);
  await until("c gone from the cache", () => !t.controller.store.has(key("c")));
  await log.settled();

  assert.deepEqual(["a", "b", "c", "d", "e"].map((n) => log.count(key(n))), [2, 1, 1, 1, 1]);
  assert.equal(log.of(key("a"))[1]?.generation, 2);
  assert.equal(t.client.watchFailures[failures]?.status, undefined, "not a transport failure");
  assert.equal(t.lists(), 1, "the store took in a second complete list");
  assert.equal(t.client.fullLists("gadgets"), 1, "the controller relisted");
  const resumed = t.client.watches[watchesBefore - 1]!;
  assert.equal(resumed.options.resourceVersion, freshness.resourceVersion);
  assert.equal(resumed.options.sendInitialEvents, undefined);
  assert.ok(t.controller.reflectors[0]!.freshness.restarts >= 1);
  assert.deepEqual(log.overlaps, []);
});

Deno.test("after 410 Gone a ConfigMap controller relists, converges, and leaves unchanged objects alone", async () => {
  await using s = await gadgetScope("ctl-gone");
  const { client, namespace } = s;
  const key = (name: string) => keyOf(namespace, name);
  const names = ["cm-0", "cm-1", "cm-2", "cm-3", "cm-4"];
  const configMap = (name: string, v: string): KubeObject => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace },
    data: { v },
  });
  for (const name of names) await client.create(CONFIG_MAPS, configMap(name, "1"));
  const log = new ReconcileLog();
  await using t = await throughProxy(CONFIG_MAPS, namespace, log);
  await until("every ConfigMap reconciled", () => names.every((n) => log.count(key(n)) === 1));
  await log.settled();
  const present = t.controller.store.keys();

  const failures = t.client.watchFailures.length;
  t.proxy.hold();
  t.proxy.cut();
  await until("the watch to fail", () => t.client.watchFailures.length === failures + 1);
  const listedAt = Number(t.controller.reflectors[0]!.freshness.resourceVersion);

  await client.patch(CONFIG_MAPS, "cm-1", { data: { v: "2" } }, { type: "merge", namespace });
  await client.create(CONFIG_MAPS, configMap("cm-new", "1"));
  await client.delete(CONFIG_MAPS, "cm-2", { namespace });
  const revision = await compactEtcd();
  assert.ok(revision > listedAt + 2, `compacted to ${revision}, the watch was at ${listedAt}`);
  const listsBefore = t.client.fullLists("configmaps");
  t.proxy.release();

  await until("a relist", () => t.lists() === 2);
  await until("cm-1 reconciled again", () => log.count(key("cm-1")) === 2);
  await until("cm-new reconciled", () => log.count(key("cm-new")) === 1);
  await log.settled();

  assert.ok(
    t.client.watchFailures.some((f) => f.plural === "configmaps" && f.status === 410),
    `no 410 Gone: ${JSON.stringify(t.client.watchFailures)}`,
  );
  assert.equal(t.client.fullLists("configmaps"), listsBefore + 1);
  assert.equal(t.controller.store.has(key("cm-2")), false);
  assert.equal(log.count(key("cm-2")), 1, "the deleted cm-2 was reconciled");
  for (const k of present.filter((k) => k !== key("cm-1") && k !== key("cm-2"))) {
    assert.equal(log.count(k), 1, `${k} did not change but was reconciled after the relist`);
  }
  assert.deepEqual(log.overlaps, []);
});

/** A Deployment and a Service for `g`, with fields the API server defaults around them. */
function gadgetChildren(g: Gadget): [KubeObject, KubeObject] {
  const name = g.metadata?.name ?? "";
  const metadata = {
    name,
    namespace: g.metadata?.namespace,
    labels: { app: name, tier: "web" },
    ownerReferences: [controllerRef(g)],
  };
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata,
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [{
            name: "app",
            image: `registry.example/app:${g.spec?.size ?? 0}`,
            ports: [{ name: "http", containerPort: 8080 }],
            env: [{ name: "A", value: "1" }, { name: "B", value: "2" }],
          }],
        },
      },
    },
  };
  const service = {
    apiVersion: "v1",
    kind: "Service",
    metadata,
    spec: { selector: { app: name }, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
  };
  return [deployment, service];
}

Deno.test("a restarted controller writes no child it finds as it left it, and every child that changed", async () => {
  await using s = await gadgetScope("ctl-restart");
  const { client, namespace } = s;
  const applied: string[] = [];
  // Every apply the controllers make, counted on the scope's own client.
  const apply = client.apply.bind(client);
  client.apply = (resource, object, options) => {
    applied.push(`${resource.plural}/${object.metadata?.name}`);
    return apply(resource, object, options);
  };
  const log = new ReconcileLog();
  const spec: ControllerSpec<Gadget> = {
    name: "gadget-children",
    resource: GADGETS,
    owns: [{ resource: DEPLOYMENTS }, { resource: SERVICES }],
    reconcile: log.wrap("gadgets", async (g, { children, signal }) => {
      const [deployment, service] = gadgetChildren(g);
      await children.apply(DEPLOYMENTS, deployment, signal);
      await children.apply(SERVICES, service, signal);
      return {};
    }),
  };
  const names = ["a", "b", "c", "d", "e"];
  {
    await using _first = start(spec, { client, namespace });
    for (const name of names) {
      await client.create(GADGETS, gadget(name, { size: 1 }), { namespace });
    }
    await waitFor("every child", async () => {
      const list = await client.list(SERVICES, { namespace });
      return names.every((n) => list.items.some((svc) => svc.metadata?.name === n));
    });
    await log.settled();
  }
  assert.ok(applied.length >= names.length * 2);
  await waitFor("the Deployments' revision annotation", async () => {
    const list = await client.list(DEPLOYMENTS, { namespace });
    return list.items.length === names.length &&
      list.items.every((d) => d.metadata?.annotations?.["deployment.kubernetes.io/revision"]);
  });

  // While the controller is down: a user takes a field over, another removes
  // a label the controller set, another relabels a child with a label of
  // their own (not the controller's business), and one gadget's spec moves.
  await client.patch(DEPLOYMENTS, "b", {
    spec: {
      template: { spec: { containers: [{ name: "app", image: "registry.example/hand:9" }] } },
    },
  }, { type: "strategic", namespace });
  await client.patch(SERVICES, "c", [{ op: "remove", path: "/metadata/labels/tier" }], {
    type: "json",
    namespace,
  });
  await client.patch(SERVICES, "d", { metadata: { labels: { team: "blue" } } }, {
    type: "merge",
    namespace,
  });
  await specPatch(client, namespace, "e", { size: 2 });
  applied.length = 0;
  const reconciled = log.calls.length;

  {
    await using _second = start(spec, { client, namespace });
    await until(
      "every gadget reconciled after the restart",
      () => new Set(log.calls.slice(reconciled).map((c) => c.key)).size === names.length,
    );
    await log.settled();
  }
  assert.deepEqual(applied.toSorted(), ["deployments/b", "deployments/e", "services/c"]);
  const b = await client.get(DEPLOYMENTS, "b", { namespace }) as {
    spec: { template: { spec: { containers: { image: string }[] } } };
  };
  assert.equal(b.spec.template.spec.containers[0]!.image, "registry.example/app:1");
  const c = await client.get(SERVICES, "c", { namespace });
  assert.equal(c.metadata?.labels?.tier, "web");
  const d = await client.get(SERVICES, "d", { namespace });
  assert.equal(d.metadata?.labels?.team, "blue");
});
