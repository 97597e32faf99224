/**
 * The manager against the real control plane of `hack/with_cluster.ts`: a
 * memory budget far below the number of objects, leader election between two
 * managers (takeover after a crash, handover after a draining shutdown), and
 * the HTTP endpoints (`/metrics`, `/readyz`, `/healthz`, `/debug/cache`).
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/manager_test.ts
 */
import assert from "node:assert/strict";
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { CONFIG_MAPS, LEASES } from "../../lib/kube/resources.ts";
import { LeaderElector, type Lease, leaseApi } from "../../lib/runtime/leader/leader.ts";
import {
  type LeaderElection,
  leaseElection,
  Manager,
  type ManagerOutcome,
} from "../../lib/runtime/manager/manager.ts";
import { RuntimeMetrics } from "../../lib/runtime/metrics/metrics.ts";
import { testKubeconfig } from "../_support/cluster.ts";
import { waitFor } from "../_support/kube.ts";
import { type Family, parseExposition } from "../unit/_exposition_parser.ts";
import {
  controllerRef,
  type Gadget,
  gadget,
  GADGETS,
  gadgetScope,
  keyOf,
  report,
  sleep,
  until,
} from "./_gadgets.ts";
import { ReconcileLog } from "./_reconciles.ts";
import { RecordingClient } from "./_recording_client.ts";
import { apiServerUrl, clientThrough, TcpProxy } from "./_tcp_proxy.ts";

/** The sum of the samples called `name` whose labels include `labels`; 0 when there are none. */
function total(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number {
  let sum = 0;
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) {
        sum += s.value;
      }
    }
  }
  return sum;
}

/** Like {@link total}, but there must be such a sample. */
function sample(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const found = [...families.values()].some((family) =>
    family.samples.some((s) =>
      s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)
    )
  );
  assert.ok(found, `no sample ${name}${JSON.stringify(labels)}`);
  return total(families, name, labels);
}

Deno.test("a manager with a budget of N objects reconciles all of 5·N, reading evicted ones back", async () => {
  await using s = await gadgetScope("mgr-budget");
  const { client, namespace } = s;
  const budget = 10;
  const names = Array.from({ length: 5 * budget }, (_, i) => `g-${String(i).padStart(2, "0")}`);
  for (const [i, name] of names.entries()) {
    await client.create(GADGETS, gadget(name, { size: i }), { namespace });
  }
  const recording = new RecordingClient(client);
  const manager = new Manager({
    client: recording,
    namespace,
    budget: { maxObjects: budget },
    maxConcurrentReconciles: 4,
    metricsAddress: "0",
    healthAddress: "0",
  });
  const log = new ReconcileLog();
  const controller = manager.add<Gadget>({
    name: "gadgets",
    resource: GADGETS,
    reconcile: log.wrap("manager", async (g, context) => {
      const size = g.spec?.size;
      if (size === undefined) throw new Error(`${context.key} came without its spec`);
      await client.patch(GADGETS, g.metadata?.name ?? "", {
        status: { mark: `size-${size}`, observedGeneration: g.metadata?.generation },
      }, { type: "merge", namespace, subresource: "status", signal: context.signal });
      return {};
    }),
  });
  const stop = new AbortController();
  const running = manager.run(stop.signal);
  try {
    await waitFor("every gadget marked with its own size", async () => {
      const list = await client.list<Gadget>(GADGETS, { namespace });
      return list.items.length === names.length &&
        list.items.every((g) => g.status?.mark === `size-${g.spec?.size}`);
    });
    assert.ok(names.every((name) => log.count(keyOf(namespace, name)) >= 1));
    assert.ok(log.calls.every((call) => call.outcome === "ok"));

    const stats = controller.store.stats();
    assert.equal(stats.keys, 5 * budget, "a key was forgotten");
    assert.ok(stats.objects <= budget, `${stats.objects} objects kept, over the budget`);
    assert.ok(stats.evictions >= 4 * budget, `only ${stats.evictions} evictions`);
    assert.ok(stats.misses >= 4 * budget, `only ${stats.misses} misses`);
    const gets = recording.gets.filter((g) => g.plural === "gadgets").length;
    assert.ok(
      gets >= 4 * budget && gets <= stats.misses,
      `${gets} GETs for ${stats.misses} misses`,
    );

    const families = parseExposition(manager.metrics.render());
    const kind = { kind: "Gadget" };
    assert.equal(sample(families, "kinglet_cache_keys", kind), 5 * budget);
    assert.ok(sample(families, "kinglet_cache_objects", kind) <= budget);
    assert.ok(sample(families, "kinglet_cache_evictions_total", kind) >= 4 * budget);
    assert.ok(sample(families, "kinglet_cache_misses_total", kind) >= 4 * budget);
    assert.deepEqual(log.overlaps, []);
  } finally {
    stop.abort();
    assert.equal(await running, "stopped");
  }
});

