import assert from "node:assert/strict";
import { accountObjects, accountUser } from "../../lib/testing/_account_objects.ts";
import { controllerRules, leaderElectionRules } from "../../lib/runtime/rbac/mod.ts";
import { CONFIG_MAPS, DEPLOYMENTS, type KubeObject } from "../../lib/kube/mod.ts";

const rules = controllerRules([{
  name: "settings",
  resource: CONFIG_MAPS,
  reconcile: (_object: KubeObject) => Promise.resolve({}),
}]);

Deno.test("a test account is a ServiceAccount, then each role before its binding", () => {
  const objects = accountObjects({
    namespace: "test-1",
    name: "op",
    rules,
    namespaced: { default: leaderElectionRules("op-lease") },
  });
  assert.deepEqual(
    objects.map(({ body }) => [body.kind, body.metadata.namespace, body.metadata.name]),
    [
      ["ServiceAccount", "test-1", "op"],
      ["ClusterRole", undefined, "test-1-op"],
      ["ClusterRoleBinding", undefined, "test-1-op"],
      ["Role", "default", "test-1-op"],
      ["RoleBinding", "default", "test-1-op"],
    ],
  );
  assert.deepEqual(objects.map(({ resource }) => resource.plural), [
    "serviceaccounts",
    "clusterroles",
    "clusterrolebindings",
    "roles",
    "rolebindings",
  ]);
  for (const { body } of objects.filter(({ body }) => body.kind.endsWith("Binding"))) {
    const kind = body.kind.replace(/Binding$/, "");
    assert.deepEqual(body.roleRef, {
      apiGroup: "rbac.authorization.k8s.io",
      kind,
      name: "test-1-op",
    });
    assert.deepEqual(body.subjects, [{ kind: "ServiceAccount", name: "op", namespace: "test-1" }]);
  }
});

Deno.test("a test account's roles hold the rules exactly, without their reasons", () => {
  const [, clusterRole, , role] = accountObjects({
    namespace: "test-1",
    name: "op",
    rules,
    namespaced: { default: leaderElectionRules("op-lease") },
  });
  const bare = (list: typeof rules) =>
    list.map(({ reasons: _, clusterScoped: __, ...rule }) => rule);
  assert.deepEqual(clusterRole?.body.rules, bare(rules));
  assert.deepEqual(role?.body.rules, bare(leaderElectionRules("op-lease")));
  assert.ok(clusterRole?.body.rules?.every((rule) => !("reasons" in rule)));
});

Deno.test("a test account without rules has no role, and RBAC sees it as a service account user", () => {
  const objects = accountObjects({ namespace: "t", name: "op", rules: [], namespaced: { a: [] } });
  assert.deepEqual(objects.map(({ body }) => body.kind), ["ServiceAccount"]);
  assert.equal(accountUser("t", "op"), "system:serviceaccount:t:op");
});

Deno.test("a test account confined by its specs' ownership policy gets the policy and its binding last", () => {
  const spec = {
    name: "settings",
    resource: CONFIG_MAPS,
    owns: [{ resource: DEPLOYMENTS }],
    reconcile: (_object: KubeObject) => Promise.resolve({}),
  };
  const objects = accountObjects({
    namespace: "test-1",
    name: "op",
    rules: controllerRules([spec]),
    namespaced: {},
    policy: [spec],
  });
  const [policy, binding] = objects.slice(-2).map(({ body }) => body);
  assert.equal(policy?.kind, "ValidatingAdmissionPolicy");
  assert.equal(policy?.metadata.name, "test-1-op-owned-only");
  assert.match(JSON.stringify(policy), new RegExp(accountUser("test-1", "op")));
  assert.deepEqual(binding?.spec, {
    policyName: "test-1-op-owned-only",
    validationActions: ["Deny"],
  });
  const bare = accountObjects({
    namespace: "test-1",
    name: "op",
    rules,
    namespaced: {},
    policy: [{ ...spec, owns: [] }],
  });
  assert.deepEqual(bare.map(({ body }) => body.kind), [
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
  ]);
});
