/**
 * Pacing against the real control plane of `hack/with_cluster.ts`: a
 * requeue-after and a resync bring a key back with nothing changed, an
 * error policy decides when a failure is retried (or that it is terminal)
 * and a success resets it, the reconcile rate limit spaces reconcile starts,
 * client-side flow control spaces requests, and a WebApp whose Deployment
 * lost its owner reference (which no watch maps back to the WebApp) is
 * repaired by its next requeue.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/pacing_test.ts
 */
import assert from "node:assert/strict";
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { CONFIG_MAPS, DEPLOYMENTS } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { webAppController } from "../../lib/operators/webapp/reconcile.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { Caches } from "../../lib/runtime/cache/caches.ts";
import { Controller } from "../../lib/runtime/controller/controller.ts";
import type { ControllerSpec } from "../../lib/runtime/controller/spec.ts";
import { Manager } from "../../lib/runtime/manager/manager.ts";
import { RuntimeMetrics } from "../../lib/runtime/metrics/metrics.ts";
import { Semaphore } from "../../lib/async/semaphore.ts";
import { testKubeconfig } from "../_support/cluster.ts";
import { installCrdsOnce } from "../_support/crds.ts";
import { waitFor } from "../_support/kube.ts";
import { keyOf, namespaceScope, report, until } from "./_gadgets.ts";

function configMap(name: string): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { a: "1" } };
}

/** Runs `spec` over ConfigMaps of `namespace` until disposed. */
function start(client: KubeClient, namespace: string, spec: ControllerSpec) {
  const caches = new Caches({ client, namespace, backoff: { initialMs: 100, maxMs: 1_000 } });
  const controller = new Controller(spec, { client, semaphore: new Semaphore(4), caches });
  const stop = new AbortController();
  const cachesDone = caches.run(stop.signal);
  const running = controller.run(stop.signal);
  return {
    async [Symbol.asyncDispose]() {
      stop.abort();
      await running;
      await cachesDone;
    },
  };
}

