/**
 * lib/deploy refuses a description it cannot derive the files from, before
 * writing anything, and says which spec and which field.
 */
import assert from "node:assert/strict";
import { deployFiles, type OperatorDescription, writeDeployFiles } from "../../lib/deploy/mod.ts";
import { CONFIG_MAPS, type KubeObject, type Resource } from "../../lib/kube/mod.ts";
import type { ControllerSpec } from "../../lib/runtime/mod.ts";

const spec = (overrides: Partial<ControllerSpec<KubeObject>>): ControllerSpec<KubeObject> => ({
  name: "mirror",
  resource: CONFIG_MAPS,
  reconcile: () => Promise.resolve({}),
  ...overrides,
});

const base: OperatorDescription = {
  name: "mirror-operator",
  envPrefix: "MIRROR_",
  image: "ghcr.io/example/mirror-operator:0.1.0",
  controllers: [spec({})],
};

function refused(description: Partial<OperatorDescription>, message: RegExp): void {
  assert.throws(() => deployFiles({ ...base, ...description }), (error: unknown) => {
    assert.ok(error instanceof TypeError, String(error));
    assert.match(error.message, message);
    return true;
  });
}

Deno.test("a spec without a resource is refused, naming the spec and the field", () => {
  refused(
    { controllers: [spec({}), spec({ name: "reflection", resource: undefined })] },
    /the spec 'reflection' \(controllers\[1\]\) has no 'resource'/,
  );
});

Deno.test("a spec whose resource has no plural is refused, naming the spec and the field", () => {
  const resource = { ...CONFIG_MAPS, plural: "" } as Resource;
  refused({ controllers: [spec({ resource })] }, /the spec 'mirror' .* has no 'resource.plural'/);
});

Deno.test("an owned kind RBAC cannot name is refused, naming the spec and the field", () => {
  const owned = { ...CONFIG_MAPS, plural: undefined } as unknown as Resource;
  refused(
    { controllers: [spec({ owns: [{ resource: owned }] })] },
    /controller 'mirror': 'owns\[0\]\.resource' has no 'plural'/,
  );
});

Deno.test("a declared rule without a reason is refused, naming the spec and the rule", () => {
  const rbac = [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"], reason: "" }];
  refused({ controllers: [spec({ rbac })] }, /controller 'mirror': 'rbac\[0\]' needs a 'reason'/);
});

Deno.test("a spec without a name is refused", () => {
  refused({ controllers: [spec({ name: "" })] }, /'controllers\[0\]' has no 'name'/);
});

Deno.test("an invalid name, namespace, prefix, image or memory limit is refused, naming the field", () => {
  refused({ name: "Mirror_Operator" }, /'name' "Mirror_Operator" is not a DNS label/);
  refused({ namespace: "-edge" }, /'namespace' "-edge" is not a DNS label/);
  refused({ envPrefix: "mirror" }, /'envPrefix' "mirror" is not a variable prefix/);
  refused({ image: "" }, /'image' "" is no image reference/);
  refused({ memoryLimit: "256MB" }, /'memoryLimit' "256MB" is not a quantity in Ki, Mi or Gi/);
  refused({ controllers: [] }, /'controllers' is empty/);
  refused({ crds: ["crds/a.yaml", "other/b.yaml"] }, /'crds' .* are not YAML files of one folder/);
});

Deno.test("nothing is written for a refused description", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-deploy-refused-" });
  try {
    await assert.rejects(
      writeDeployFiles({ ...base, controllers: [spec({ resource: undefined })] }, dir),
      TypeError,
    );
    assert.deepEqual(await Array.fromAsync(Deno.readDir(dir)), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
