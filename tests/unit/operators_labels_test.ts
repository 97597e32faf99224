import assert from "node:assert/strict";
import {
  childMetadata,
  FIELD_MANAGER,
  FINALIZER,
  labelSelector,
  recommendedLabels,
  selectorLabels,
} from "../../lib/operators/labels.ts";
import { controllerReference } from "../../lib/runtime/mod.ts";

const shop = {
  apiVersion: "kinglet.dev/v1alpha1",
  kind: "WebApp",
  metadata: { name: "shop", namespace: "default", uid: "6f1c2b1e-0000-4000-8000-000000000001" },
};

Deno.test("kinglet applies as field manager kinglet and finalizes with kinglet.dev/cleanup", () => {
  assert.equal(FIELD_MANAGER, "kinglet");
  assert.equal(FINALIZER, "kinglet.dev/cleanup");
});

Deno.test("selector labels are the lower-cased kind and the primary's name", () => {
  assert.deepEqual(selectorLabels(shop), {
    "app.kubernetes.io/name": "webapp",
    "app.kubernetes.io/instance": "shop",
  });
  assert.deepEqual(recommendedLabels(shop), {
    "app.kubernetes.io/name": "webapp",
    "app.kubernetes.io/instance": "shop",
    "app.kubernetes.io/managed-by": "kinglet",
  });
});

Deno.test("selector labels of two kinds sharing a name differ", () => {
  const other = { ...shop, kind: "InferenceService" };
  assert.notEqual(labelSelector(selectorLabels(shop)), labelSelector(selectorLabels(other)));
});

Deno.test("labelSelector sorts keys into the k=v,k=v form", () => {
  assert.equal(
    labelSelector(selectorLabels(shop)),
    "app.kubernetes.io/instance=shop,app.kubernetes.io/name=webapp",
  );
});

Deno.test("controllerReference points at the primary as its blocking controller", () => {
  assert.deepEqual(controllerReference(shop), {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    name: "shop",
    uid: "6f1c2b1e-0000-4000-8000-000000000001",
    controller: true,
    blockOwnerDeletion: true,
  });
});

Deno.test("controllerReference refuses an object never stored by the API server", () => {
  assert.throws(
    () => controllerReference({ ...shop, metadata: { name: "shop" } }),
    { name: "TypeError", message: /WebApp shop: it has no metadata\.uid; render children only/ },
  );
});

Deno.test("childMetadata names the child after the owner plus a suffix, in its namespace", () => {
  const meta = childMetadata(shop, "-headless");
  assert.equal(meta.name, "shop-headless");
  assert.equal(meta.namespace, "default");
  assert.deepEqual(meta.labels, recommendedLabels(shop));
  assert.equal(meta.ownerReferences?.[0]?.uid, shop.metadata.uid);
  assert.throws(
    () => childMetadata({ ...shop, metadata: { name: "shop", uid: "u" } }),
    { name: "TypeError", message: /it has no metadata\.namespace/ },
  );
});
