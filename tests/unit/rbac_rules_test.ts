import assert from "node:assert/strict";
import {
  CONFIG_MAPS,
  DEPLOYMENTS,
  type KubeObject,
  NODES,
  type Resource,
  SECRETS,
  SERVICES,
} from "../../lib/kube/mod.ts";
import type { ControllerSpec } from "../../lib/runtime/mod.ts";
import {
  controllerRules,
  type ExplainedRule,
  leaderElectionRules,
} from "../../lib/runtime/rbac/mod.ts";

const APPS: Resource = {
  group: "example.com",
  version: "v1",
  plural: "apps",
  kind: "App",
  namespaced: true,
};

function spec(overrides: Partial<ControllerSpec<KubeObject>> = {}): ControllerSpec<KubeObject> {
  return { name: "apps", resource: APPS, reconcile: () => Promise.resolve({}), ...overrides };
}

/** `group resources verbs` per rule, the shape a reviewer reads. */
function summary(rules: readonly ExplainedRule[]): string[] {
  return rules.map((r) =>
    `${r.apiGroups.join(",")} ${r.resources.join(",")}` +
    `${r.resourceNames ? ` [${r.resourceNames.join(",")}]` : ""} ${r.verbs.join(",")}`
  );
}

Deno.test("a bare spec gets its primary cached, its status patched and its Events written", () => {
  assert.deepEqual(summary(controllerRules([spec()])), [
    "example.com apps get,list,watch",
    "example.com apps/status patch",
    "events.k8s.io events create,patch",
  ]);
});

Deno.test("no spec needs no rule", () => {
  assert.deepEqual(controllerRules([]), []);
});

Deno.test("owned kinds are applied, watched kinds only cached, and the owner's finalizers updated", () => {
  const rules = controllerRules([spec({
    owns: [{ resource: DEPLOYMENTS }, { resource: SERVICES }],
    watches: [{ resource: NODES, map: () => [] }],
  })]);
  assert.deepEqual(summary(rules), [
    "example.com apps get,list,watch",
    "example.com apps/status patch",
    "example.com apps/finalizers update",
    "apps deployments list,watch,create,patch",
    " services list,watch,create,patch",
    " nodes list,watch",
    "events.k8s.io events create,patch",
  ]);
});

Deno.test("rules about cluster-scoped resources are told apart, for a Role per namespace", () => {
  const rules = controllerRules([spec({
    watches: [{ resource: NODES, map: () => [] }],
    rbac: [{
      apiGroups: ["authentication.k8s.io"],
      resources: ["tokenreviews"],
      verbs: ["create"],
      clusterScoped: true,
      reason: "reviews tokens",
    }],
  })]);
  assert.deepEqual(
    rules.filter((rule) => rule.clusterScoped).map((rule) => rule.resources[0]),
    ["nodes", "tokenreviews"],
  );
  assert.ok(rules.some((rule) => rule.resources.includes("events") && !rule.clusterScoped));
});

Deno.test("a declared finalizer adds patch on the primary, for its JSON patch", () => {
  const rules = controllerRules([spec({
    finalizer: { name: "example.com/cleanup", cleanup: () => Promise.resolve({}) },
  })]);
  assert.deepEqual(summary(rules)[0], "example.com apps get,list,watch,patch");
  assert.deepEqual(rules[0]!.reasons, [
    "apps: the primary resource, cached (list, watch) and read back (get) when a memory limit " +
    "evicted it (by apps)",
    "apps: finalizer example.com/cleanup, added and removed by a JSON patch with a precondition " +
    "(by apps)",
  ]);
});

Deno.test("a kind owned anywhere adds delete on it and patch on the primary, for the runtime's finalizer", () => {
  const rules = controllerRules([spec({ owns: [{ resource: CONFIG_MAPS, anywhere: true }] })]);
  assert.deepEqual(summary(rules), [
    "example.com apps get,list,watch,patch",
    "example.com apps/status patch",
    "example.com apps/finalizers update",
    " configmaps list,watch,create,patch,delete",
    "events.k8s.io events create,patch",
  ]);
  assert.ok(rules[0]!.reasons.some((reason) => reason.includes("finalizer example.com/children")));
});

