import assert from "node:assert/strict";
import {
  CONFIG_MAPS,
  CUSTOM_RESOURCE_DEFINITIONS,
  DEPLOYMENTS,
  EVENTS,
  NAMESPACES,
  resourcePath,
} from "../../lib/kube/resources.ts";

Deno.test("resourcePath puts the core group under /api and others under /apis", () => {
  assert.equal(resourcePath(CONFIG_MAPS), "/api/v1/configmaps");
  assert.equal(
    resourcePath(CONFIG_MAPS, { namespace: "shop" }),
    "/api/v1/namespaces/shop/configmaps",
  );
  assert.equal(
    resourcePath(DEPLOYMENTS, { namespace: "shop", name: "web" }),
    "/apis/apps/v1/namespaces/shop/deployments/web",
  );
  assert.equal(
    resourcePath(EVENTS, { namespace: "a" }),
    "/apis/events.k8s.io/v1/namespaces/a/events",
  );
  assert.equal(
    resourcePath(CUSTOM_RESOURCE_DEFINITIONS, { name: "widgets.test.kinglet.dev" }),
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.test.kinglet.dev",
  );
});

Deno.test("resourcePath addresses subresources and encodes segments", () => {
  assert.equal(
    resourcePath(NAMESPACES, { name: "shop", subresource: "status" }),
    "/api/v1/namespaces/shop/status",
  );
  assert.equal(
    resourcePath(CONFIG_MAPS, { namespace: "a", name: "x/y?z" }),
    "/api/v1/namespaces/a/configmaps/x%2Fy%3Fz",
  );
});

Deno.test("resourcePath rejects misuse with a message that says what was wrong", () => {
  assert.throws(() => resourcePath(NAMESPACES, { namespace: "a", name: "b" }), {
    name: "TypeError",
    message: 'Cannot address namespaces "b": Namespace is cluster-scoped, got namespace "a"',
  });
  assert.throws(
    () => resourcePath(CONFIG_MAPS, { namespace: "a", subresource: "status" }),
    /a subresource needs a name/,
  );
  assert.throws(() => resourcePath(CONFIG_MAPS, { namespace: "", name: "b" }), /must not be empty/);
});
