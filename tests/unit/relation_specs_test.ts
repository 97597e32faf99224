import assert from "node:assert/strict";
import { FakeClock, Semaphore } from "../../lib/async/mod.ts";
import { CONFIG_MAPS, type KubeObject, SECRETS } from "../../lib/kube/mod.ts";
import { resetLogging } from "../../lib/log.ts";
import { type ControllerSpec, setupLogging } from "../../lib/runtime/mod.ts";
import { Caches } from "../../lib/runtime/cache/mod.ts";
import { Controller } from "../../lib/runtime/controller/mod.ts";
import { RuntimeMetrics } from "../../lib/runtime/metrics/mod.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";
import { Happenings } from "./_until.ts";

type Mirror = KubeObject & { data?: Record<string, string> };

/** A controller of ConfigMaps ("mirrors") naming a Secret as `data.source`, over an in-memory cluster. */
async function mirrors(
  spec: Partial<ControllerSpec<Mirror>>,
  test: (h: {
    cluster: MemoryCluster;
    reconciled: Happenings<string>;
    metrics: RuntimeMetrics;
  }) => Promise<void>,
) {
  const clock = new FakeClock();
  const cluster = new MemoryCluster({ namespaces: ["ns"] });
  const caches = new Caches({ client: cluster, clock, watcherOptions: { streamingList: "off" } });
  const reconciled = new Happenings<string>();
  const metrics = new RuntimeMetrics();
  const controller = new Controller<Mirror>({
    name: "mirrors",
    resource: CONFIG_MAPS,
    reconcile: (_object, { key }) => {
      reconciled.push(key);
      return Promise.resolve({});
    },
    ...spec,
  }, {
    client: cluster,
    semaphore: new Semaphore(2),
    caches,
    clock,
    metrics: { queue: metrics.queue("mirrors"), controller: metrics.controller("mirrors", 2) },
  });
  const stop = new AbortController();
  const running = Promise.all([caches.run(stop.signal), controller.run(stop.signal)]);
  try {
    await test({ cluster, reconciled, metrics });
  } finally {
    stop.abort();
    await running;
  }
}

const mirror = (name: string, source: string): Mirror => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns" },
  data: { source },
});
const secret = (name: string, data: Record<string, string> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: "ns" },
  data,
});

