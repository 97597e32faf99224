import assert from "node:assert/strict";
import type { KubeObject } from "../../lib/kube/types.ts";
import { type CacheKeyRow, cacheKeysPage } from "../../lib/runtime/cache/cache_debug.ts";
import { resourceName, SECRETS } from "../../lib/kube/resources.ts";
import { Store } from "../../lib/runtime/cache/store.ts";

function secret(name: string, resourceVersion: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { namespace: "db", name, uid: `uid-${name}`, resourceVersion },
    data: { password: btoa("hunter2-" + name) },
  };
}

function budgetStore(maxObjects: number): Store {
  return new Store({ budget: { maxObjects }, fetch: () => Promise.resolve(undefined) });
}

Deno.test("a page lists keys in order with resourceVersion, residency and size", () => {
  const store = budgetStore(2);
  for (const [name, rv] of [["c", "30"], ["a", "10"], ["b", "20"]] as const) {
    store.apply({ type: "applied", object: secret(name, rv) });
  }
  const page = cacheKeysPage("secrets", store);
  assert.equal(page.keys, 3);
  assert.equal(page.continue, undefined);
  assert.deepEqual(page.items.map((i) => [i.key, i.resourceVersion, i.resident]), [
    ["db/a", "10", true],
    ["db/b", "20", true],
    ["db/c", "30", false],
  ]);
  const [a, , c] = page.items as [CacheKeyRow, CacheKeyRow, CacheKeyRow];
  assert.ok(a.bytes! > 0);
  assert.equal(c.bytes, null, "an evicted object has no size in memory");
  assert.equal(
    page.items.filter((i) => i.resident).reduce((sum, i) => sum + i.bytes!, 0),
    store.stats().bytes,
    "the sizes are those the budget counts",
  );
});

Deno.test("pages follow each other through continue tokens until the last, which has none", () => {
  const store = new Store();
  for (let i = 0; i < 7; i++) {
    store.apply({ type: "applied", object: secret(`s${i}`, String(i + 1)) });
  }
  const seen: string[] = [];
  let token: string | undefined;
  let pages = 0;
  do {
    const page = cacheKeysPage("secrets", store, { limit: "3", continue: token ?? null });
    seen.push(...page.items.map((i) => i.key));
    token = page.continue;
    pages++;
  } while (token);
  assert.equal(pages, 3);
  assert.deepEqual(seen, store.keys().sort());
});

Deno.test("a key deleted between pages does not shift the next page", () => {
  const store = new Store();
  for (const name of ["a", "b", "c", "d"]) {
    store.apply({ type: "applied", object: secret(name, "1") });
  }
  const first = cacheKeysPage("secrets", store, { limit: "2" });
  store.apply({ type: "deleted", object: secret("a", "2") });
  const second = cacheKeysPage("secrets", store, { limit: "2", continue: first.continue! });
  assert.deepEqual(second.items.map((i) => i.key), ["db/c", "db/d"]);
});

Deno.test("a page never carries object contents", () => {
  const store = new Store();
  store.apply({ type: "applied", object: secret("creds", "5") });
  const text = JSON.stringify(cacheKeysPage("secrets", store));
  assert.ok(!text.includes(btoa("hunter2-creds")));
  assert.ok(!text.includes("password"));
});

Deno.test("a bad limit or continue token is refused, naming what was given", () => {
  const store = new Store();
  assert.throws(() => cacheKeysPage("x", store, { limit: "0" }), /'limit'.*got "0"/);
  assert.throws(() => cacheKeysPage("x", store, { limit: "many" }), /'limit'.*got "many"/);
  assert.throws(() => cacheKeysPage("x", store, { limit: "5001" }), RangeError);
  assert.throws(() => cacheKeysPage("x", store, { continue: "%%%" }), /'continue'.*"%%%"/);
});

Deno.test("caches are named by plural and group, core ones by plural alone", () => {
  assert.equal(resourceName(SECRETS), "secrets");
  assert.equal(
    resourceName({
      group: "apps",
      version: "v1",
      plural: "deployments",
      kind: "Deployment",
      namespaced: true,
    }),
    "deployments.apps",
  );
});
