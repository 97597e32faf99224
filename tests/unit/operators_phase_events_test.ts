import assert from "node:assert/strict";
import { announcePhase } from "../../lib/operators/status_writes.ts";
import type { ReconcileEvents } from "../../lib/runtime/controller/spec.ts";
import type { EventInit } from "../../lib/runtime/events/events.ts";

function recordingDeps(): { deps: ReconcileEvents; published: EventInit[] } {
  const published: EventInit[] = [];
  const deps = { publish: (init: EventInit) => void published.push(init) };
  return { deps, published };
}

const WEBAPP = {
  apiVersion: "kinglet.dev/v1alpha1",
  kind: "WebApp",
  metadata: { namespace: "shop", name: "web", uid: "u1" },
  status: { phase: "Ready" },
};

Deno.test("a primary that turns Degraded gets a Warning Event", () => {
  const { deps, published } = recordingDeps();
  announcePhase(deps, WEBAPP, "Degraded", "WebApp is Degraded");
  assert.equal(published.length, 1);
  assert.equal(published[0]!.type, "Warning");
  assert.equal(published[0]!.reason, "Degraded");
});

Deno.test("a primary that turns Ready or Progressing gets a Normal Event", () => {
  const { deps, published } = recordingDeps();
  announcePhase(deps, { ...WEBAPP, status: { phase: "Degraded" } }, "Ready", "WebApp is Ready");
  announcePhase(deps, WEBAPP, "Progressing", "WebApp is Progressing");
  assert.deepEqual(published.map((e) => e.type), ["Normal", "Normal"]);
});

Deno.test("a primary whose phase did not change gets no Event", () => {
  const { deps, published } = recordingDeps();
  announcePhase(deps, WEBAPP, "Ready", "WebApp is Ready");
  assert.equal(published.length, 0);
});
