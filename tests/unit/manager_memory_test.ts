import assert from "node:assert/strict";
import { FakeClock, flushMicrotasks } from "../../lib/async/mod.ts";
import { CONFIG_MAPS, type KubeObject, SECRETS } from "../../lib/kube/mod.ts";
import { Manager, type ManagerOptions } from "../../lib/runtime/manager/mod.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";
import { Happenings } from "./_until.ts";

const configMap = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns" },
  data: { value: name.repeat(40) },
});

const NAMES = Array.from({ length: 20 }, (_, i) => `cm-${i}`);

/**
 * A manager under `memoryLimit` bytes (and `options`) reconciling 20
 * ConfigMaps, on a clock the test moves.
 */
function limited(memoryLimit: number, options: Pick<ManagerOptions, "budget"> = {}) {
  const cluster = new MemoryCluster();
  for (const name of NAMES) cluster.put(CONFIG_MAPS, configMap(name));
  const clock = new FakeClock();
  const reconciled = new Happenings<string>();
  const manager = new Manager({
    client: cluster,
    clock,
    memoryLimit,
    ...options,
    metricsAddress: "0",
    healthAddress: "0",
    watcherOptions: { streamingList: "off" },
  });
  const controller = manager.add({
    name: "configmaps",
    resource: CONFIG_MAPS,
    reconcile: (_object, { key }) => {
      reconciled.push(key);
      return Promise.resolve({});
    },
  });
  return { clock, manager, controller, reconciled };
}

function gauge(text: string, name: string): number {
  return Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]);
}

Deno.test("a manager under a memory limit keeps its primary cache within the limit's budget and reconciles every key", async () => {
  // 16 KB: a normal-level cache budget of 2,000 estimated bytes, a few of these objects.
  const { manager, controller, reconciled } = limited(16_000);
  const stop = new AbortController();
  const outcome = manager.run(stop.signal);
  await reconciled.count(NAMES.length, "every ConfigMap reconciled");
  const stats = controller.store.stats();
  assert.equal(stats.keys, NAMES.length, "every key stays indexed");
  assert.ok(stats.bytes <= 2_000, `cached ${stats.bytes} estimated bytes`);
  assert.ok(stats.evictions > 0);
  assert.deepEqual(new Set(reconciled.items), new Set(NAMES.map((n) => `ns/${n}`)));
  const text = manager.metrics.render();
  assert.equal(gauge(text, "kinglet_memory_limit_bytes"), 16_000);
  assert.equal(gauge(text, "kinglet_memory_pressure"), 0, "no sample has been taken yet");
  stop.abort();
  assert.equal(await outcome, "stopped");
});

Deno.test("a manager over its memory limit evicts first, then slows down, and says so in its metrics", async () => {
  // Any process holds more than 16 KB, so every sample finds RSS over the limit.
  const { clock, manager, controller, reconciled } = limited(16_000);
  const stop = new AbortController();
  const outcome = manager.run(stop.signal);
  await reconciled.count(NAMES.length, "every ConfigMap reconciled");
  const before = controller.store.stats().bytes;
  await clock.advance(1000);
  let text = manager.metrics.render();
  assert.equal(gauge(text, "kinglet_memory_pressure"), 1);
  const evicting = controller.store.stats();
  assert.ok(evicting.bytes <= 500, `the budget fell to a quarter (${before} → ${evicting.bytes})`);
  assert.equal(evicting.keys, NAMES.length);
  await clock.advance(1000);
  text = manager.metrics.render();
  assert.equal(gauge(text, "kinglet_memory_pressure"), 2);
  assert.match(text, /^kinglet_memory_pressure_transitions_total\{level="evict"\} 1$/m);
  assert.match(text, /^kinglet_memory_pressure_transitions_total\{level="slow"\} 1$/m);
  assert.ok(controller.store.stats().bytes <= 250);
  const summary = manager.debugCache() as { memoryLimit?: { level: string } };
  assert.equal(summary.memoryLimit?.level, "slow");
  stop.abort();
  await flushMicrotasks();
  assert.equal(await outcome, "stopped");
});

