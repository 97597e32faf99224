import assert from "node:assert/strict";
import { parse } from "yaml";
import { kingletNodeWebhooks, kingletRbac } from "../../lib/cli/rbac.ts";
import type { KubeObject } from "../../lib/kube/mod.ts";
import type { PolicyRule } from "../../lib/runtime/rbac/mod.ts";

Deno.test("the RBAC kinglet install applies is deploy/'s, object for object", async () => {
  const files = [
    "serviceaccount",
    "clusterrole",
    "clusterrolebinding",
    "role",
    "rolebinding",
    "webhook-role",
    "webhook-rolebinding",
    "validatingadmissionpolicy",
    "validatingadmissionpolicybinding",
  ];
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

function rulesOf(object: KubeObject | undefined): PolicyRule[] {
  return (object as { rules?: PolicyRule[] } | undefined)?.rules ?? [];
}

Deno.test("confined to a namespace, kinglet's rights there come from a Role and the ClusterRole keeps what is in no namespace", () => {
  const objects = kingletRbac("kinglet-system", { watchNamespaces: ["tenant-a"] });
  assert.deepEqual(
    objects.map((o) => `${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`),
    [
      "ServiceAccount/kinglet-system/kinglet",
      "ClusterRole//kinglet",
      "ClusterRoleBinding//kinglet",
      "Role/tenant-a/kinglet",
      "RoleBinding/tenant-a/kinglet",
      "Role/kinglet-system/kinglet-leader-election",
      "RoleBinding/kinglet-system/kinglet-leader-election",
      "Role/kinglet-system/kinglet-webhook-certificate",
      "RoleBinding/kinglet-system/kinglet-webhook-certificate",
      "ValidatingAdmissionPolicy//kinglet-owned-only",
      "ValidatingAdmissionPolicyBinding//kinglet-owned-only",
    ],
  );
  const rules = (kind: string) => rulesOf(objects.find((o) => o.kind === kind));
  assert.deepEqual(rules("ClusterRole").map((r) => r.resources).flat(), [
    "storageclasses",
    "customresourcedefinitions",
    "customresourcedefinitions",
    "tokenreviews",
    "subjectaccessreviews",
    "validatingwebhookconfigurations",
  ]);
  const everything = rulesOf(kingletRbac()[1]);
  const sorted = (list: PolicyRule[]) => list.map((rule) => JSON.stringify(rule)).sort();
  assert.deepEqual(sorted([...rules("Role"), ...rules("ClusterRole")]), sorted(everything));
  assert.ok(rules("Role").some((r) => r.resources.includes("secrets")));
  assert.deepEqual((objects[4] as { subjects?: unknown }).subjects, [
    { kind: "ServiceAccount", name: "kinglet", namespace: "kinglet-system" },
  ]);
  assert.throws(() => kingletRbac("kinglet-system", { watchNamespaces: [""] }), RangeError);
});

Deno.test("the webhook configurations a node's install applies are deploy/systemd/webhooks.yaml's", async () => {
  const text = await Deno.readTextFile(
    new URL("../../deploy/systemd/webhooks.yaml", import.meta.url),
  );
  const deployed = text.split(/^---$/m).map((document) => parse(document));
  const installed = kingletNodeWebhooks().map(({ resource: _, ...object }) => object);
  assert.deepEqual(installed, deployed);
  assert.equal(
    (installed[0] as { webhooks: { clientConfig: { url: string } }[] }).webhooks[0]!.clientConfig
      .url,
    "https://127.0.0.1:9443/validate/kinglet.dev/databaseclusters",
  );
});
