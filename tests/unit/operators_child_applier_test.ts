/**
 * The child applier's skip: a child exactly as last applied is not written
 * again, unless it lost an owner reference kinglet gave it.
 */
import assert from "node:assert/strict";
import { SERVICES } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { ChildApplier } from "../../lib/operators/child_applier.ts";
import type { OperatorDeps } from "../../lib/operators/reconcile_support.ts";
import { Store } from "../../lib/runtime/store.ts";

const OWNER = {
  apiVersion: "kinglet.dev/v1alpha1",
  kind: "WebApp",
  name: "web",
  uid: "uid-web",
  controller: true,
};

function desired(): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "shop", ownerReferences: [OWNER] },
    spec: { ports: [{ port: 80 }] },
  };
}

function harness() {
  const applied: KubeObject[] = [];
  const deps = {
    client: {
      apply: (_resource: unknown, object: KubeObject) => {
        applied.push(object);
        return Promise.resolve({
          ...object,
          metadata: { ...object.metadata, resourceVersion: String(applied.length) },
        });
      },
    },
    events: { publish() {} },
  } as unknown as OperatorDeps;
  return { applied, applier: new ChildApplier(deps), cache: new Store() };
}

Deno.test("a child unchanged since its last apply is not applied again", async () => {
  const { applied, applier, cache } = harness();
  const signal = new AbortController().signal;
  cache.apply({ type: "ADDED", object: await applier.apply(SERVICES, desired(), cache, signal) });
  await applier.apply(SERVICES, desired(), cache, signal);
  assert.equal(applied.length, 1);
});

Deno.test("a child that lost its owner reference is applied again, though nothing else moved", async () => {
  const { applied, applier, cache } = harness();
  const signal = new AbortController().signal;
  const first = await applier.apply(SERVICES, desired(), cache, signal);
  cache.apply({ type: "ADDED", object: first });
  const { ownerReferences: _dropped, ...orphaned } = first.metadata!;
  cache.apply({ type: "MODIFIED", object: { ...first, metadata: orphaned } });
  await applier.apply(SERVICES, desired(), cache, signal);
  assert.equal(applied.length, 2);
  assert.deepEqual(applied[1]!.metadata?.ownerReferences, [OWNER]);
});