Deno.test("controller_runtime_max_concurrent_reconciles follows the concurrency a memory limit allows", async () => {
  // 32 MiB allows 4 reconciles at once, and 1 at `slow`; this test process holds more than 90 % of it.
  const { clock, manager, reconciled } = limited(32 * 2 ** 20);
  const stop = new AbortController();
  const outcome = manager.run(stop.signal);
  await reconciled.count(NAMES.length, "every ConfigMap reconciled");
  const allowed = () =>
    gauge(
      manager.metrics.render(),
      'controller_runtime_max_concurrent_reconciles\\{controller="configmaps"\\}',
    );
  assert.equal(allowed(), 4);
  await clock.advance(1000);
  await clock.advance(1000);
  assert.equal(gauge(manager.metrics.render(), "kinglet_memory_pressure"), 2);
  assert.equal(allowed(), 1);
  stop.abort();
  await flushMicrotasks();
  assert.equal(await outcome, "stopped");
});

Deno.test("under memory pressure the owned kinds' caches evict too, and keep every key", async () => {
  const cluster = new MemoryCluster();
  for (const name of NAMES) {
    cluster.put(CONFIG_MAPS, configMap(name));
    cluster.put(SECRETS, { ...configMap(name), apiVersion: "v1", kind: "Secret" });
  }
  const clock = new FakeClock();
  const reconciled = new Happenings<string>();
  const manager = new Manager({
    client: cluster,
    clock,
    memoryLimit: 16_000,
    metricsAddress: "0",
    healthAddress: "0",
    watcherOptions: { streamingList: "off" },
  });
  manager.add({
    name: "configmaps",
    resource: CONFIG_MAPS,
    owns: [{ resource: SECRETS }],
    reconcile: (_object, { key }) => {
      reconciled.push(key);
      return Promise.resolve({});
    },
  });
  const stop = new AbortController();
  const outcome = manager.run(stop.signal);
  await reconciled.count(NAMES.length, "every ConfigMap reconciled");
  const secrets = manager.caches.entries().find((e) => e.resource === SECRETS)!.reflector.store;
  const normal = secrets.stats();
  assert.equal(normal.keys, NAMES.length);
  assert.ok(normal.bytes <= 2_000, `at normal it keeps the level's 2,000 bytes (${normal.bytes})`);
  assert.ok(normal.bytes > 250, `and more than it may under pressure (${normal.bytes})`);
  await clock.advance(1000);
  assert.equal(gauge(manager.metrics.render(), "kinglet_memory_pressure"), 1);
  const evicting = secrets.stats();
  assert.equal(evicting.keys, NAMES.length, "every owned key stays indexed");
  assert.ok(evicting.objects < NAMES.length, `${evicting.objects} Secrets still cached`);
  assert.ok(
    evicting.bytes <= 500 / 2,
    `the owned cache keeps half of 500 bytes (${evicting.bytes})`,
  );
  stop.abort();
  await flushMicrotasks();
  assert.equal(await outcome, "stopped");
});

Deno.test("a manager's memory limit narrows its own budget but never widens it", async () => {
  const { manager, controller, reconciled } = limited(2 ** 30, { budget: { maxObjects: 3 } });
  const stop = new AbortController();
  const outcome = manager.run(stop.signal);
  await reconciled.count(NAMES.length, "every ConfigMap reconciled");
  assert.ok(controller.store.stats().objects <= 3);
  stop.abort();
  await outcome;
});

Deno.test("a manager's memory limit sizes how many Event series it remembers", () => {
  const client = new MemoryCluster();
  const events = (memoryLimit?: number) =>
    new Manager({ client, reportingInstance: "kinglet-0", ...(memoryLimit && { memoryLimit }) })
      .events.maxTracked;
  assert.equal(events(64 * 2 ** 20), 1_024);
  assert.equal(events(), 4_096, "without a limit, client-go's number");
});

Deno.test("a manager refuses a memory limit that is not a positive whole number of bytes", () => {
  for (const memoryLimit of [0, -1, 1.5, NaN]) {
    assert.throws(
      () => new Manager({ client: new MemoryCluster(), memoryLimit }),
      /'memoryLimit' must be a positive integer of bytes/,
    );
  }
});