Deno.test("a spec with its own applyChild gets only list and watch on what it owns", () => {
  const rules = controllerRules([spec({
    owns: [{ resource: CONFIG_MAPS }],
    applyChild: (_resource, desired) => Promise.resolve(desired),
    rbac: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["update"], reason: "replaced" }],
  })]);
  assert.ok(summary(rules).includes(" configmaps list,watch,update"));
});

Deno.test("the verbs of one resource are united, and resources with the same verbs share a rule", () => {
  const rules = controllerRules([
    spec({ owns: [{ resource: SECRETS }] }),
    spec({
      name: "others",
      resource: { ...APPS, plural: "others", kind: "Other" },
      owns: [{ resource: SERVICES }],
      rbac: [{
        apiGroups: [""],
        resources: ["secrets"],
        verbs: ["create"],
        reason: "creates the credentials once",
      }],
    }),
  ]);
  const core = rules.filter((r) => r.apiGroups[0] === "");
  assert.deepEqual(summary(core), [" secrets,services list,watch,create,patch"]);
  assert.deepEqual(core[0]!.reasons, [
    "secrets, services: owned children, cached (list, watch) and server-side applied: a patch, " +
    "which the API server also authorizes as create for a new child (by apps, others)",
    "secrets: creates the credentials once (by others)",
  ]);
});

Deno.test("extra rules are merged in after the controllers', and the order never changes", () => {
  const extra = [{
    apiGroups: ["apiextensions.k8s.io"],
    resources: ["customresourcedefinitions"],
    resourceNames: ["apps.example.com"],
    verbs: ["get"],
    reason: "checks its CRD at start-up",
  }];
  const first = controllerRules([spec()], { extra });
  assert.deepEqual(
    summary(first).at(-1),
    "apiextensions.k8s.io customresourcedefinitions [apps.example.com] get",
  );
  assert.deepEqual(controllerRules([spec()], { extra }), first);
});

Deno.test("a spec whose RBAC cannot be derived is refused, naming the spec and the field", () => {
  const noPlural = { ...DEPLOYMENTS, plural: "" };
  assert.throws(
    () => controllerRules([spec({ owns: [{ resource: SERVICES }, { resource: noPlural }] })]),
    new TypeError(
      "Cannot derive the RBAC of controller 'apps': 'owns[1].resource' has no 'plural': give " +
        'the lower-case plural RBAC names it by, e.g. "deployments"',
    ),
  );
  const noGroup = { plural: "apps", kind: "App" } as unknown as Resource;
  assert.throws(
    () => controllerRules([spec({ resource: noGroup })]),
    /controller 'apps': 'resource' has no 'group'; give "" for the core group/,
  );
  assert.throws(
    () =>
      controllerRules([spec({
        rbac: [{ apiGroups: [""], resources: ["pods"], verbs: [], reason: "reads pods" }],
      })]),
    /controller 'apps': 'rbac\[0\]' needs 'verbs', a non-empty list of strings/,
  );
  assert.throws(
    () =>
      controllerRules([spec({
        rbac: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"], reason: " " }],
      })]),
    /'rbac\[0\]' needs a 'reason'/,
  );
  assert.throws(() => controllerRules([spec({ name: "" })]), /a controller spec has no 'name'/);
});

Deno.test("leader election may create Leases and read and replace only its own", () => {
  assert.deepEqual(summary(leaderElectionRules("demo-leader")), [
    "coordination.k8s.io leases create",
    "coordination.k8s.io leases [demo-leader] get,watch,update",
  ]);
  assert.throws(() => leaderElectionRules(""), RangeError);
});
