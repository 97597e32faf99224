/**
 * The Widget controller with kinglet's test kit: its render function alone,
 * then the controller in a Manager over the in-memory API server on a fake clock.
 */
import assert from "node:assert/strict";
import { CONFIG_MAPS } from "@kinglet/kinglet/kube";
import { Manager } from "@kinglet/kinglet/runtime";
import { FakeClock, MemoryCluster, waitFor } from "@kinglet/kinglet/testing";
import { type ConfigMap, renderConfigMap, widgetController } from "../../src/controller.ts";
import { type Widget, WIDGETS } from "../../src/kind.ts";
import { widgets } from "../../src/schema.ts";

const CHILD_KEY = "demo/sample-widget";

const sample: Widget = {
  apiVersion: "example.org/v1alpha1",
  kind: "Widget",
  metadata: { name: "sample", namespace: "demo", uid: "u-1" },
  spec: { message: "Hello" },
};

/** Runs the controller over `cluster` until the returned function stops it. */
function run(cluster: MemoryCluster, clock: FakeClock): () => Promise<void> {
  const manager = new Manager({
    client: cluster,
    clock,
    metricsAddress: "0",
    healthAddress: "0",
    reportingInstance: "test",
  });
  manager.add(widgetController);
  const stop = new AbortController();
  const running = manager.run(stop.signal);
  return async () => {
    stop.abort();
    await running;
  };
}

Deno.test("a Widget renders a ConfigMap it controls, holding its message", () => {
  const cm = renderConfigMap(sample);
  assert.equal(cm.metadata.name, "sample-widget");
  assert.equal(cm.metadata.namespace, "demo");
  assert.deepEqual(cm.data, { message: "Hello" });
  assert.equal(cm.metadata.ownerReferences?.[0]?.uid, "u-1");
  assert.equal(cm.metadata.ownerReferences?.[0]?.controller, true);
});

Deno.test("the Widget CRD serves the resource of src/kind.ts, named after its plural and group", () => {
  assert.deepEqual(widgets.resource, WIDGETS);
  const { name } = widgets.crd().metadata;
  assert.equal(name, "widgets.example.org");
});

Deno.test("the controller writes the ConfigMap, reports Ready and repairs", async () => {
  const clock = new FakeClock();
  const cluster = new MemoryCluster({ clock, namespaces: ["demo"] });
  const stop = run(cluster, clock);
  try {
    const created = { ...sample, metadata: { name: "sample", namespace: "demo" } };
    cluster.put(WIDGETS, created); // as a user would create it
    const cm = await waitFor(
      "the ConfigMap",
      () => cluster.object<ConfigMap>(CONFIG_MAPS, CHILD_KEY),
    );
    assert.deepEqual(cm.data, { message: "Hello" });
    const ready = await waitFor("the Ready condition", () => {
      const stored = cluster.object<Widget>(WIDGETS, "demo/sample");
      const condition = stored?.status?.conditions?.find((c) => c.type === "Ready");
      return condition?.status === "True" && stored;
    });
    assert.equal(ready.status?.observedGeneration, ready.metadata.generation);
    assert.equal(ready.status?.configMap, "sample-widget");

    cluster.remove(CONFIG_MAPS, CHILD_KEY);
    await waitFor("the ConfigMap back", () => cluster.object(CONFIG_MAPS, CHILD_KEY));

    cluster.put(WIDGETS, { ...ready, spec: { ...ready.spec, message: "Hello again" } });
    await waitFor("the new message", () => {
      const current = cluster.object<ConfigMap>(CONFIG_MAPS, CHILD_KEY);
      return current?.data.message === "Hello again";
    });
  } finally {
    await stop();
  }
});