/** Short durations in client-go's proportions, so that a takeover takes seconds. */
const TIMING = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 500 };
/** Longest wait between two attempts of a candidate: client-go's jitter of 1.2. */
const MAX_RETRY_MS = TIMING.retryPeriodMs * 2.2;

/**
 * A manager with leader election on its own client, as in another process,
 * whose reconciles take `spec.sleepMs` and ignore their signal, so that a
 * drain that cut them short would show.
 */
async function candidate(
  identity: string,
  namespace: string,
  log: ReconcileLog,
  releaseOnCancel: boolean,
) {
  const client = new KubeClient(await loadConfig({ kubeconfig: testKubeconfig() }));
  const elector = new LeaderElector(leaseApi(client), {
    namespace,
    name: "gadgets",
    identity,
    releaseOnCancel,
    ...TIMING,
  });
  const times: { ledAt?: number; endedAt?: number } = {};
  const election = leaseElection(elector);
  const timed: LeaderElection = {
    run: (signal, lead) =>
      election.run(signal, (leading) => {
        times.ledAt ??= Date.now();
        return lead(leading);
      }),
  };
  const manager = new Manager({
    client,
    namespace,
    leaderElection: timed,
    drainTimeoutMs: TIMING.renewDeadlineMs,
    metricsAddress: "0",
    healthAddress: "0",
  });
  manager.add<Gadget>({
    name: "gadgets",
    resource: GADGETS,
    reconcile: log.wrap(identity, async (g) => {
      if (g.spec?.sleepMs) await sleep(g.spec.sleepMs);
      return {};
    }),
  });
  const stop = new AbortController();
  const outcome: Promise<ManagerOutcome> = manager.run(stop.signal).finally(() => {
    times.endedAt = Date.now();
    client.close();
  });
  return {
    elector,
    times,
    outcome,
    /** Stops the manager: a crash when `releaseOnCancel` is false, a SIGTERM otherwise. */
    stop(): Promise<ManagerOutcome> {
      stop.abort();
      return outcome;
    },
  };
}

Deno.test("of two managers only the leader reconciles, and the other takes over within a lease duration of a crash", async () => {
  await using s = await gadgetScope("mgr-crash");
  const { client, namespace } = s;
  const key = (name: string) => keyOf(namespace, name);
  const log = new ReconcileLog();
  for (const name of ["g1", "g2", "g3"]) await client.create(GADGETS, gadget(name), { namespace });
  const a = await candidate("a", namespace, log, false);
  await until("a to lead", () => a.elector.isLeader);
  const b = await candidate("b", namespace, log, true);
  try {
    await until("a to reconcile g1, g2 and g3", () => log.by("a").length === 3);
    await until("b to see a lead", () => b.elector.leader === "a");
    await client.create(GADGETS, gadget("g4"), { namespace });
    await until("a to reconcile g4", () => log.count(key("g4"), "a") === 1);
    // Longer than a lease duration: b must keep waiting while a renews.
    await sleep(TIMING.leaseDurationMs + 1_000);
    assert.equal(b.elector.isLeader, false, "two leaders");
    assert.equal(b.times.ledAt, undefined);
    assert.deepEqual(log.by("b"), [], "the standby reconciled");

    const crashedAt = Date.now();
    assert.equal(await a.stop(), "stopped");
    await until("b to take over", () => b.times.ledAt !== undefined, 15_000);
    const takeover = b.times.ledAt! - crashedAt;
    report(
      `leader crashed without releasing: standby took over after ${takeover} ms ` +
        `(lease ${TIMING.leaseDurationMs} ms, retry ${TIMING.retryPeriodMs} ms)`,
    );
    // b judges expiry from when it saw a's last renewal, at most one retry late.
    const earliest = TIMING.leaseDurationMs - TIMING.retryPeriodMs - 500;
    const latest = TIMING.leaseDurationMs + 2 * MAX_RETRY_MS + 500;
    assert.ok(takeover >= earliest, `b took over after ${takeover} ms, before the Lease expired`);
    assert.ok(takeover <= latest, `b took over after ${takeover} ms`);

    await until("b to reconcile every gadget", () => log.by("b").length === 4);
    const lastOfA = Math.max(...log.by("a").map((c) => c.endedAt!));
    assert.ok(log.by("b").every((c) => c.startedAt >= lastOfA));
    const lease = await client.get<Lease>(LEASES, "gadgets", { namespace });
    assert.equal(lease.spec?.holderIdentity, "b");
    assert.equal(lease.spec?.leaseTransitions, 1);
    assert.deepEqual(log.overlaps, []);
  } finally {
    await a.stop();
    await b.stop();
  }
});

