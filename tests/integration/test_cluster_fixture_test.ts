/**
 * The test kit's cluster fixture against real API servers: the shared local
 * control plane of `hack/with_cluster.ts` (through `KINGLET_TEST_KUBECONFIG`),
 * and etcd and kube-apiserver it starts itself from `KUBEBUILDER_ASSETS`, here
 * the binaries folder of that same control plane; and the test Nodes it
 * makes on both.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { loadConfig } from "../../lib/kube/config.ts";
import {
  CONFIG_MAPS,
  CUSTOM_RESOURCE_DEFINITIONS,
  LEASES,
  NAMESPACES,
  NODES,
} from "../../lib/kube/resources.ts";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";
import { testCluster } from "../../lib/testing/cluster.ts";
import { binDir, testKubeconfig } from "../_support/cluster.ts";
import { adminClient, condition, getOrUndefined, waitFor } from "../_support/kube.ts";

Deno.test("on the shared cluster the fixture gives a test its own namespace and deletes it on dispose", async () => {
  using admin = closing(await adminClient());
  let namespace: string;
  {
    await using cluster = await testCluster({ namespacePrefix: "fixture" });
    namespace = cluster.namespace;
    assert.equal(cluster.started, false);
    assert.equal(cluster.kubeconfig, testKubeconfig());
    assert.match(namespace, /^fixture-[0-9a-f]{8}$/);
    await cluster.client.create(CONFIG_MAPS, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "settings" },
      data: { mode: "fast" },
    });
    const read = await admin.client.get<KubeObject>(CONFIG_MAPS, "settings", { namespace });
    assert.deepEqual(read.data, { mode: "fast" }, "created in the fixture's namespace");
  }
  assert.equal(await getOrUndefined(admin.client, NAMESPACES, namespace), undefined);
});

type Lease = KubeObject & { spec?: { holderIdentity?: string; renewTime?: string } };

Deno.test("on the shared cluster a test Node keeps the labels and the readiness the test sets, out of kwok's hands, and goes on dispose", async () => {
  using admin = closing(await adminClient());
  const read = (name: string) => admin.client.get<KubeObject>(NODES, name);
  const ready = async (name: string) => condition(await read(name), "Ready")?.status;
  const lease = (name: string) =>
    getOrUndefined<Lease>(admin.client, LEASES, name, "kube-node-lease");
  let name: string;
  {
    await using cluster = await testCluster({ namespacePrefix: "fixture" });
    const node = await cluster.node("edge", { labels: { "test.kinglet.dev/site": "a" } });
    name = node.name;
    assert.equal(name, `${cluster.namespace}-edge`);
    const created = await read(name);
    assert.equal(created.metadata?.labels?.["test.kinglet.dev/site"], "a");
    assert.equal(created.metadata?.annotations?.["kwok.x-k8s.io/node"], undefined);
    assert.equal(await ready(name), "True");

    await node.setReady(false);
    const first = (await lease(name))?.spec?.renewTime;
    assert.equal((await lease(name))?.spec?.holderIdentity, name);
    // kwok puts a Node it manages back to Ready at once; the Lease renews every 10 s.
    await waitFor("the Node's Lease to be renewed", async () => {
      const renewed = (await lease(name))?.spec?.renewTime;
      return renewed !== undefined && renewed !== first;
    }, 60_000);
    assert.equal(await ready(name), "False", "something took the test's readiness back");

    await node.setReady(true);
    await node.setLabels({ "test.kinglet.dev/site": "b" });
    assert.equal(await ready(name), "True");
    assert.equal((await read(name)).metadata?.labels?.["test.kinglet.dev/site"], "b");
  }
  await waitFor("the Node to go", async () => !(await getOrUndefined(admin.client, NODES, name)));
  await waitFor("its Lease to go", async () => !(await lease(name)));
});

const WIDGETS: Resource = {
  group: "fixture.kinglet.dev",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};

Deno.test("from KUBEBUILDER_ASSETS the fixture runs its own API server, which serves an applied CRD, until dispose", async () => {
  const sharedServer = (await loadConfig({ kubeconfig: testKubeconfig() })).server;
  let kubeconfig: string;
  let server: string;
  {
    await using cluster = await testCluster({ env: { KUBEBUILDER_ASSETS: binDir() } });
    kubeconfig = cluster.kubeconfig;
    server = cluster.client.server;
    assert.equal(cluster.started, true);
    assert.notEqual(server, sharedServer);
    const { client, namespace } = cluster;
    await client.apply(CUSTOM_RESOURCE_DEFINITIONS, widgetsCrd(), { fieldManager: "fixture-test" });
    await waitFor("the Widget CRD to be Established", async () => {
      const crd = await client.get<KubeObject>(
        CUSTOM_RESOURCE_DEFINITIONS,
        "widgets.fixture.kinglet.dev",
      );
      const conditions = (crd.status as { conditions?: { type: string; status: string }[] })
        .conditions ?? [];
      return conditions.some((c) => c.type === "Established" && c.status === "True");
    }, 30_000);
    await waitFor("a Widget to be created", () =>
      client.create(WIDGETS, {
        apiVersion: "fixture.kinglet.dev/v1",
        kind: "Widget",
        metadata: { name: "w" },
        spec: { size: 3 },
      }), 30_000);
    const widget = await client.get<KubeObject>(WIDGETS, "w");
    assert.equal(widget.metadata?.namespace, namespace);
    assert.deepEqual(widget.spec, { size: 3 });

    const node = await cluster.node("edge", { labels: { site: "a" }, ready: false });
    const read = await client.get<KubeObject>(NODES, node.name);
    assert.deepEqual([read.metadata?.labels, condition(read, "Ready")?.status], [
      { site: "a" },
      "False",
    ]);
  }
  await assert.rejects(Deno.stat(dirname(kubeconfig)), Deno.errors.NotFound);
  const port = Number(new URL(server).port);
  await assert.rejects(
    Deno.connect({ hostname: "127.0.0.1", port }),
    Deno.errors.ConnectionRefused,
  );
});

function widgetsCrd(): KubeObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "widgets.fixture.kinglet.dev" },
    spec: {
      group: "fixture.kinglet.dev",
      scope: "Namespaced",
      names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: { type: "object", properties: { size: { type: "integer", minimum: 1 } } },
            },
          },
        },
      }],
    },
  };
}

function closing<T extends { close(): void }>(client: T): Disposable & { client: T } {
  return { client, [Symbol.dispose]: () => client.close() };
}
