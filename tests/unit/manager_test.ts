import assert from "node:assert/strict";
import { FakeClock, flushMicrotasks } from "../../lib/async/mod.ts";
import {
  CONFIG_MAPS,
  EVENTS,
  type KubeObject,
  LEASES,
  type ListOptions,
  type Resource,
  SECRETS,
} from "../../lib/kube/mod.ts";
import {
  type LeaderElection,
  type LeaseElectionOptions,
  Manager,
} from "../../lib/runtime/manager/mod.ts";
import type { KubeEvent } from "../../lib/runtime/events/mod.ts";
import type { Lease } from "../../lib/runtime/leader/mod.ts";
import { managerRoutes } from "../../lib/runtime/manager/_routes.ts";
import { managerParts } from "../../lib/runtime/manager/_parts.ts";
import { managerRunnables } from "../../lib/runtime/manager/_runnables.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";
import { Happenings } from "./_until.ts";

const configMap = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns" },
});

function manager(
  cluster: MemoryCluster,
  leaderElection?: LeaderElection | LeaseElectionOptions,
  standby?: "cold" | "warm",
) {
  const reconciled = new Happenings<string>();
  const m = new Manager({
    client: cluster,
    clock: new FakeClock(),
    metricsAddress: "0",
    healthAddress: "0",
    watcherOptions: { streamingList: "off" },
    ...(leaderElection && { leaderElection }),
    ...(standby && { standby }),
  });
  const controller = m.add({
    name: "configmaps",
    resource: CONFIG_MAPS,
    reconcile: (_object, { key }) => {
      reconciled.push(key);
      return Promise.resolve({});
    },
  });
  return { manager: m, controller, reconciled };
}

Deno.test("the manager is ready only once its caches have synced", async () => {
  const cluster = new MemoryCluster();
  cluster.put(CONFIG_MAPS, configMap("a"));
  const { manager: m, controller, reconciled } = manager(cluster);
  assert.deepEqual(m.readiness(), ["starting"]);
  const stop = new AbortController();
  const outcome = m.run(stop.signal);
  await controller.synced;
  await flushMicrotasks();
  assert.deepEqual(m.readiness(), []);
  await reconciled.count(1, "the reconcile");
  stop.abort();
  assert.equal(await outcome, "stopped");
  assert.deepEqual(m.readiness(), ["stopping"]);
});

Deno.test("the manager's /debug/cache summary names each cache and never holds contents", async () => {
  const cluster = new MemoryCluster();
  cluster.put(CONFIG_MAPS, { ...configMap("a"), data: { password: "hunter2" } });
  const { manager: m, controller } = manager(cluster);
  const stop = new AbortController();
  const outcome = m.run(stop.signal);
  await controller.synced;
  const summary = m.debugCache() as {
    phase: string;
    controllers: { name: string; queueDepth: number }[];
    caches: Record<string, { keys: number; synced: boolean }>;
  };
  assert.deepEqual(Object.keys(summary.caches), ["configmaps"]);
  assert.equal(summary.caches.configmaps?.keys, 1);
  assert.equal(summary.caches.configmaps?.synced, true);
  assert.deepEqual(summary.controllers.map((c) => c.name), ["configmaps"]);
  assert.ok(!JSON.stringify(summary).includes("hunter2"), "no object contents");
  stop.abort();
  await outcome;
});

Deno.test("losing the leadership stops the reconciles and resolves 'leadership-lost'", async () => {
  const cluster = new MemoryCluster();
  cluster.put(CONFIG_MAPS, configMap("a"));
  const leading = new AbortController();
  const election: LeaderElection = {
    async run(_signal, lead) {
      await lead(leading.signal);
    },
  };
  const { manager: m, reconciled, controller } = manager(cluster, election);
  const outcome = m.run(new AbortController().signal);
  await reconciled.count(1, "the reconcile while leading");
  leading.abort();
  assert.equal(await outcome, "leadership-lost");
  cluster.put(CONFIG_MAPS, configMap("b"));
  await flushMicrotasks();
  assert.deepEqual(reconciled.items, ["ns/a"], "nothing is reconciled once the Lease is lost");
  assert.equal(controller.queue.len, 0);
});

Deno.test("a manager refuses a concurrency that is not a positive integer", () => {
  assert.throws(
    () => new Manager({ client: new MemoryCluster(), maxConcurrentReconciles: 0 }),
    /'maxConcurrentReconciles' must be a positive integer, got 0/,
  );
});