Deno.test("a leader shut down mid-reconcile finishes it, releases the Lease, and the standby takes over at once", async () => {
  await using s = await gadgetScope("mgr-drain");
  const { client, namespace } = s;
  const key = (name: string) => keyOf(namespace, name);
  const log = new ReconcileLog();
  const a = await candidate("a", namespace, log, true);
  await until("a to lead", () => a.elector.isLeader);
  const c = await candidate("c", namespace, log, true);
  const holders: string[] = [];
  const watching = new AbortController();
  const leaseWatch = (async () => {
    for await (const event of client.watch<Lease>(LEASES, { namespace, signal: watching.signal })) {
      const holder = event.object.spec?.holderIdentity ?? "";
      if (event.type !== "BOOKMARK" && holders.at(-1) !== holder) holders.push(holder);
    }
  })();
  try {
    await until("c to see a lead", () => c.elector.leader === "a");
    await client.create(GADGETS, gadget("slow", { sleepMs: 1_500 }), { namespace });
    await until("a to start reconciling slow", () => log.count(key("slow"), "a") === 1);

    const stoppedAt = Date.now();
    assert.equal(await a.stop(), "stopped");
    const releasedAt = a.times.endedAt!;
    const drained = log.of(key("slow"), "a")[0]!;
    assert.equal(drained.outcome, "ok");
    assert.equal(drained.aborted, false, "the reconcile was aborted instead of drained");
    assert.ok(drained.endedAt! > stoppedAt && drained.endedAt! <= releasedAt);

    await until("c to take over", () => c.times.ledAt !== undefined, 10_000);
    const handover = c.times.ledAt! - releasedAt;
    report(
      `leader shut down with a reconcile in flight: drained in ${releasedAt - stoppedAt} ms, ` +
        `standby took over ${handover} ms after the release`,
    );
    assert.ok(handover <= MAX_RETRY_MS + 500, `c took over ${handover} ms after the release`);
    // Without the release, c would have waited for the Lease to expire.
    assert.ok(c.times.ledAt! - stoppedAt < TIMING.leaseDurationMs - TIMING.retryPeriodMs);
    await until("c to reconcile slow", () => log.count(key("slow"), "c") === 1);
    assert.ok(log.of(key("slow"), "c")[0]!.startedAt >= drained.endedAt!);
    await until("the Lease history to reach c", () => holders.at(-1) === "c");
    assert.deepEqual(holders.slice(-3), ["a", "", "c"], "the Lease was not released");
    assert.deepEqual(log.overlaps, []);
  } finally {
    watching.abort();
    await leaseWatch;
    await a.stop();
    await c.stop();
  }
});

