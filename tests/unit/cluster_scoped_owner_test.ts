/** A child in a namespace maps back to its cluster-scoped controller owner by the owner's name alone. */
import assert from "node:assert/strict";
import { CONFIG_MAPS } from "../../lib/kube/mod.ts";
import { controllerOwnerKeys } from "../../lib/runtime/controller/relations.ts";

const SITES = {
  group: "example.dev",
  version: "v1alpha1",
  plural: "sites",
  kind: "Site",
  namespaced: false,
};

Deno.test("a namespaced child of a cluster-scoped owner maps to the owner's name, not a key in its namespace", () => {
  const ownerOf = controllerOwnerKeys(SITES);
  const child = {
    ...CONFIG_MAPS,
    metadata: {
      namespace: "demo",
      name: "edge-site",
      ownerReferences: [{
        apiVersion: "example.dev/v1alpha1",
        kind: "Site",
        name: "edge",
        uid: "u-1",
        controller: true,
      }],
    },
  };
  assert.deepEqual(ownerOf(child), ["edge"]);
  assert.deepEqual(controllerOwnerKeys({ ...SITES, namespaced: true })(child), ["demo/edge"]);
});
