/**
 * The event recorder against a real API server: Events pass validation,
 * repeats become one Event with a series, long notes are accepted once cut.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/events_test.ts
 */
import assert from "node:assert/strict";
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { CONFIG_MAPS, EVENTS, NAMESPACES } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { EventRecorder, eventSink, type KubeEvent } from "../../lib/runtime/events/events.ts";
import { testKubeconfig } from "../_support/cluster.ts";

async function scope(prefix: string) {
  const client = new KubeClient(await loadConfig({ kubeconfig: testKubeconfig() }));
  const namespace = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  const ns = await client.create<KubeObject>(NAMESPACES, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: namespace },
  });
  const recorder = new EventRecorder(eventSink(client), { reportingInstance: `test-${namespace}` });
  return {
    client,
    namespace,
    ns,
    recorder,
    async [Symbol.asyncDispose]() {
      try {
        await recorder.flush(AbortSignal.timeout(10_000));
        await client.delete(NAMESPACES, namespace);
      } finally {
        client.close();
      }
    },
  };
}

async function eventsAbout(
  client: KubeClient,
  namespace: string,
  uid: string,
): Promise<KubeEvent[]> {
  const list = await client.list<KubeEvent>(EVENTS, { namespace });
  return list.items.filter((e) => e.regarding?.uid === uid);
}

Deno.test("repeats of an event become one Event whose series counts them", async () => {
  await using s = await scope("ev-series");
  const { client, namespace, recorder } = s;
  const cm: KubeObject = await client.create(CONFIG_MAPS, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "settings", namespace },
  });
  const uid = cm.metadata?.uid ?? "";
  const event = {
    type: "Warning",
    reason: "InvalidSpec",
    action: "Reconcile",
    note: "replicas must be >= 0",
  } as const;

  recorder.publish(cm, event);
  await recorder.flush(AbortSignal.timeout(10_000));
  const [first, ...others] = await eventsAbout(client, namespace, uid);
  assert.equal(others.length, 0);
  assert.equal(first?.reason, "InvalidSpec");
  assert.equal(first?.type, "Warning");
  assert.equal(first?.reportingController, "kinglet");
  assert.equal(first?.reportingInstance, `test-${namespace}`);
  assert.equal(first?.series, undefined);

  recorder.publish(cm, event);
  await recorder.flush(AbortSignal.timeout(10_000));
  recorder.publish(cm, event);
  await recorder.flush(AbortSignal.timeout(10_000));
  const after = await eventsAbout(client, namespace, uid);
  assert.equal(after.length, 1, "a repeat created a new Event");
  assert.equal(after[0]?.metadata?.name, first?.metadata?.name);
  assert.equal(after[0]?.series?.count, 3);
  assert.ok(after[0]?.series?.lastObservedTime, "no lastObservedTime");
  assert.deepEqual(s.recorder.stats, {
    created: 1,
    patched: 2,
    rateLimited: 0,
    dropped: 0,
    failed: 0,
  });
});

Deno.test("a note over the API limit is cut and accepted, and a cluster-scoped object's Event lands in default", async () => {
  await using s = await scope("ev-limits");
  const { client, namespace, ns, recorder } = s;
  recorder.publish(ns, {
    type: "Normal",
    reason: "Checked",
    action: "Check",
    note: "ü".repeat(3_000),
  });
  await recorder.flush(AbortSignal.timeout(10_000));
  assert.equal(recorder.stats.failed, 0);
  const [event] = await eventsAbout(client, "default", ns.metadata?.uid ?? "");
  assert.ok(event, `no Event about namespace ${namespace} in default`);
  assert.ok(new TextEncoder().encode(event.note).length <= 1024);
  await client.delete(EVENTS, event.metadata?.name ?? "", { namespace: "default" });
});