Deno.test("the manager's endpoints: readiness follows sync, metrics parse and move, /debug/cache shows no contents", async () => {
  await using s = await gadgetScope("mgr-http");
  const { client, namespace } = s;
  const key = (name: string) => keyOf(namespace, name);
  const metrics = new RuntimeMetrics();
  await using proxy = new TcpProxy(await apiServerUrl());
  const managerClient = await clientThrough(proxy, { onRequest: metrics.observeRequest });
  const address = "127.0.0.1:0";
  const manager = new Manager({
    client: managerClient,
    namespace,
    metrics,
    metricsAddress: address,
    healthAddress: address,
  });
  const log = new ReconcileLog();
  manager.add<Gadget>({
    name: "gadgets",
    resource: GADGETS,
    owns: [{ resource: CONFIG_MAPS }],
    reconcile: log.wrap("manager", async (g, context) => {
      await managerClient.apply(CONFIG_MAPS, {
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
  });
  proxy.hold();
  const stop = new AbortController();
  const running = manager.run(stop.signal);
  try {
    const port = manager.listeners[0]!.port;
    const get = async (path: string) => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`);
      return {
        status: response.status,
        type: response.headers.get("content-type"),
        body: await response.text(),
      };
    };

    const unready = await get("/readyz");
    assert.equal(unready.status, 503);
    assert.match(unready.body, /gadgets: not synced/);
    assert.equal((await get("/healthz")).status, 200);
    const before = await get("/metrics");
    assert.match(before.type ?? "", /^text\/plain; version=0\.0\.4/);
    const first = parseExposition(before.body);
    const controller = { controller: "gadgets" };
    assert.equal(sample(first, "controller_runtime_reconcile_total", controller), 0);
    assert.equal(sample(first, "workqueue_adds_total", { name: "gadgets" }), 0);

    proxy.release();
    await waitFor("/readyz to answer 200", async () => (await get("/readyz")).status === 200);

    const names = ["widget-1", "widget-2", "widget-3"];
    for (const name of names) {
      await client.create(GADGETS, gadget(name, { size: 1, marker: "s3cr3t-marker" }), {
        namespace,
      });
    }
    await until("three gadgets reconciled", () => names.every((n) => log.count(key(n)) >= 1));
    await waitFor("three children", async () => {
      const list = await client.list(CONFIG_MAPS, { namespace });
      return list.items.filter((cm) => cm.metadata?.name?.endsWith("-child")).length === 3;
    });
    await log.settled();

    const after = parseExposition((await get("/metrics")).body);
    const success = { ...controller, result: "success" };
    assert.ok(sample(after, "controller_runtime_reconcile_total", success) >= 3);
    assert.ok(sample(after, "controller_runtime_reconcile_time_seconds_count", controller) >= 3);
    assert.ok(sample(after, "workqueue_adds_total", { name: "gadgets" }) >= 3);
    const requests = "rest_client_requests_total";
    assert.equal(total(first, requests), 0, "requests counted while the network was held");
    assert.ok(sample(after, requests, { method: "GET", code: "200" }) >= 1);
    assert.ok(sample(after, requests, { method: "PATCH", code: "200" }) >= 3);
    assert.equal(sample(after, "kinglet_cache_objects", { kind: "Gadget" }), 3);
    assert.ok(sample(after, "kinglet_cache_objects", { kind: "ConfigMap" }) >= 3);
    assert.ok(sample(after, "process_resident_memory_bytes") > 0);

    const debug = await get("/debug/cache");
    assert.match(debug.type ?? "", /^application\/json/);
    const body = JSON.parse(debug.body);
    assert.equal(body.phase, "running");
    const gadgets = body.caches["gadgets.test.kinglet.dev"];
    assert.equal(gadgets.objects, 3);
    assert.equal(gadgets.keys, 3);
    assert.equal(gadgets.synced, true);
    for (const field of ["bytes", "hits", "misses", "evictions"]) {
      assert.equal(typeof gadgets[field], "number", `no ${field} in /debug/cache`);
    }
    assert.ok(body.caches["configmaps"].objects >= 3);
    for (const secret of ["s3cr3t-marker", ...names]) {
      assert.ok(!debug.body.includes(secret), `/debug/cache shows ${secret}`);
    }
  } finally {
    stop.abort();
    assert.equal(await running, "stopped");
    managerClient.close();
  }
});