Deno.test("the manager runs maxConcurrentReconciles reconciles at once whenever there is work, and no more", async () => {
  const cluster = new MemoryCluster();
  for (let i = 0; i < 20; i++) cluster.put(CONFIG_MAPS, configMap(`c-${i}`));
  const m = new Manager({
    client: cluster,
    clock: new FakeClock(),
    metricsAddress: "0",
    healthAddress: "0",
    watcherOptions: { streamingList: "off" },
    maxConcurrentReconciles: 8,
  });
  const started = new Happenings<number>();
  const done = new Happenings<string>();
  const held = Promise.withResolvers<void>();
  let running = 0;
  m.add({
    name: "configmaps",
    resource: CONFIG_MAPS,
    reconcile: async (_object, { key }) => {
      started.push(++running);
      try {
        await held.promise;
      } finally {
        running--;
      }
      done.push(key);
      return {};
    },
  });
  const stop = new AbortController();
  const outcome = m.run(stop.signal);
  await started.count(8, "eight reconciles running together");
  await flushMicrotasks();
  assert.equal(running, 8, "the ninth waits for a permit");
  held.resolve();
  await done.count(20, "every ConfigMap reconciled");
  assert.equal(Math.max(...started.items), 8);
  stop.abort();
  await outcome;
});

Deno.test("each controller's max_concurrent_reconciles is what it may really run: its own limit under the global one", () => {
  const m = new Manager({ client: new MemoryCluster(), maxConcurrentReconciles: 4 });
  const reconcile = () => Promise.resolve({});
  m.add({ name: "slow", resource: CONFIG_MAPS, reconcile, maxConcurrentReconciles: 1 });
  m.add({ name: "wide", resource: CONFIG_MAPS, reconcile, maxConcurrentReconciles: 16 });
  m.add({ name: "shared", resource: CONFIG_MAPS, reconcile });
  const text = m.metrics.render();
  const limit = (name: string) =>
    Number(
      new RegExp(
        `^controller_runtime_max_concurrent_reconciles\\{controller="${name}"\\} (\\d+)$`,
        "m",
      )
        .exec(text)?.[1],
    );
  assert.deepEqual([limit("slow"), limit("wide"), limit("shared")], [1, 4, 4]);
});

Deno.test("the manager records every reconcile's Events and flushes them when it stops", async () => {
  const cluster = new MemoryCluster({ namespaces: ["ns"] });
  cluster.put(CONFIG_MAPS, configMap("a"));
  const m = new Manager({
    client: cluster,
    clock: new FakeClock(),
    metricsAddress: "0",
    healthAddress: "0",
    reportingController: "example.com/notes",
    reportingInstance: "node-a",
  });
  const published = new Happenings<string>();
  m.add({
    name: "notes",
    resource: CONFIG_MAPS,
    reconcile: (_object, { key, events }) => {
      events.publish({ type: "Normal", reason: "Noted", action: "Reconcile", note: key });
      published.push(key);
      return Promise.resolve({});
    },
  });
  const stop = new AbortController();
  const outcome = m.run(stop.signal);
  await published.count(1, "the Event's publication");
  stop.abort();
  assert.equal(await outcome, "stopped");
  const events = cluster.objects<KubeEvent>(EVENTS);
  assert.deepEqual(
    events.map((e) => [e.reason, e.regarding?.name, e.reportingController, e.reportingInstance]),
    [["Noted", "a", "example.com/notes", "node-a"]],
  );
  assert.equal(m.events.stats.created, 1);
});

Deno.test("the manager campaigns for a Lease named by plain options, and releases it when it stops", async () => {
  const cluster = new MemoryCluster();
  cluster.put(CONFIG_MAPS, configMap("a"));
  const { manager: m, reconciled } = manager(cluster, {
    namespace: "kube-system",
    name: "notes",
    identity: "node-a",
  });
  const stop = new AbortController();
  const outcome = m.run(stop.signal);
  await reconciled.count(1, "the reconcile while leading");
  const held = cluster.object<Lease>(LEASES, "kube-system/notes");
  assert.equal(held?.spec?.holderIdentity, "node-a");
  stop.abort();
  assert.equal(await outcome, "stopped");
  assert.equal(cluster.object<Lease>(LEASES, "kube-system/notes")?.spec?.holderIdentity, "");
});

Deno.test("a manager refuses plain leader election options without a Lease name, at once", () => {
  assert.throws(
    () =>
      new Manager({
        client: new MemoryCluster(),
        reportingInstance: "node-a",
        leaderElection: { namespace: "kube-system", name: "", identity: "node-a" },
      }),
    { name: "RangeError", message: /'name' must not be empty, got ""/ },
  );
});

Deno.test("the manager's endpoints default to loopback addresses", () => {
  const m = new Manager({ client: new MemoryCluster(), reportingInstance: "node-a" });
  assert.deepEqual(managerRoutes(m, {}).map((l) => l.address), [
    "127.0.0.1:8080",
    "127.0.0.1:8081",
  ]);
});

