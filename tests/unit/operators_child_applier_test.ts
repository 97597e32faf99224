/**
 * The child applier's skip: a child exactly as last applied is not written
 * again, unless it lost an owner reference kinglet gave it.
 */
import assert from "node:assert/strict";
import { CONFIG_MAPS, SERVICES } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { ChildApplier } from "../../lib/runtime/children/child_applier.ts";
import { appliedMemo } from "../../lib/runtime/children/_applied.ts";
import { Store } from "../../lib/runtime/cache/store.ts";
import { projectOwned } from "../../lib/runtime/cache/projections.ts";

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
  return { applied, applier, cache };
}

Deno.test("a child unchanged since its last apply is not applied again", async () => {
  const { applied, applier, cache } = harness();
  const signal = new AbortController().signal;
  cache.apply({ type: "applied", object: await applier.apply(SERVICES, desired(), cache, signal) });
  await applier.apply(SERVICES, desired(), cache, signal);
  assert.equal(applied.length, 1);
});

Deno.test("a child that lost its owner reference is applied again, though nothing else moved", async () => {
  const { applied, applier, cache } = harness();
  const signal = new AbortController().signal;
  const first = await applier.apply(SERVICES, desired(), cache, signal);
  cache.apply({ type: "applied", object: first });
  const { ownerReferences: _dropped, ...orphaned } = first.metadata!;
  cache.apply({ type: "applied", object: { ...first, metadata: orphaned } });
  await applier.apply(SERVICES, desired(), cache, signal);
  assert.equal(applied.length, 2);
  assert.deepEqual(applied[1]!.metadata?.ownerReferences, [OWNER]);
});

Deno.test("a child whose labels someone changed is applied again once, then left alone", async () => {
  const { applied, applier, cache } = harness();
  const signal = new AbortController().signal;
  const first = await applier.apply(SERVICES, desired(), cache, signal);
  cache.apply({ type: "applied", object: first });
  // Someone else's label change moves neither the generation nor the desired state.
  cache.apply({
    type: "applied",
    object: { ...first, metadata: { ...first.metadata, labels: { edited: "yes" } } },
  });
  const second = await applier.apply(SERVICES, desired(), cache, signal);
  assert.equal(applied.length, 2);
  cache.apply({ type: "applied", object: second });
  await applier.apply(SERVICES, desired(), cache, signal);
  assert.equal(applied.length, 2, "the state the last apply left is not written again");
});

Deno.test("annotations Kubernetes' own controllers write do not count as a change", async () => {
  const { applied, applier, cache } = harness();
  const signal = new AbortController().signal;
  const first = await applier.apply(SERVICES, desired(), cache, signal);
  cache.apply({
    type: "applied",
    object: {
      ...first,
      metadata: { ...first.metadata, annotations: { "deployment.kubernetes.io/revision": "1" } },
    },
  });
  await applier.apply(SERVICES, desired(), cache, signal);
  assert.equal(applied.length, 1);
});

Deno.test("children of two kinds under one name keep their own records, and a deleted one loses only its own", async () => {
  const { applied, applier, cache: services } = harness();
  const configMaps = new Store();
  applier.track(CONFIG_MAPS, configMaps);
  const signal = new AbortController().signal;
  const configMap = { ...desired(), kind: "ConfigMap", spec: undefined, data: { a: "b" } };
  services.apply({
    type: "applied",
    object: await applier.apply(SERVICES, desired(), services, signal),
  });
  const written = await applier.apply(CONFIG_MAPS, configMap, configMaps, signal);
  configMaps.apply({ type: "applied", object: written });
  assert.equal(applier.size, 2);
  await applier.apply(SERVICES, desired(), services, signal);
  await applier.apply(CONFIG_MAPS, configMap, configMaps, signal);
  assert.equal(applied.length, 2, "both skipped");
  configMaps.apply({ type: "deleted", object: written });
  assert.equal(applier.size, 1);
  await applier.apply(SERVICES, desired(), services, signal);
  assert.equal(applied.length, 2, "the Service's record survives the ConfigMap's deletion");
});

