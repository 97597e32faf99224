/**
 * The manager paces its reconciles by their requests: against a server that
 * serves one request at a time (each takes as much longer as there are in
 * flight), it keeps a couple of reconciles running, not its eight; with
 * `paceReconciles: false` it runs all eight, as controller-runtime would.
 * Reconciles that wait on something else than the API server get more.
 */
import assert from "node:assert/strict";
import {
  CONFIG_MAPS,
  type GetOptions,
  type KubeObject,
  type Resource,
} from "../../lib/kube/mod.ts";
import { Manager, type ReconcileClient } from "../../lib/runtime/mod.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";
import { Happenings } from "./_until.ts";

/** A cluster whose GETs take 4 ms for each request in flight, theirs included. */
class OneAtATime extends MemoryCluster {
  inFlight = 0;
  override async get<T extends KubeObject>(
    resource: Resource,
    name: string,
    options?: GetOptions,
  ): Promise<T> {
    this.inFlight++;
    try {
      await new Promise((resolve) => setTimeout(resolve, 4 * this.inFlight));
      return await super.get<T>(resource, name, options);
    } finally {
      this.inFlight--;
    }
  }
}

/**
 * Runs a manager of at most 8 over `count` ConfigMaps in `cluster` until
 * each is reconciled once by `work`; returns how many reconciles ran at once
 * as each started.
 */
async function atOnceWhile(
  cluster: MemoryCluster,
  count: number,
  work: (name: string, client: ReconcileClient) => Promise<unknown>,
  paceReconciles?: boolean,
): Promise<number[]> {
  const names = Array.from({ length: count }, (_, i) => `c-${i}`);
  for (const name of names) {
    cluster.put(CONFIG_MAPS, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: "ns" },
    });
  }
  const m = new Manager({
    client: cluster,
    metricsAddress: "0",
    healthAddress: "0",
    watcherOptions: { streamingList: "off" },
    maxConcurrentReconciles: 8,
    ...(paceReconciles !== undefined && { paceReconciles }),
  });
  const done = new Happenings<string>();
  let running = 0;
  const atOnce: number[] = [];
  m.add({
    name: "configmaps",
    resource: CONFIG_MAPS,
    reconcile: async (object, { client, key }) => {
      atOnce.push(++running);
      try {
        await work(object.metadata!.name!, client);
      } finally {
        running--;
      }
      done.push(key);
      return {};
    },
  });
  const stop = new AbortController();
  const outcome = m.run(stop.signal);
  try {
    await done.count(names.length, "every ConfigMap reconciled");
  } finally {
    stop.abort();
    await outcome;
  }
  return atOnce;
}

/** Two requests a reconcile, as a read and a write would be, against a server that serves one at a time. */
function mostAtOnce(paceReconciles?: boolean): Promise<number[]> {
  return atOnceWhile(new OneAtATime({ namespaces: ["ns"] }), 120, async (name, client) => {
    for (let i = 0; i < 2; i++) await client.get(CONFIG_MAPS, name, { namespace: "ns" });
  }, paceReconciles);
}

Deno.test("against a server that serves one request at a time, the manager keeps about two reconciles running, not eight", async () => {
  const atOnce = await mostAtOnce();
  // The first dozen reconciles start the pace at one and let it find its level.
  const settled = atOnce.slice(12);
  assert.ok(Math.max(...settled) <= 3, `up to ${Math.max(...settled)} at once: ${settled}`);
  assert.ok(settled.some((n) => n >= 2), "it grew past one while requests stayed fast");
});

Deno.test("paceReconciles false runs maxConcurrentReconciles whenever there is work", async () => {
  const atOnce = await mostAtOnce(false);
  assert.equal(Math.max(...atOnce), 8);
});

Deno.test("reconciles that wait on something else than the API server are run more at once, a second at a time", async () => {
  // Another service's answer, no request to the API server.
  const atOnce = await atOnceWhile(
    new MemoryCluster({ namespaces: ["ns"] }),
    24,
    () => new Promise((resolve) => setTimeout(resolve, 250)),
  );
  assert.ok(Math.max(...atOnce) >= 3, `at most ${Math.max(...atOnce)} at once: ${atOnce}`);
});