/** Reconcile start times per key, in ms since the test began. */
class Starts {
  readonly #t0 = Date.now();
  readonly byKey = new Map<string, number[]>();
  record(key: string): void {
    this.byKey.set(key, [...(this.byKey.get(key) ?? []), Date.now() - this.#t0]);
  }
  of(key: string): number[] {
    return this.byKey.get(key) ?? [];
  }
  get all(): number[] {
    return [...this.byKey.values()].flat().sort((a, b) => a - b);
  }
}

Deno.test("a requeue-after brings an unchanged object back after the jittered delay, every time", async () => {
  await using s = await namespaceScope("requeue");
  const starts = new Starts();
  await using _ = start(s.client, s.namespace, {
    name: "requeue",
    resource: CONFIG_MAPS,
    requeueJitter: 0.2,
    reconcile: (_cm, { key }) => {
      starts.record(key);
      return Promise.resolve({ requeueAfterMs: 500 });
    },
  });
  await s.client.create(CONFIG_MAPS, configMap("one"), { namespace: s.namespace });
  const key = keyOf(s.namespace, "one");
  await until("four reconciles of an unchanged ConfigMap", () => starts.of(key).length >= 4);
  const gaps = starts.of(key).slice(1).map((at, i) => at - starts.of(key)[i]!);
  report(`requeue-after 500 ms ±20 %: gaps ${gaps.join(", ")} ms`);
  // Never before 400 ms (500 - 20 %); the upper side is left to the scheduler.
  for (const gap of gaps) assert.ok(gap >= 400 - 5, `a gap of ${gap} ms is shorter than 400 ms`);
});

Deno.test("a resync period brings back an object whose reconcile asked for nothing", async () => {
  await using s = await namespaceScope("resync");
  const starts = new Starts();
  await using _ = start(s.client, s.namespace, {
    name: "resync",
    resource: CONFIG_MAPS,
    resyncPeriodMs: 700,
    reconcile: (_cm, { key }) => {
      starts.record(key);
      return Promise.resolve({});
    },
  });
  await s.client.create(CONFIG_MAPS, configMap("one"), { namespace: s.namespace });
  const key = keyOf(s.namespace, "one");
  await until("three reconciles with no change", () => starts.of(key).length >= 3);
  const [first, second] = starts.of(key);
  assert.ok(second! - first! >= 700 * 0.9 - 5, `resynced after ${second! - first!} ms`);
});

Deno.test("the error policy paces retries, a success resets it, and 'terminal' stops them", async () => {
  await using s = await namespaceScope("policy");
  const starts = new Starts();
  const attempts: number[] = [];
  const failUntil = new Map([["flaky", 3], ["broken", Infinity]]);
  await using _ = start(s.client, s.namespace, {
    name: "policy",
    resource: CONFIG_MAPS,
    // The delays asserted below are the policy's own; the retry jitter has tests of its own.
    requeueJitter: 0,
    errorPolicy: (error, attempt) => {
      attempts.push(attempt);
      return String(error).includes("broken") ? "terminal" : attempt * 300;
    },
    reconcile: (cm, { key }) => {
      starts.record(key);
      const name = cm.metadata?.name ?? "";
      if (starts.of(key).length < (failUntil.get(name) ?? 0)) throw new Error(`${name} failed`);
      if (failUntil.get(name) === Infinity) throw new Error(`${name} failed`);
      return Promise.resolve({});
    },
  });
  for (const name of ["flaky", "broken"]) {
    await s.client.create(CONFIG_MAPS, configMap(name), { namespace: s.namespace });
  }
  const flaky = keyOf(s.namespace, "flaky");
  await until("flaky to succeed on its third try", () => starts.of(flaky).length >= 3);
  const [a, b, c] = starts.of(flaky);
  assert.ok(b! - a! >= 300 - 5 && c! - b! >= 600 - 5, `retries after ${b! - a!}, ${c! - b!} ms`);
  // Let a wrongly scheduled retry show up before counting.
  await new Promise((r) => setTimeout(r, 1_500));
  assert.equal(starts.of(flaky).length, 3, "no retry after the success");
  assert.equal(starts.of(keyOf(s.namespace, "broken")).length, 1, "terminal: tried once");

  // A new failure after the success starts again from attempt 1.
  attempts.length = 0;
  failUntil.set("flaky", 5);
  await s.client.patch(CONFIG_MAPS, "flaky", { data: { a: "2" } }, {
    type: "merge",
    namespace: s.namespace,
  });
  await until("flaky's next failure", () => attempts.length > 0);
  assert.equal(attempts[0], 1);
});

Deno.test("the reconcile rate limit spaces reconcile starts by 1/qps after the burst", async () => {
  await using s = await namespaceScope("ratelimit");
  const starts = new Starts();
  await using _ = start(s.client, s.namespace, {
    name: "ratelimit",
    resource: CONFIG_MAPS,
    reconcileRateLimit: { qps: 4, burst: 2 },
    reconcile: (_cm, { key }) => {
      starts.record(key);
      return Promise.resolve({});
    },
  });
  await Promise.all(
    ["a", "b", "c", "d", "e", "f"].map((n) =>
      s.client.create(CONFIG_MAPS, configMap(n), { namespace: s.namespace })
    ),
  );
  await until("six reconciles", () => starts.all.length >= 6);
  const all = starts.all;
  // A bucket of 2 refilled at 4 a second holds at most 2 + 4t tokens over any t seconds:
  // n starts in a row span at least (n - 2) / 4 s, however the keys arrived.
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 2; j < all.length; j++) {
      const least = (j - i + 1 - 2) * 250;
      assert.ok(all[j]! - all[i]! >= least - 10, `starts ${all.join(", ")} ms`);
    }
  }
  assert.ok(all.at(-1)! - all[0]! >= (all.length - 2) * 250 - 10);
});

Deno.test("a client over its qps spaces requests to the API server and reports the waits", async () => {
  const metrics = new RuntimeMetrics();
  const client = new KubeClient(await loadConfig({ kubeconfig: testKubeconfig() }), {
    qps: 5,
    burst: 1,
    onRateLimited: metrics.observeRateLimit,
  });
  try {
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 6 }, () => client.list(CONFIG_MAPS, { namespace: "default" })),
    );
    const ms = performance.now() - started;
    assert.ok(ms >= 1_000 - 10, `six requests at 5 qps after a burst of 1 took ${ms} ms`);
    const text = metrics.render();
    assert.match(
      text,
      /rest_client_rate_limiter_duration_seconds_count\{verb="GET",host="[^"]+"\} 6/,
    );
    assert.match(text, /rest_client_rate_limiter_duration_seconds_bucket\{[^}]*le="0.005"\} 1\n/);
  } finally {
    client.close();
  }
});

