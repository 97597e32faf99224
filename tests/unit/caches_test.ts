import assert from "node:assert/strict";
import { CONFIG_MAPS, DEPLOYMENTS, type KubeObject } from "../../lib/kube/mod.ts";
import { type CacheClient, Caches } from "../../lib/runtime/cache/caches.ts";

// Registration never calls the client; only running the caches does.
const client = {} as CacheClient;
const project = (object: KubeObject): KubeObject => ({ metadata: object.metadata });

Deno.test("caches share one cache between registrations of the same shape", () => {
  const caches = new Caches({ client });
  const a = caches.reflector(DEPLOYMENTS, { transform: project, labelSelector: "app=web" });
  const b = caches.reflector(DEPLOYMENTS, { labelSelector: "app=web", transform: project });
  assert.equal(a, b);
  assert.equal(caches.entries().length, 1);
  assert.equal(caches.get(DEPLOYMENTS, { transform: project, labelSelector: "app=web" }), a);
});

Deno.test("a cache's transform is part of its identity, whoever registers first", () => {
  const caches = new Caches({ client });
  const whole = caches.reflector(DEPLOYMENTS);
  const projected = caches.reflector(DEPLOYMENTS, { transform: project });
  const similar = caches.reflector(DEPLOYMENTS, { transform: (o) => project(o) });
  assert.notEqual(whole, projected);
  assert.notEqual(projected, similar, "an equal closure is another transform");
  assert.equal(caches.get(DEPLOYMENTS), whole);
  assert.equal(caches.get(DEPLOYMENTS, { transform: project }), projected);
});

Deno.test("metadata-only mode, label selector and budget each make a cache of their own", () => {
  const caches = new Caches({ client });
  const plain = caches.reflector(CONFIG_MAPS);
  const variants = [
    caches.reflector(CONFIG_MAPS, { metadataOnly: true }),
    caches.reflector(CONFIG_MAPS, { labelSelector: "a=b" }),
    caches.reflector(CONFIG_MAPS, { budget: { maxObjects: 10 } }),
  ];
  assert.equal(new Set([plain, ...variants]).size, 4);
});

Deno.test("further caches of one resource are named apart in /debug/cache and in metrics", () => {
  const caches = new Caches({ client });
  caches.reflector(DEPLOYMENTS);
  caches.reflector(DEPLOYMENTS, { metadataOnly: true });
  caches.reflector(CONFIG_MAPS);
  assert.deepEqual(
    caches.entries().map(({ name, kind }) => [name, kind]),
    [["deployments.apps", "Deployment"], ["deployments.apps#2", "Deployment#2"], [
      "configmaps",
      "ConfigMap",
    ]],
  );
});

Deno.test("a cache's memo is part of its identity: the same function shares, another does not", () => {
  const caches = new Caches({ client });
  const memo = (object: KubeObject) => object.metadata?.generation;
  const a = caches.reflector(DEPLOYMENTS, { memo });
  const b = caches.reflector(DEPLOYMENTS, { memo });
  const other = caches.reflector(DEPLOYMENTS, { memo: (o) => memo(o) });
  assert.equal(a, b);
  assert.notEqual(a, other);
  assert.notEqual(a, caches.reflector(DEPLOYMENTS));
});
