import assert from "node:assert/strict";
import { type Greeting, renderConfigMap } from "../../examples/greeting/greeting.ts";

const ada: Greeting = {
  apiVersion: "example.kinglet.dev/v1",
  kind: "Greeting",
  metadata: { name: "ada", namespace: "shop", uid: "u-1" },
  spec: { name: "Ada" },
};

Deno.test("the example's Greeting renders a ConfigMap it controls, saying hello by default", () => {
  const cm = renderConfigMap(ada);
  assert.equal(cm.metadata?.name, "ada-greeting");
  assert.equal(cm.metadata?.namespace, "shop");
  assert.deepEqual(cm.data, { message: "Hello, Ada!" });
  const [owner] = cm.metadata?.ownerReferences ?? [];
  assert.equal(owner?.uid, "u-1");
  assert.equal(owner?.controller, true);
});

Deno.test("the example's Greeting uses the greeting its spec gives", () => {
  const cm = renderConfigMap({ ...ada, spec: { name: "Ada", greeting: "Welcome" } });
  assert.deepEqual(cm.data, { message: "Welcome, Ada!" });
});