Deno.test("keys of two controllers failing together retry through one bucket, at one bucket's rate", async () => {
  const cluster = new MemoryCluster();
  const clock = new FakeClock();
  const m = new Manager({
    client: cluster,
    clock,
    metricsAddress: "0",
    healthAddress: "0",
    watcherOptions: { streamingList: "off" },
  });
  const failed = new Set<string>();
  const retriedAt: number[] = [];
  const reconcile = (_object: KubeObject, { key }: { key: string }) => {
    if (!failed.has(key)) {
      failed.add(key);
      return Promise.reject(new Error("the API server is down"));
    }
    retriedAt.push(clock.now());
    return Promise.resolve({});
  };
  m.add({ name: "configmaps", resource: CONFIG_MAPS, reconcile, errorPolicy: () => 0 });
  m.add({
    name: "secrets",
    resource: SECRETS,
    reconcile: (object, context) => reconcile(object, { key: `secret:${context.key}` }),
    errorPolicy: () => 0,
  });
  for (let i = 0; i < 80; i++) {
    cluster.put(CONFIG_MAPS, configMap(`c${i}`));
    cluster.put(SECRETS, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `s${i}`, namespace: "ns" },
    });
  }
  const stop = new AbortController();
  const outcome = m.run(stop.signal);
  const turns = async (check: () => boolean) => {
    for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 0));
  };
  await turns(() => failed.size === 160 && retriedAt.length >= 100);
  await turns(() => false);
  assert.equal(failed.size, 160, "every key of both controllers failed once");
  assert.equal(retriedAt.length, 100, "the one bucket's burst of 100 came back at once, not 160");
  await clock.advance(1_000);
  await turns(() => retriedAt.length === 110);
  assert.equal(retriedAt.length, 110, "then 10 a second across both controllers");
  for (let t = 0; t < 5_000; t += 100) await clock.advance(100);
  await turns(() => retriedAt.length === 160);
  assert.equal(retriedAt.length, 160, "and every key converges");
  stop.abort();
  assert.equal(await outcome, "stopped");
});

Deno.test("a warm standby lists and watches its caches while it waits and reconciles nothing; a cold one holds none", async () => {
  for (const standby of ["warm", "cold"] as const) {
    const cluster = new MemoryCluster();
    cluster.put(CONFIG_MAPS, configMap("a"));
    const startLeading = Promise.withResolvers<void>();
    const election: LeaderElection = {
      async run(signal, lead) {
        await startLeading.promise;
        await lead(signal);
      },
    };
    const { manager: m, controller, reconciled } = manager(cluster, election, standby);
    const stop = new AbortController();
    const outcome = m.run(stop.signal);
    for (let i = 0; i < 50; i++) await new Promise((r) => setTimeout(r, 0));
    cluster.put(CONFIG_MAPS, configMap("b"));
    for (let i = 0; i < 50; i++) await new Promise((r) => setTimeout(r, 0));
    if (standby === "warm") {
      assert.deepEqual(controller.store.keys().sort(), ["ns/a", "ns/b"], "listed, then watched");
    } else {
      assert.equal(controller.store.size, 0, "a cold standby lists nothing");
    }
    assert.deepEqual(reconciled.items, [], `a ${standby} standby reconciles nothing`);
    startLeading.resolve();
    await reconciled.count(2, `the reconciles once the ${standby} standby leads`);
    assert.deepEqual(reconciled.items.sort(), ["ns/a", "ns/b"]);
    stop.abort();
    assert.equal(await outcome, "stopped");
  }
});

Deno.test("a manager starts its runnables in order, the leader-elected ones only while leading", () => {
  const order = (options: { standby?: "warm"; memoryLimit?: number }) =>
    managerRunnables(
      managerParts({ client: new MemoryCluster(), reportingInstance: "t", ...options }),
      {
        routes: [],
        shutdown: new AbortController().signal,
        onListening: () => {},
        onControllersEnded: () => {},
      },
    ).map((r) => `${r.name}${r.leaderElected ? " (leading)" : ""}`);
  assert.deepEqual(order({}), [
    "endpoints",
    "client",
    "events",
    "crds",
    "caches (leading)",
    "heap release (leading)",
    "controllers (leading)",
  ]);
  assert.deepEqual(order({ standby: "warm", memoryLimit: 2 ** 30 }), [
    "endpoints",
    "client",
    "events",
    "crds",
    "caches",
    "memory limit (leading)",
    "heap release (leading)",
    "controllers (leading)",
  ]);
});

Deno.test("a watch denied by Deno's permissions stops the manager, and its run throws the denial", async () => {
  const denial = new Deno.errors.PermissionDenied("Requires net access to the API server");
  // Secrets are denied; everything else is the cluster's.
  class DeniedSecrets extends MemoryCluster {
    override list<T extends KubeObject>(resource: Resource, options?: ListOptions) {
      return resource.plural === "secrets"
        ? Promise.reject(denial)
        : super.list<T>(resource, options);
    }
  }
  const client = new DeniedSecrets();
  client.put(CONFIG_MAPS, configMap("a"));
  const m = new Manager({
    client,
    clock: new FakeClock(),
    metricsAddress: "0",
    healthAddress: "0",
    watcherOptions: { streamingList: "off" },
  });
  const reconcile = () => Promise.resolve({});
  const configMaps = m.add({ name: "configmaps", resource: CONFIG_MAPS, reconcile });
  m.add({ name: "secrets", resource: SECRETS, reconcile });
  await assert.rejects(m.run(new AbortController().signal), Deno.errors.PermissionDenied);
  assert.deepEqual(m.readiness(), ["stopping"]);
  assert.equal(configMaps.queue.shuttingDown, true, "the controllers stopped");
});
