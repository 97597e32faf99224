/**
 * The child applier's skip: a child exactly as last applied is not written
 * again, unless it lost an owner reference its controller gave it, or was
 * deleted since.
 */
import assert from "node:assert/strict";
import { type KubeObject, SERVICES } from "../../lib/kube/mod.ts";
import { ChildApplier, Store } from "../../lib/runtime/mod.ts";

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
  const applier = new ChildApplier((_resource, object) => {
    applied.push(object);
    return Promise.resolve({
      ...object,
      metadata: { ...object.metadata, resourceVersion: String(applied.length) },
    });
  });
  const cache = new Store();
  applier.track(SERVICES, cache);
  return { applied, applier, cache, signal: new AbortController().signal };
}

Deno.test("a child unchanged since its last apply is not applied again", async () => {
  const { applied, applier, cache, signal } = harness();
  const first = await applier.apply(SERVICES, desired(), cache, signal);
  cache.apply({ type: "applied", object: first });
  assert.equal(await applier.apply(SERVICES, desired(), cache, signal), cache.get("shop/web"));
  assert.equal(applied.length, 1);
});

Deno.test("a child whose desired state changed is applied again", async () => {
  const { applied, applier, cache, signal } = harness();
  cache.apply({ type: "applied", object: await applier.apply(SERVICES, desired(), cache, signal) });
  await applier.apply(SERVICES, { ...desired(), spec: { ports: [{ port: 81 }] } }, cache, signal);
  assert.equal(applied.length, 2);
});

Deno.test("a child that lost its owner reference is applied again, though nothing else moved", async () => {
  const { applied, applier, cache, signal } = harness();
  const first = await applier.apply(SERVICES, desired(), cache, signal);
  cache.apply({ type: "applied", object: first });
  const { ownerReferences: _dropped, ...orphaned } = first.metadata!;
  cache.apply({ type: "applied", object: { ...first, metadata: orphaned } });
  await applier.apply(SERVICES, desired(), cache, signal);
  assert.equal(applied.length, 2);
  assert.deepEqual(applied[1]!.metadata?.ownerReferences, [OWNER]);
});

Deno.test("a deleted child loses its record and is applied again when it comes back", async () => {
  const { applied, applier, cache, signal } = harness();
  const first = await applier.apply(SERVICES, desired(), cache, signal);
  cache.apply({ type: "applied", object: first });
  cache.apply({ type: "deleted", object: first });
  assert.equal(applier.size, 0);
  cache.apply({ type: "applied", object: first });
  await applier.apply(SERVICES, desired(), cache, signal);
  assert.equal(applied.length, 2);
});
