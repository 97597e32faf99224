import assert from "node:assert/strict";
import type { V1Condition, V1Deployment } from "@kubernetes/client-node";
import type { KubeObject, Wire } from "../../lib/kube/mod.ts";

// As the API server sends them: RFC 3339 strings, never Dates.
const fixture: KubeObject = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name: "settings",
    creationTimestamp: "2026-01-01T12:00:00Z",
    deletionTimestamp: "2026-01-01T12:05:00Z",
    managedFields: [{ manager: "kubectl", operation: "Apply", time: "2026-01-01T12:00:00Z" }],
  },
};

Deno.test("object timestamps are typed as the strings the API server sends, which Date.parse reads", () => {
  const created: string | undefined = fixture.metadata?.creationTimestamp;
  const deleted: string | undefined = fixture.metadata?.deletionTimestamp;
  assert.equal(Date.parse(created!), Date.UTC(2026, 0, 1, 12));
  assert.equal(Date.parse(deleted!) - Date.parse(created!), 5 * 60_000);
  assert.equal(typeof fixture.metadata?.managedFields?.[0]?.time, "string");
});

Deno.test("calling a Date method on a timestamp does not compile, and would throw", () => {
  assert.throws(
    // @ts-expect-error: a timestamp is a string, and a string has no getTime
    () => fixture.metadata!.creationTimestamp!.getTime(),
    TypeError,
  );
});

Deno.test("a Wire model has string timestamps at every depth and is a KubeObject", () => {
  const condition: Wire<V1Condition> = {
    type: "Ready",
    status: "True",
    reason: "Available",
    message: "",
    lastTransitionTime: "2026-01-01T12:00:05Z",
  };
  const deployment: Wire<V1Deployment> = {
    metadata: { name: "web", creationTimestamp: "2026-01-01T12:00:00Z" },
    status: {
      conditions: [{ type: "Available", status: "True", lastUpdateTime: "2026-01-01T12:00:05Z" }],
    },
  };
  const object: KubeObject = deployment;
  // @ts-expect-error: the declared model's Date is not what arrives
  const declared: V1Deployment["metadata"] = { creationTimestamp: "2026-01-01T12:00:00Z" };
  assert.equal(object.metadata?.name, "web");
  assert.equal(Date.parse(condition.lastTransitionTime) - Date.parse("2026-01-01T12:00:00Z"), 5000);
  assert.equal(deployment.status?.conditions?.[0]?.lastUpdateTime, "2026-01-01T12:00:05Z");
  assert.equal(declared?.creationTimestamp, "2026-01-01T12:00:00Z");
});