/**
 * A WebApp controller requeueing every 2 s around `body`, given the WebApp
 * "shop" it created; stops the manager after.
 */
async function withRequeuedWebApp(
  name: string,
  body: (s: Awaited<ReturnType<typeof namespaceScope>>, app: KubeObject) => Promise<void>,
): Promise<void> {
  await using s = await namespaceScope(name);
  await installCrdsOnce(s.client);
  const manager = new Manager({
    client: s.client,
    namespace: s.namespace,
    metricsAddress: "0",
    healthAddress: "0",
  });
  manager.add(webAppController({
    requeueAfterMs: 2_000,
  }));
  const stop = new AbortController();
  const running = manager.run(stop.signal);
  try {
    const app = await s.client.create<KubeObject>(WEB_APPS, {
      apiVersion: "kinglet.dev/v1alpha1",
      kind: "WebApp",
      metadata: { name: "shop", namespace: s.namespace },
      spec: { image: "nginx:1.27", replicas: 0 },
    });
    await body(s, app);
  } finally {
    stop.abort();
    await running;
  }
}

Deno.test("a WebApp's Deployment that lost its owner reference is repaired by the next requeue", async () => {
  await withRequeuedWebApp("drift", async (s, app) => {
    const owned = (d: KubeObject | undefined) =>
      d?.metadata?.ownerReferences?.some((o) => o.uid === app.metadata?.uid) ?? false;
    await waitFor("the Deployment", async () => {
      const d = await s.client.get(DEPLOYMENTS, "shop", { namespace: s.namespace });
      return owned(d) && d;
    });
    await s.client.patch(DEPLOYMENTS, "shop", { metadata: { ownerReferences: null } }, {
      type: "merge",
      namespace: s.namespace,
    });
    const cut = performance.now();
    await waitFor("the owner reference back", async () => {
      return owned(await s.client.get(DEPLOYMENTS, "shop", { namespace: s.namespace }));
    }, 30_000);
    const ms = performance.now() - cut;
    report(`WebApp drift: owner reference restored ${Math.round(ms)} ms after it was removed`);
    // One requeue period (2 s + 10 % jitter) plus the reconcile and the poll.
    assert.ok(ms < 2_200 + 3_000, `restored after ${ms} ms`);
  });
});

Deno.test("a label removed from a WebApp's Deployment, which moves no generation, is restored by the next requeue", async () => {
  await withRequeuedWebApp("labels", async (s) => {
    // Not the managed-by label: the child watch selects on it, so removing it reads as a deletion.
    const label = "app.kubernetes.io/instance";
    const deployment = await waitFor("the Deployment", async () => {
      const d = await s.client.get(DEPLOYMENTS, "shop", { namespace: s.namespace });
      return d?.metadata?.labels?.[label] !== undefined && d;
    });
    const value = deployment.metadata!.labels![label]!;
    const removed = await s.client.patch(DEPLOYMENTS, "shop", {
      metadata: { labels: { [label]: null } },
    }, { type: "merge", namespace: s.namespace });
    assert.equal(removed.metadata?.labels?.[label], undefined);
    assert.equal(removed.metadata?.generation, deployment.metadata?.generation);
    const cut = performance.now();
    await waitFor("the label back", async () => {
      const d = await s.client.get(DEPLOYMENTS, "shop", { namespace: s.namespace });
      return d?.metadata?.labels?.[label] === value;
    }, 30_000);
    const ms = performance.now() - cut;
    report(`WebApp drift: a removed Deployment label restored ${Math.round(ms)} ms later`);
    // One requeue period (2 s + 10 % jitter) plus the reconcile and the poll.
    assert.ok(ms < 2_200 + 3_000, `restored after ${ms} ms`);
  });
});
