import assert from "node:assert/strict";
import { parse } from "yaml";
import { kingletRbac } from "../../lib/cli/rbac.ts";

Deno.test("the RBAC kinglet install applies is deploy/'s, object for object", async () => {
  const files = ["serviceaccount", "clusterrole", "clusterrolebinding", "role", "rolebinding"];
  const deployed = await Promise.all(
    files.map(async (file) =>
      parse(await Deno.readTextFile(new URL(`../../deploy/${file}.yaml`, import.meta.url)))
    ),
  );
  const installed = kingletRbac().map(({ resource: _, ...object }) => object);
  assert.deepEqual(installed, deployed);
});

Deno.test("the RBAC follows the namespace it is installed in", () => {
  const objects = kingletRbac("edge-ops");
  assert.equal(objects[0]!.metadata?.namespace, "edge-ops");
  assert.deepEqual(
    (objects[2] as { subjects?: unknown }).subjects,
    [{ kind: "ServiceAccount", name: "kinglet", namespace: "edge-ops" }],
  );
});
