/**
 * The Widget's admission webhook with kinglet's test kit: `MemoryCluster`
 * runs it on each write as the API server calls it, defaulting first, then
 * validation, and a denial is the error the API server's would be.
 */
import assert from "node:assert/strict";
import { ApiError, CONFIG_MAPS } from "@kinglet/kinglet/kube";
import { MemoryCluster } from "@kinglet/kinglet/testing";
import { renderConfigMap } from "../../src/controller.ts";
import { type Widget, WIDGETS } from "../../src/kind.ts";
import { widgetWebhook } from "../../src/webhook.ts";

const sample: Widget = {
  apiVersion: "example.org/v1alpha1",
  kind: "Widget",
  metadata: { name: "sample", namespace: "demo" },
  spec: { message: "Hello" },
};

Deno.test("the webhook trims a Widget's message before it is stored", async () => {
  const cluster = new MemoryCluster({ namespaces: ["demo"], webhooks: [widgetWebhook] });
  const created = await cluster.create(WIDGETS, {
    ...sample,
    spec: { ...sample.spec, message: "  Hello  " },
  });
  assert.equal(created.spec.message, "Hello");
});

Deno.test("the webhook denies a Widget whose ConfigMap is another's, and admits its own", async () => {
  const cluster = new MemoryCluster({ namespaces: ["demo"], webhooks: [widgetWebhook] });
  // The ConfigMap the controller writes for the Widget: its name, and this Widget as its owner.
  const { metadata } = renderConfigMap({ ...sample, metadata: { ...sample.metadata, uid: "u" } });
  const { name, namespace } = metadata;
  cluster.put(CONFIG_MAPS, { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace } });
  await assert.rejects(cluster.create(WIDGETS, sample), (e: unknown) => {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.status, 403);
    assert.match(e.message, /ConfigMap demo\/sample-widget exists and is not this Widget's/);
    return true;
  });
  cluster.put(CONFIG_MAPS, { apiVersion: "v1", kind: "ConfigMap", metadata });
  const created = await cluster.create(WIDGETS, sample);
  await cluster.replace(WIDGETS, { ...created, spec: { ...created.spec, message: "Bye" } });
  assert.equal(cluster.object<Widget>(WIDGETS, "demo/sample")?.spec.message, "Bye");
});
