/**
 * lib/deploy for an operator that serves webhooks: the sample validates and
 * defaults mirrors and converts them between two versions. Its files gain
 * the configurations (by Service in the cluster, by loopback URL on a node),
 * the Service, the container's port, the kustomize patch of the converted
 * CRD, and the least RBAC to inject its CA bundle and keep its certificate;
 * the handlers themselves are never called.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { parse } from "yaml";
import { deployFiles, type OperatorDescription } from "../../lib/deploy/mod.ts";
import { nodeGrant } from "../../lib/deploy/node_credentials.ts";
import type { KubeObject, Resource } from "../../lib/kube/mod.ts";
import {
  type AdmissionWebhook,
  defineConversion,
  webhookName,
} from "../../lib/runtime/webhook/spec.ts";
import { SAMPLE } from "../_support/operator_description.ts";

const MIRRORS = SAMPLE.controllers[0]!.resource as Resource;
const POLICIES: Resource = {
  group: "example.dev",
  version: "v1",
  plural: "policies",
  kind: "Policy",
  namespaced: false,
};
const never = () => {
  throw new Error("deploy called a handler");
};
const mirrorsWebhook: AdmissionWebhook<KubeObject & { spec: { size: number } }> = {
  resource: MIRRORS,
  validate: never,
  default: never,
  operations: ["CREATE", "UPDATE", "DELETE"],
  failurePolicy: "Ignore",
  timeoutSeconds: 5,
  matchConditions: [{ name: "not-gc", expression: "request.userInfo.username != 'gc'" }],
};
const policiesWebhook: AdmissionWebhook = { resource: POLICIES, validate: never };
const conversion = defineConversion({
  resource: MIRRORS,
  hub: "v1alpha1",
  versions: { v1alpha2: { toHub: never, fromHub: never } },
});
const WITH_WEBHOOKS: OperatorDescription = {
  ...SAMPLE,
  webhooks: { admission: [mirrorsWebhook, policiesWebhook], conversions: [conversion] },
};

const files = deployFiles(WITH_WEBHOOKS);
const yaml = <T>(path: string): T => parse(files.get(path)!) as T;
const documents = (path: string) =>
  parseAllDocuments(files.get(path)!).map((document) => document.toJS());

type Entry = {
  name: string;
  clientConfig: { service?: Record<string, unknown>; url?: string };
  rules: {
    apiGroups: string[];
    apiVersions: string[];
    operations: string[];
    resources: string[];
    scope: string;
  }[];
  namespaceSelector?: unknown;
  matchConditions?: unknown;
  failurePolicy: string;
  timeoutSeconds: number;
  sideEffects: string;
  admissionReviewVersions: string[];
  matchPolicy: string;
};
type Configuration = { kind: string; metadata: { name: string }; webhooks: Entry[] };

Deno.test("the webhook files join the deploy files, and the kustomization applies them", () => {
  const added = [...files.keys()].filter((path) => !deployFiles(SAMPLE).has(path));
  assert.deepEqual(added, [
    "deploy/webhook-role.yaml",
    "deploy/webhook-rolebinding.yaml",
    "deploy/webhooks.yaml",
    "deploy/systemd/webhooks.yaml",
  ]);
  const kustomization = yaml<{ resources: string[]; patches: unknown[] }>(
    "deploy/kustomization.yaml",
  );
  assert.deepEqual(kustomization.resources.slice(6), [
    "rolebinding.yaml",
    "webhook-role.yaml",
    "webhook-rolebinding.yaml",
    "validatingadmissionpolicy.yaml",
    "validatingadmissionpolicybinding.yaml",
    "deployment.yaml",
    "webhooks.yaml",
  ]);
});

Deno.test("in the cluster the configurations name the Service, each entry as the runtime serves it", () => {
  const [service, mutating, validating] = documents("deploy/webhooks.yaml") as [
    { kind: string; metadata: { name: string; namespace: string }; spec: unknown },
    Configuration,
    Configuration,
  ];
  assert.deepEqual(service.metadata.name, "mirror-operator-webhook");
  assert.deepEqual(service.spec, {
    selector: { "app.kubernetes.io/name": "mirror-operator" },
    ports: [{ name: "webhook", port: 443, targetPort: "webhook", protocol: "TCP" }],
  });
  assert.equal(mutating.kind, "MutatingWebhookConfiguration");
  assert.equal(mutating.metadata.name, "mirror-operator-mutating");
  assert.deepEqual(mutating.webhooks.map((w) => w.name), [webhookName("mutate", MIRRORS)]);
  assert.equal(validating.kind, "ValidatingWebhookConfiguration");
  assert.equal(validating.metadata.name, "mirror-operator-validating");
  assert.deepEqual(validating.webhooks.map((w) => w.name), [
    "vmirrors.example.dev",
    "vpolicies.example.dev",
  ]);
  const [mirrors, policies] = validating.webhooks as [Entry, Entry];
  assert.deepEqual(mirrors.clientConfig, {
    service: {
      namespace: "mirror-operator-system",
      name: "mirror-operator-webhook",
      path: "/validate/example.dev/mirrors",
      port: 443,
    },
  });
  assert.equal(mutating.webhooks[0]!.clientConfig.service!.path, "/mutate/example.dev/mirrors");
  assert.deepEqual(mirrors.rules, [{
    apiGroups: ["example.dev"],
    apiVersions: ["v1alpha1"],
    operations: ["CREATE", "UPDATE", "DELETE"],
    resources: ["mirrors"],
    scope: "Namespaced",
  }]);
  assert.deepEqual(mutating.webhooks[0]!.rules[0]!.operations, ["CREATE", "UPDATE"]);
  assert.deepEqual(mirrors.namespaceSelector, {
    matchExpressions: [{
      key: "kubernetes.io/metadata.name",
      operator: "NotIn",
      values: ["kube-system", "mirror-operator-system"],
    }],
  });
  assert.deepEqual(mirrors.matchConditions, mirrorsWebhook.matchConditions);
  assert.deepEqual(
    [mirrors.failurePolicy, mirrors.timeoutSeconds, mirrors.sideEffects, mirrors.matchPolicy],
    ["Ignore", 5, "None", "Equivalent"],
  );
  assert.deepEqual(mirrors.admissionReviewVersions, ["v1"]);
  assert.deepEqual(
    [policies.failurePolicy, policies.timeoutSeconds, policies.rules[0]!.scope],
    ["Fail", 10, "Cluster"],
  );
  assert.equal(policies.namespaceSelector, undefined, "a cluster-scoped kind has no namespace");
  assert.equal(policies.matchConditions, undefined);
  const lines = files.get("deploy/webhooks.yaml")!.split("\n");
  const selector = lines.findIndex((line) => line.trim() === "namespaceSelector:");
  assert.match(lines[selector - 2]!, /# Never kube-system nor mirror-operator-system/);
});

Deno.test("on a node the same configurations name the loopback URL, and the node grant applies them", () => {
  const node = documents("deploy/systemd/webhooks.yaml") as Configuration[];
  assert.deepEqual(node.map((c) => c.kind), [
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
  ]);
  assert.deepEqual(node[1]!.webhooks.map((w) => w.clientConfig), [
    { url: "https://127.0.0.1:9443/validate/example.dev/mirrors" },
    { url: "https://127.0.0.1:9443/validate/example.dev/policies" },
  ]);
  const inCluster = documents("deploy/webhooks.yaml").slice(1) as Configuration[];
  const withoutClient = (c: Configuration) =>
    c.webhooks.map(({ clientConfig: _, ...entry }) => entry);
  assert.deepEqual(node.map(withoutClient), inCluster.map(withoutClient));
  const grant = nodeGrant(WITH_WEBHOOKS);
  const applied = grant.objects.slice(-2);
  assert.deepEqual(applied.map((o) => o.resource.plural), [
    "mutatingwebhookconfigurations",
    "validatingwebhookconfigurations",
  ]);
  assert.deepEqual(applied.map(({ resource: _, ...object }) => object), node);
});

Deno.test("a port of its own: the container's, the Service's target and the node's URL follow it", () => {
  const custom = deployFiles({
    ...WITH_WEBHOOKS,
    webhooks: { ...WITH_WEBHOOKS.webhooks, port: 8443 },
  });
  const deployment = parse(custom.get("deploy/deployment.yaml")!) as {
    spec: { template: { spec: { containers: { ports: unknown[] }[] } } };
  };
  assert.deepEqual(deployment.spec.template.spec.containers[0]!.ports, [
    { name: "health", containerPort: 8081 },
    { name: "webhook", containerPort: 8443 },
  ]);
  const node = parseAllDocuments(custom.get("deploy/systemd/webhooks.yaml")!)
    .map((d) => d.toJS()) as Configuration[];
  assert.equal(
    node[0]!.webhooks[0]!.clientConfig.url,
    "https://127.0.0.1:8443/mutate/example.dev/mirrors",
  );
  const plain = parse(deployFiles(SAMPLE).get("deploy/deployment.yaml")!) as typeof deployment;
  assert.deepEqual(plain.spec.template.spec.containers[0]!.ports, [
    { name: "health", containerPort: 8081 },
  ]);
});

Deno.test("the converted CRD is patched to the Service in the kustomization", () => {
  const { patches } = yaml<{ patches: { target: unknown; patch: string }[] }>(
    "deploy/kustomization.yaml",
  );
  assert.deepEqual(patches.map((p) => p.target), [{
    group: "apiextensions.k8s.io",
    kind: "CustomResourceDefinition",
    name: "mirrors.example.dev",
  }]);
  assert.deepEqual(JSON.parse(patches[0]!.patch), [{
    op: "replace",
    path: "/spec/conversion/webhook/clientConfig",
    value: {
      service: {
        namespace: "mirror-operator-system",
        name: "mirror-operator-webhook",
        path: "/convert/example.dev/mirrors",
        port: 443,
      },
    },
  }]);
});

type Rule = { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] };

Deno.test("RBAC: its own configurations and converted CRDs by name, its Secret in its namespace", () => {
  const role = yaml<{ rules: Rule[] }>("deploy/clusterrole.yaml");
  const named = role.rules.filter((r) => r.resourceNames);
  assert.deepEqual(named, [
    {
      apiGroups: ["admissionregistration.k8s.io"],
      resources: ["mutatingwebhookconfigurations"],
      resourceNames: ["mirror-operator-mutating"],
      verbs: ["get", "patch"],
    },
    {
      apiGroups: ["admissionregistration.k8s.io"],
      resources: ["validatingwebhookconfigurations"],
      resourceNames: ["mirror-operator-validating"],
      verbs: ["get", "patch"],
    },
    {
      apiGroups: ["apiextensions.k8s.io"],
      resources: ["customresourcedefinitions"],
      resourceNames: ["mirrors.example.dev"],
      verbs: ["get", "patch"],
    },
  ]);
  const secrets = yaml<{ metadata: { namespace: string }; rules: Rule[] }>(
    "deploy/webhook-role.yaml",
  );
  assert.equal(secrets.metadata.namespace, "mirror-operator-system");
  assert.deepEqual(secrets.rules, [
    { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
    {
      apiGroups: [""],
      resources: ["secrets"],
      resourceNames: ["mirror-operator-webhook-tls"],
      verbs: ["get", "update"],
    },
  ]);
  const binding = yaml<{ roleRef: { name: string }; subjects: unknown[] }>(
    "deploy/webhook-rolebinding.yaml",
  );
  assert.equal(binding.roleRef.name, "mirror-operator-webhook-certificate");
  assert.deepEqual(binding.subjects, [
    { kind: "ServiceAccount", name: "mirror-operator", namespace: "mirror-operator-system" },
  ]);
  for (const file of ["deploy/clusterrole.yaml", "deploy/webhook-role.yaml"]) {
    const lines = files.get(file)!.split("\n");
    const rules = lines.flatMap((line, i) => line.startsWith("  - apiGroups:") ? [i] : []);
    for (const i of rules) assert.match(lines[i - 1]!, /^ {2}# /, `${file} line ${i + 1}`);
  }
});

Deno.test("the ownership policy lets it create and update its Secret, and confines other Secrets", () => {
  const policy = yaml<{
    spec: {
      matchConstraints: {
        resourceRules: { resources: string[]; operations: string[] }[];
        excludeResourceRules?: (Rule & { operations: string[] })[];
      };
    };
  }>("deploy/validatingadmissionpolicy.yaml");
  const { resourceRules, excludeResourceRules } = policy.spec.matchConstraints;
  assert.deepEqual(
    resourceRules.map((r) => `${r.resources} ${r.operations}`),
    ["deployments CREATE,UPDATE", "secrets CREATE"],
  );
  assert.deepEqual(excludeResourceRules, [{
    apiGroups: [""],
    apiVersions: ["*"],
    operations: ["CREATE", "UPDATE"],
    resources: ["secrets"],
    resourceNames: ["mirror-operator-webhook-tls"],
  }]);
  const confined = resourceRules.flatMap((r) => r.resources);
  for (const named of ["validatingwebhookconfigurations", "customresourcedefinitions"]) {
    assert.ok(!confined.includes(named), `${named} are RBAC's, by name`);
  }
});

Deno.test("an operator that only converts gets the Service and the CRD's rule, no configuration", () => {
  const only = deployFiles({ ...SAMPLE, webhooks: { conversions: [conversion] } });
  const kinds = parseAllDocuments(only.get("deploy/webhooks.yaml")!).map((d) => d.toJS().kind);
  assert.deepEqual(kinds, ["Service"]);
  assert.equal(only.has("deploy/systemd/webhooks.yaml"), false);
  const role = parse(only.get("deploy/clusterrole.yaml")!) as { rules: Rule[] };
  assert.deepEqual(role.rules.filter((r) => r.resourceNames).map((r) => r.resources), [
    ["customresourcedefinitions"],
  ]);
});

Deno.test("webhook declarations that cannot be written are refused, naming the field", () => {
  const refused = (webhooks: OperatorDescription["webhooks"], message: RegExp) =>
    assert.throws(() => deployFiles({ ...SAMPLE, webhooks }), (error: unknown) => {
      assert.ok(error instanceof TypeError, String(error));
      assert.match(error.message, /^Cannot write the deploy files of "mirror-operator": /);
      assert.match(error.message, message);
      return true;
    });
  refused(
    { admission: [{ resource: MIRRORS }] },
    /'webhooks\.admission\[0\]' has neither 'validate' nor 'default'/,
  );
  refused(
    { admission: [{ ...policiesWebhook, timeoutSeconds: 31 }] },
    /'webhooks\.admission\[0\]\.timeoutSeconds' 31 is not a whole number from 1 to 30/,
  );
  refused(
    { admission: [{ ...policiesWebhook, failurePolicy: "Never" as "Fail" }] },
    /'webhooks\.admission\[0\]\.failurePolicy' "Never" is not Fail or Ignore/,
  );
  refused(
    { admission: [{ ...policiesWebhook, operations: ["CONNECT" as "CREATE"] }] },
    /'webhooks\.admission\[0\]\.operations' \["CONNECT"\] are not CREATE, UPDATE or DELETE/,
  );
  refused(
    { admission: [{ resource: MIRRORS, default: never, operations: ["DELETE"] }] },
    /leave 'default' nothing to default/,
  );
  refused(
    { admission: [policiesWebhook, policiesWebhook] },
    /'webhooks\.admission\[1\]' declares policies a second time/,
  );
  refused(
    { admission: [policiesWebhook], port: 8081 },
    /'webhooks\.port' 8081 clashes with the port health \(8081\)/,
  );
  refused(
    { admission: [{ ...policiesWebhook, matchConditions: [{ name: "x", expression: "" }] }] },
    /'webhooks\.admission\[0\]\.matchConditions\[0\]' needs a 'name' and a CEL 'expression'/,
  );
  refused(
    { conversions: [{ ...conversion, resource: { ...MIRRORS, plural: "" } }] },
    /'webhooks\.conversions\[0\]\.resource' is no resource/,
  );
});

Deno.test("no webhooks declared, or empty lists: the files are those of the operator without them", () => {
  assert.deepEqual(deployFiles({ ...SAMPLE, webhooks: {} }), deployFiles(SAMPLE));
  assert.deepEqual(
    deployFiles({ ...SAMPLE, webhooks: { admission: [], conversions: [], port: 8443 } }),
    deployFiles(SAMPLE),
  );
});
