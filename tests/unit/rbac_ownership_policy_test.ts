import assert from "node:assert/strict";
import {
  CONFIG_MAPS,
  DEPLOYMENTS,
  type KubeObject,
  NAMESPACES,
  type Resource,
  STATEFUL_SETS,
} from "../../lib/kube/mod.ts";
import type { ControllerSpec } from "../../lib/runtime/mod.ts";
import {
  controllerRules,
  type OwnershipPolicy,
  ownershipPolicy,
} from "../../lib/runtime/rbac/mod.ts";

const SITES: Resource = {
  group: "example.com",
  version: "v1",
  plural: "sites",
  kind: "Site",
  namespaced: true,
};
const USER = "system:serviceaccount:sites-system:sites";

function spec(overrides: Partial<ControllerSpec<KubeObject>> = {}): ControllerSpec<KubeObject> {
  return { name: "sites", resource: SITES, reconcile: () => Promise.resolve({}), ...overrides };
}

function policyOf(specs: ControllerSpec<KubeObject>[], rules = controllerRules(specs)) {
  return ownershipPolicy(specs, { name: "sites-owned-only", username: USER, rules });
}

/** The policy's spec, typed as far as the tests read it. */
function specOf(p: OwnershipPolicy) {
  return p.policy.spec as {
    failurePolicy: string;
    matchConstraints: {
      resourceRules: { apiGroups: string[]; operations: string[]; resources: string[] }[];
    };
    matchConditions: { expression: string }[];
    variables: { name: string; expression: string }[];
    validations: { expression: string; messageExpression: string; reason: string }[];
  };
}

const SITE_SPEC = spec({
  owns: [
    { resource: NAMESPACES, anywhere: true },
    { resource: STATEFUL_SETS },
  ],
  rbac: [{
    apiGroups: [""],
    resources: ["persistentvolumeclaims"],
    verbs: ["list", "delete"],
    reason: "cleanup deletes the claims of a site's StatefulSets",
  }],
});

Deno.test("every kind an operator writes but its primary is confined, operation by operation", () => {
  const p = policyOf([SITE_SPEC]);
  assert.deepEqual(
    p.confined.map(({ group, resource, operations }) => `${group}/${resource} ${operations}`),
    [
      "/namespaces CREATE,UPDATE,DELETE",
      "/persistentvolumeclaims DELETE",
      "apps/statefulsets CREATE,UPDATE",
    ],
  );
  assert.deepEqual(specOf(p).matchConstraints.resourceRules, [
    {
      apiGroups: [""],
      apiVersions: ["*"],
      operations: ["CREATE", "UPDATE", "DELETE"],
      resources: ["namespaces"],
    },
    {
      apiGroups: [""],
      apiVersions: ["*"],
      operations: ["DELETE"],
      resources: ["persistentvolumeclaims"],
    },
    {
      apiGroups: ["apps"],
      apiVersions: ["*"],
      operations: ["CREATE", "UPDATE"],
      resources: ["statefulsets"],
    },
  ]);
});

Deno.test("the primary, Events, named objects, reviews and other subresources are left to RBAC", () => {
  const specs = [spec({
    owns: [{ resource: DEPLOYMENTS }],
    rbac: [
      {
        apiGroups: [""],
        resources: ["configmaps"],
        resourceNames: ["sites-settings"],
        verbs: ["get", "patch"],
        reason: "keeps its settings",
      },
      {
        apiGroups: ["authentication.k8s.io"],
        resources: ["tokenreviews"],
        verbs: ["create"],
        reason: "reviews tokens",
      },
      {
        apiGroups: ["apps"],
        resources: ["deployments/scale", "deployments/status"],
        verbs: ["patch"],
        reason: "scales and reports",
      },
    ],
  })];
  const p = policyOf(specs);
  assert.deepEqual(p.confined.map((c) => c.resource), ["deployments", "deployments/status"]);
  assert.deepEqual(p.unconfined.map(({ resource, why }) => `${resource}: ${why}`), [
    "sites/status: the primary resource, which the operator reconciles",
    "sites/finalizers: the primary resource, which the operator reconciles",
    "deployments/scale: a subresource whose request carries none of the object's metadata",
    "configmaps: RBAC names the objects already",
    "tokenreviews: a review, asked and answered, never stored",
    "events: its Events, which carry no owner",
  ]);
});

Deno.test("the policy matches the operator's user alone, and its binding denies", () => {
  const p = policyOf([SITE_SPEC]);
  assert.deepEqual(specOf(p).matchConditions, [{
    name: "operator",
    expression: `request.userInfo.username == '${USER}'`,
  }]);
  assert.equal(specOf(p).failurePolicy, "Fail");
  assert.deepEqual(p.binding, {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name: "sites-owned-only" },
    spec: { policyName: "sites-owned-only", validationActions: ["Deny"] },
  });
});