/** The value of `kinglet_relation_errors_total` with these labels in an exposition, or 0. */
function relationErrors(metrics: RuntimeMetrics, resource: string, fn: string): number {
  const line = metrics.registry.render().split("\n").find((l) =>
    l.startsWith("kinglet_relation_errors_total{") && l.includes(`resource="${resource}"`) &&
    l.includes(`function="${fn}"`)
  );
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

/** JSON log lines from here on, until disposed. */
function captureLogs(): { lines: { level: string; message: string }[]; [Symbol.dispose](): void } {
  const lines: { level: string; message: string }[] = [];
  setupLogging({ format: "json", level: "info", write: (line) => lines.push(JSON.parse(line)) });
  return { lines, [Symbol.dispose]: resetLogging };
}

const BY_SOURCE = { bySource: (m: Mirror) => m.data?.source ? [`ns/${m.data.source}`] : [] };

Deno.test("a watch's index names a declared index: a change of the source reconciles the primaries it holds", async () => {
  await mirrors({ indexes: BY_SOURCE, watches: [{ resource: SECRETS, index: "bySource" }] }, async (
    { cluster, reconciled },
  ) => {
    cluster.put(CONFIG_MAPS, mirror("m1", "src"));
    cluster.put(CONFIG_MAPS, mirror("m2", "src"));
    cluster.put(CONFIG_MAPS, mirror("m3", "other"));
    cluster.put(SECRETS, secret("src"));
    await reconciled.count(3, "the initial reconciles");
    cluster.put(SECRETS, secret("src", { k: "dg==" }));
    const after = await reconciled.count(5, "the mirrors of the edited source");
    assert.deepEqual(after.slice(3).sort(), ["ns/m1", "ns/m2"]);
  });
});

Deno.test("an index the spec does not declare, or both a map and an index, is refused at registration with what to write", () => {
  const cluster = new MemoryCluster();
  const create = (spec: Partial<ControllerSpec<Mirror>>) => () =>
    new Controller<Mirror>({
      name: "mirrors",
      resource: CONFIG_MAPS,
      reconcile: () => Promise.resolve({}),
      ...spec,
    }, { client: cluster, semaphore: new Semaphore(1) });
  assert.throws(
    create({ watches: [{ resource: SECRETS, index: "bySource" }] }),
    /controller 'mirrors': watches\[0\] maps by index 'bySource', which its 'indexes' does not declare \(it declares none\); add indexes: \{ bySource:/,
  );
  assert.throws(
    create({ indexes: BY_SOURCE, owns: [{ resource: SECRETS, index: "byName" }] }),
    /owns\[0\] maps by index 'byName'.*declared: 'bySource'/,
  );
  assert.throws(
    create({
      indexes: BY_SOURCE,
      watches: [{ resource: SECRETS, index: "bySource", map: () => [] }],
    }),
    /watches\[0\] gives both 'map' and 'index'; keep one/,
  );
  assert.throws(
    create({ watches: [{ resource: SECRETS }] }),
    /watches\[0\] \(secrets\) needs a 'map' function or an 'index'/,
  );
});

Deno.test("a map that throws on one object is logged once for its key and counted every time; the other objects still map", async () => {
  using logs = captureLogs();
  await mirrors({
    watches: [{
      resource: SECRETS,
      map: (s) => {
        if (s.metadata?.name === "bad") throw new Error("no source label");
        return [`ns/${s.metadata?.name}`];
      },
    }],
  }, async ({ cluster, reconciled, metrics }) => {
    cluster.put(CONFIG_MAPS, mirror("good", "x"));
    cluster.put(SECRETS, secret("bad"));
    cluster.put(SECRETS, secret("good"));
    await reconciled.count(1, "the initial reconcile (the good secret maps to the same key)");
    for (const n of ["1", "2"]) cluster.put(SECRETS, secret("bad", { n }));
    cluster.put(SECRETS, secret("good", { n: "1" }));
    await reconciled.count(2, "the good secret's edit, after the bad one's");
    assert.equal(relationErrors(metrics, "secrets", "map"), 3, "the list and two edits of bad");
    const failures = logs.lines.filter((l) => l.message.includes("mapping secrets"));
    assert.equal(failures.length, 1, JSON.stringify(failures));
    assert.match(failures[0]!.message, /"ns\/bad".*no source label/);
    assert.equal(failures[0]!.level, "ERROR");
  });
});

Deno.test("an index function that throws indexes that primary under nothing, counted and logged once; the cache and the others go on", async () => {
  using logs = captureLogs();
  await mirrors({
    indexes: {
      bySource: (m) => {
        if (m.data?.source === "boom") throw new Error("cannot index");
        return [`ns/${m.data?.source}`];
      },
    },
    watches: [{ resource: SECRETS, index: "bySource" }],
  }, async ({ cluster, reconciled, metrics }) => {
    cluster.put(CONFIG_MAPS, mirror("broken", "boom"));
    cluster.put(CONFIG_MAPS, mirror("m1", "src"));
    cluster.put(SECRETS, secret("src"));
    await reconciled.count(2, "both primaries, the broken one too");
    cluster.put(CONFIG_MAPS, {
      ...mirror("broken", "boom"),
      metadata: { name: "broken", namespace: "ns", labels: { a: "b" } },
    });
    cluster.put(SECRETS, secret("src", { k: "dg==" }));
    const after = await reconciled.count(3, "the mirror of the edited source");
    assert.equal(after[2], "ns/m1");
    assert.equal(relationErrors(metrics, "configmaps", "index"), 2, "the list and the edit");
    const failures = logs.lines.filter((l) => l.message.includes("indexing configmaps"));
    assert.equal(failures.length, 1, JSON.stringify(failures));
    assert.match(failures[0]!.message, /"ns\/broken" by 'bySource'.*cannot index/);
  });
});
