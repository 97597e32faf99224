import assert from "node:assert/strict";
import { CUSTOM_RESOURCE_DEFINITIONS, type KubeObject, type Resource } from "../../lib/kube/mod.ts";
import { caBundleInjector, injectCaBundle } from "../../lib/runtime/webhook/ca_bundle.ts";
import { MemoryCluster } from "../../lib/testing/memory_cluster.ts";

const VALIDATING: Resource = {
  group: "admissionregistration.k8s.io",
  version: "v1",
  plural: "validatingwebhookconfigurations",
  kind: "ValidatingWebhookConfiguration",
  namespaced: false,
};
const MUTATING: Resource = {
  ...VALIDATING,
  plural: "mutatingwebhookconfigurations",
  kind: "MutatingWebhookConfiguration",
};
const BUNDLE = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";

interface Configuration extends KubeObject {
  webhooks: { name: string; clientConfig: { caBundle?: string; url?: string } }[];
}

function configuration(resource: Resource, name: string, entries: string[]): Configuration {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: resource.kind,
    metadata: { name },
    webhooks: entries.map((entry) => ({
      name: entry,
      clientConfig: { url: `https://127.0.0.1:9443/${entry}` },
    })),
  };
}

interface Crd extends KubeObject {
  spec: {
    group: string;
    conversion?: { strategy: string; webhook?: { clientConfig?: Record<string, unknown> } };
  };
}

function crd(name: string): Crd {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name },
    spec: { group: name.split(".").slice(1).join("."), conversion: { strategy: "None" } },
  };
}

Deno.test("the bundle goes into the named entries of both configurations, the others are left alone", async () => {
  const cluster = new MemoryCluster();
  cluster.put(VALIDATING, configuration(VALIDATING, "demo-validating", ["vwidgets.x", "other"]));
  cluster.put(MUTATING, configuration(MUTATING, "demo-mutating", ["mwidgets.x"]));
  const targets = {
    validating: { name: "demo-validating", webhooks: ["vwidgets.x"] },
    mutating: { name: "demo-mutating", webhooks: ["mwidgets.x"] },
  };
  assert.deepEqual(await injectCaBundle(cluster, BUNDLE, targets), [
    "validatingwebhookconfigurations/demo-validating",
    "mutatingwebhookconfigurations/demo-mutating",
  ]);
  const validating = cluster.object<Configuration>(VALIDATING, "demo-validating")!;
  assert.deepEqual(validating.webhooks[0]!.clientConfig, {
    url: "https://127.0.0.1:9443/vwidgets.x",
    caBundle: btoa(BUNDLE),
  });
  assert.deepEqual(validating.webhooks[1]!.clientConfig, {
    url: "https://127.0.0.1:9443/other",
  });
  assert.equal(
    cluster.object<Configuration>(MUTATING, "demo-mutating")!.webhooks[0]!.clientConfig.caBundle,
    btoa(BUNDLE),
  );
  const changes = cluster.changes.length;
  assert.deepEqual(await injectCaBundle(cluster, BUNDLE, targets), [], "no patch when equal");
  assert.equal(cluster.changes.length, changes);
});

Deno.test("absent configurations, entries and CRDs are skipped until they exist", async () => {
  const cluster = new MemoryCluster();
  cluster.put(VALIDATING, configuration(VALIDATING, "demo-validating", ["other"]));
  const inject = caBundleInjector(cluster, {
    validating: { name: "demo-validating", webhooks: ["vwidgets.x"] },
    mutating: { name: "demo-mutating", webhooks: ["mwidgets.x"] },
    conversions: [{ crd: "widgets.x", clientConfig: { url: "https://127.0.0.1:9443/convert" } }],
  });
  assert.deepEqual(await inject(BUNDLE), []);
  cluster.put(CUSTOM_RESOURCE_DEFINITIONS, crd("widgets.x"));
  assert.deepEqual(await inject(BUNDLE), ["customresourcedefinitions/widgets.x"]);
});

Deno.test("a converted CRD gets the webhook strategy, the client config and the bundle, once", async () => {
  const cluster = new MemoryCluster();
  cluster.put(CUSTOM_RESOURCE_DEFINITIONS, crd("widgets.x"));
  const url = "https://127.0.0.1:9443/convert/x/widgets";
  const byUrl = { conversions: [{ crd: "widgets.x", clientConfig: { url } }] };
  assert.deepEqual(await injectCaBundle(cluster, BUNDLE, byUrl), [
    "customresourcedefinitions/widgets.x",
  ]);
  assert.deepEqual(cluster.object<Crd>(CUSTOM_RESOURCE_DEFINITIONS, "widgets.x")!.spec.conversion, {
    strategy: "Webhook",
    webhook: { conversionReviewVersions: ["v1"], clientConfig: { url, caBundle: btoa(BUNDLE) } },
  });
  assert.deepEqual(await injectCaBundle(cluster, BUNDLE, byUrl), []);

  const service = { namespace: "ops", name: "demo-webhook", path: "/convert/x/widgets" };
  const byService = { conversions: [{ crd: "widgets.x", clientConfig: { service } }] };
  assert.equal((await injectCaBundle(cluster, BUNDLE, byService)).length, 1);
  assert.deepEqual(
    cluster.object<Crd>(CUSTOM_RESOURCE_DEFINITIONS, "widgets.x")!.spec.conversion?.webhook
      ?.clientConfig,
    { service: { ...service, port: 443 }, caBundle: btoa(BUNDLE) },
  );
  assert.deepEqual(await injectCaBundle(cluster, BUNDLE, byService), []);
  const other = BUNDLE.replace("AAAA", "BBBB");
  assert.equal((await injectCaBundle(cluster, other, byService)).length, 1, "a new bundle");
});

Deno.test("an entry that moved between the read and the patch fails the patch instead of filling another", async () => {
  const cluster = new MemoryCluster();
  cluster.put(VALIDATING, configuration(VALIDATING, "demo-validating", ["a", "vwidgets.x"]));
  // A client whose read is stale: it saw the entries in the other order.
  const stale = {
    getOptional: <T extends KubeObject>() =>
      Promise.resolve(
        configuration(VALIDATING, "demo-validating", ["vwidgets.x", "a"]) as KubeObject as T,
      ),
    patch: cluster.patch.bind(cluster),
  };
  const targets = { validating: { name: "demo-validating", webhooks: ["vwidgets.x"] } };
  await assert.rejects(
    injectCaBundle(stale, BUNDLE, targets),
    (e: unknown) => (e as { status?: number }).status === 422,
  );
  const stored = cluster.object<Configuration>(VALIDATING, "demo-validating")!;
  assert.ok(stored.webhooks.every((entry) => entry.clientConfig.caBundle === undefined));
});
