/**
 * The Greeting example with the public test kit: its controller in a
 * Manager over the in-memory API server on a fake clock.
 */
import assert from "node:assert/strict";
import {
  CONFIG_MAPS,
  CUSTOM_RESOURCE_DEFINITIONS,
  EVENTS,
  type KubeObject,
} from "../../lib/kube/mod.ts";
import { Manager } from "../../lib/runtime/mod.ts";
import type { KubeEvent } from "../../lib/runtime/events/mod.ts";
import { FakeClock, MemoryCluster, waitFor } from "../../lib/testing/mod.ts";
import {
  type ConfigMap,
  greetingController,
  renderConfigMap,
} from "../../examples/greeting/greeting.ts";
import { type Greeting, GREETINGS } from "../../examples/greeting/kind.ts";
import { greetings } from "../../examples/greeting/schema.ts";

const ada: Greeting = {
  apiVersion: "example.kinglet.dev/v1",
  kind: "Greeting",
  metadata: { name: "ada", namespace: "shop", uid: "u-1" },
  spec: { name: "Ada", greeting: "Hello" },
};

/** Runs the Greeting controller over `cluster` until the returned function stops it. */
function run(cluster: MemoryCluster, clock: FakeClock): () => Promise<void> {
  const manager = new Manager({
    client: cluster,
    clock,
    metricsAddress: "0",
    healthAddress: "0",
    reportingInstance: "test",
  });
  manager.add(greetingController);
  const stop = new AbortController();
  const running = manager.run(stop.signal);
  return async () => {
    stop.abort();
    await running;
  };
}

const eventsFor = (cluster: MemoryCluster, reason: string) =>
  cluster.objects<KubeEvent & KubeObject>(EVENTS).filter((e) => e.reason === reason);

Deno.test("the example's Greeting renders a ConfigMap it controls, with the greeting its spec gives", () => {
  const cm = renderConfigMap({ ...ada, spec: { name: "Ada", greeting: "Welcome" } });
  assert.equal(cm.metadata.name, "ada-greeting");
  assert.equal(cm.metadata.namespace, "shop");
  assert.deepEqual(cm.data, { message: "Welcome, Ada!" });
  const [owner] = cm.metadata.ownerReferences ?? [];
  assert.equal(owner?.uid, "u-1");
  assert.equal(owner?.controller, true);
});

Deno.test("the example's Greeting says hello by default, as its CRD defaults it", () => {
  assert.deepEqual(greetings.spec.parse({ name: "Ada" }), { name: "Ada", greeting: "Hello" });
  const { openAPIV3Schema } = greetings.crd().spec.versions[0]!.schema;
  assert.match(JSON.stringify(openAPIV3Schema), /"greeting":\{[^}]*"default":"Hello"/);
});

Deno.test("the example's controller renders, reports, repairs and says goodbye", async () => {
  const clock = new FakeClock();
  const cluster = new MemoryCluster({ clock, namespaces: ["shop"] });
  // With the CRD in the cluster, as a user applies it, every status write is checked against it.
  cluster.put(CUSTOM_RESOURCE_DEFINITIONS, greetings.crd());
  const stop = run(cluster, clock);
  try {
    cluster.put(GREETINGS, { ...ada, metadata: { name: "ada", namespace: "shop" } });
    const cm = await waitFor(
      "the ConfigMap",
      () => cluster.object<ConfigMap>(CONFIG_MAPS, "shop/ada-greeting"),
    );
    assert.deepEqual(cm.data, { message: "Hello, Ada!" });
    assert.equal(cm.metadata.labels?.["app.kubernetes.io/managed-by"], "greeting-operator");
    const greeting = await waitFor("the status", () => {
      const g = cluster.object<Greeting>(GREETINGS, "shop/ada");
      return g?.status?.message !== undefined && g;
    });
    assert.deepEqual(greeting.status, {
      message: "Hello, Ada!",
      configMap: "ada-greeting",
      observedGeneration: greeting.metadata.generation,
    });
    assert.deepEqual(greeting.metadata.finalizers, ["example.kinglet.dev/farewell"]);
    assert.equal(cm.metadata.ownerReferences?.[0]?.uid, greeting.metadata.uid);
    await waitFor("a Rendered Event", () => eventsFor(cluster, "Rendered").length === 1);

    cluster.remove(CONFIG_MAPS, "shop/ada-greeting");
    await waitFor("the ConfigMap back", () => cluster.object(CONFIG_MAPS, "shop/ada-greeting"));

    const stored = cluster.object<Greeting>(GREETINGS, "shop/ada")!;
    cluster.put(GREETINGS, { ...stored, spec: { name: "Ada", greeting: "Welcome" } });
    await waitFor(
      "the new message",
      () =>
        cluster.object<ConfigMap>(CONFIG_MAPS, "shop/ada-greeting")?.data.message ===
          "Welcome, Ada!",
    );

    await cluster.delete(GREETINGS, "ada", { namespace: "shop" });
    await waitFor("the Greeting to go", () => !cluster.object(GREETINGS, "shop/ada"));
    const [farewell] = await waitFor(
      "a Farewell Event",
      () => eventsFor(cluster, "Farewell").length > 0 && eventsFor(cluster, "Farewell"),
    );
    assert.equal(farewell?.note, "Goodbye, Ada!");
  } finally {
    await stop();
  }
});