Deno.test("a child cached without its labels is still applied again when someone relabels it", async () => {
  const { applied, applier } = harness();
  const cache = new Store({ transform: stripLabels });
  applier.track(SERVICES, cache);
  const signal = new AbortController().signal;
  const first = await applier.apply(SERVICES, desired(), cache, signal);
  cache.apply({ type: "applied", object: first });
  await applier.apply(SERVICES, desired(), cache, signal);
  assert.equal(applied.length, 1, "as last applied: skipped");
  cache.apply({
    type: "applied",
    object: { ...first, metadata: { ...first.metadata, labels: { edited: "yes" } } },
  });
  assert.equal(cache.get("shop/web")?.metadata?.labels, undefined, "the cache keeps no labels");
  await applier.apply(SERVICES, desired(), cache, signal);
  assert.equal(applied.length, 2);
});

/** A projection that keeps no labels nor annotations, as an author's `transform` may. */
function stripLabels(object: KubeObject): KubeObject {
  const { labels: _labels, annotations: _annotations, ...metadata } = projectOwned(object)
    .metadata!;
  return { ...object, metadata };
}

/**
 * `object` as the API server returns it after kinglet's apply: its fields
 * recorded to kinglet, its ports' protocol defaulted.
 */
function asApplied(object: KubeObject, fieldsV1: object): KubeObject {
  const spec = object.spec as { ports: object[] };
  return {
    ...object,
    spec: { ...spec, ports: spec.ports.map((port) => ({ ...port, protocol: "TCP" })) },
    metadata: {
      ...object.metadata,
      uid: "uid-svc",
      resourceVersion: "9",
      managedFields: [{ manager: "kinglet", operation: "Apply", apiVersion: "v1", fieldsV1 }],
    },
  };
}

const SERVICE_FIELDS = {
  "f:metadata": { "f:ownerReferences": { 'k:{"uid":"uid-web"}': {} } },
  "f:spec": { "f:ports": { 'k:{"port":80,"protocol":"TCP"}': { ".": {}, "f:port": {} } } },
};

Deno.test("a new applier (a restarted process) skips a child its field manager left as desired, and applies one it did not", async () => {
  const applied: KubeObject[] = [];
  const applier = new ChildApplier((_resource, object) => {
    applied.push(object);
    return Promise.resolve(object);
  });
  const cache = new Store({ transform: projectOwned, memo: appliedMemo("kinglet") });
  applier.track(SERVICES, cache);
  const signal = new AbortController().signal;
  cache.apply({ type: "applied", object: asApplied(desired(), SERVICE_FIELDS) });
  await applier.apply(SERVICES, desired(), cache, signal);
  assert.equal(applied.length, 0);

  const moved = { ...desired(), spec: { ports: [{ port: 81 }] } };
  await applier.apply(SERVICES, moved, cache, signal);
  assert.equal(applied.length, 1, "a desired state the child does not hold is applied");

  const other = new Store({ transform: projectOwned, memo: appliedMemo("someone-else") });
  other.apply({ type: "applied", object: asApplied(desired(), SERVICE_FIELDS) });
  await applier.apply(SERVICES, desired(), other, signal);
  assert.equal(applied.length, 2, "another manager's apply tells nothing of kinglet's");
});

Deno.test("a cache behind the applier's own write is no drift: an older generation told after the apply is not applied over", async () => {
  const applied: KubeObject[] = [];
  const applier = new ChildApplier((_resource, object) => {
    applied.push(object);
    return Promise.resolve({ ...object, metadata: { ...object.metadata, generation: 3 } });
  });
  const cache = new Store();
  applier.track(SERVICES, cache);
  const signal = new AbortController().signal;
  const child = (generation: number, port: number): KubeObject => ({
    ...desired(),
    metadata: { ...desired().metadata, generation },
    spec: { ports: [{ port }] },
  });
  // Someone changed the child (generation 2) before the apply; the cache tells it only after.
  cache.apply({ type: "applied", object: child(1, 80) });
  await applier.apply(SERVICES, desired(), cache, signal);
  cache.apply({ type: "applied", object: child(2, 81) });
  await applier.apply(SERVICES, desired(), cache, signal);
  assert.equal(applied.length, 1, "generation 2 is older than the apply's 3");
  // Once the cache has seen the apply, a later change is drift again.
  cache.apply({ type: "applied", object: child(3, 80) });
  cache.apply({ type: "applied", object: child(4, 82) });
  await applier.apply(SERVICES, desired(), cache, signal);
  assert.equal(applied.length, 2);
});