Deno.test("an object is the operator's by the owner label of its kind or a controller reference to it", () => {
  const p = policyOf([SITE_SPEC, spec({ name: "settings", resource: CONFIG_MAPS })]);
  const owned = specOf(p).variables.find((v) => v.name === "owned")!.expression;
  assert.match(
    owned,
    /object\.metadata\.labels\['kinglet\.dev\/owner-kind'\] in \['Site\.example\.com', 'ConfigMap'\]/,
  );
  assert.match(owned, /has\(r\.controller\) && r\.controller/);
  assert.match(owned, /r\.kind == 'Site' && r\.apiVersion\.startsWith\('example\.com\/'\)/);
  assert.match(owned, /r\.kind == 'ConfigMap' && r\.apiVersion == 'v1'/);
  const was = specOf(p).variables.find((v) => v.name === "wasOwned")!.expression;
  assert.equal(was, owned.replaceAll("object.", "oldObject."));
});

Deno.test("create needs an owned object, update an owned one left owned, delete an owned one or a child's", () => {
  const { validations, variables } = specOf(policyOf([SITE_SPEC]));
  assert.deepEqual(validations.map((v) => v.expression), [
    "request.operation != 'CREATE' || variables.owned",
    "request.operation != 'UPDATE' || (variables.wasOwned && variables.owned)",
    "request.operation != 'DELETE' || variables.wasOwned || variables.madeForChild",
  ]);
  const child = variables.find((v) => v.name === "madeForChild")!.expression;
  assert.match(child, /^has\(oldObject\.metadata\.ownerReferences\)/);
  assert.match(child, /r\.kind == 'StatefulSet' && r\.apiVersion\.startsWith\('apps\/'\)/);
  assert.ok(validations.every((v) => v.reason === "Forbidden"));
  assert.match(validations[1]!.messageExpression, /'sites may not change '/);
  assert.match(validations[1]!.messageExpression, /it is not owned by sites/);
  assert.match(
    validations[1]!.messageExpression,
    /labelled kinglet\.dev\/owner-kind with Site\.example\.com/,
  );
});

Deno.test("an operator that deletes nothing has no delete to extend to its children's objects", () => {
  const { validations, variables } = specOf(
    policyOf([spec({ owns: [{ resource: DEPLOYMENTS }] })]),
  );
  assert.deepEqual(variables.map((v) => v.name), ["owned", "wasOwned"]);
  assert.equal(validations[2]!.expression, "request.operation != 'DELETE' || variables.wasOwned");
});

Deno.test("an operator that writes only its primary confines nothing", () => {
  assert.deepEqual(policyOf([spec()]).confined, []);
});

Deno.test("a policy that cannot be derived is refused, naming what is missing", () => {
  assert.throws(
    () => ownershipPolicy([], { name: "x-owned-only", username: USER }),
    /Cannot derive the ownership policy "x-owned-only": no controller specs/,
  );
  assert.throws(
    () => ownershipPolicy([spec()], { name: "x-owned-only", username: "" }),
    /'username' is empty/,
  );
  const { kind: _, ...noKind } = SITES;
  assert.throws(
    () =>
      ownershipPolicy([{ name: "sites", resource: noKind as Resource }], {
        name: "x-owned-only",
        username: USER,
      }),
    /'specs\[0\]\.resource' has no 'kind'/,
  );
});

Deno.test("objects a rule names stay RBAC's where the kind is confined besides", () => {
  const specs = [spec({
    owns: [{ resource: CONFIG_MAPS }],
    rbac: [{
      apiGroups: [""],
      resources: ["configmaps"],
      resourceNames: ["sites-settings"],
      verbs: ["patch"],
      reason: "keeps its settings",
    }],
  })];
  const { matchConstraints } = specOf(policyOf(specs)) as unknown as {
    matchConstraints: { excludeResourceRules?: unknown[] };
  };
  assert.deepEqual(matchConstraints.excludeResourceRules, [{
    apiGroups: [""],
    apiVersions: ["*"],
    operations: ["UPDATE"],
    resources: ["configmaps"],
    resourceNames: ["sites-settings"],
  }]);
  assert.equal(
    (specOf(policyOf([SITE_SPEC])) as unknown as {
      matchConstraints: { excludeResourceRules?: unknown[] };
    }).matchConstraints.excludeResourceRules,
    undefined,
  );
});
