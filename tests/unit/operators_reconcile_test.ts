import assert from "node:assert/strict";
import { FakeClock, Semaphore } from "../../lib/async/mod.ts";
import {
  DEPLOYMENTS,
  type KubeObject,
  SECRETS,
  SERVICES,
  STATEFUL_SETS,
} from "../../lib/kube/mod.ts";
import { DATABASE_CLUSTERS, type DatabaseCluster } from "../../lib/operators/database/kind.ts";
import { databaseClusterController } from "../../lib/operators/database/reconcile.ts";
import { credentialsSecretName } from "../../lib/operators/database/render.ts";
import { FINALIZER } from "../../lib/operators/labels.ts";
import { INFERENCE_SERVICES } from "../../lib/operators/inference/kind.ts";
import { inferenceServiceController } from "../../lib/operators/inference/reconcile.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { webAppController } from "../../lib/operators/webapp/reconcile.ts";
import type { EventInit } from "../../lib/runtime/events/mod.ts";
import type { ControllerSpec } from "../../lib/runtime/mod.ts";
import { Caches } from "../../lib/runtime/cache/mod.ts";
import { Controller } from "../../lib/runtime/controller/mod.ts";
import { MemoryCluster, waitFor } from "../../lib/testing/mod.ts";
import { Happenings, until } from "./_until.ts";

interface Workload extends KubeObject {
  status?: {
    phase?: string;
    observedGeneration?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

/** Runs one of kinglet's controllers over an in-memory cluster on a fake clock. */
function run(build: (options: { now: () => Date }) => ControllerSpec<KubeObject>) {
  const clock = new FakeClock();
  const cluster = new MemoryCluster({ clock, namespaces: ["shop", "web", "ml"] });
  const events = new Happenings<string>();
  const caches = new Caches({ client: cluster, clock, watcherOptions: { streamingList: "off" } });
  const statusWrites = new Happenings<string>();
  const apply = cluster.apply.bind(cluster);
  cluster.apply = (resource, object, options) => {
    const done = apply(resource, object, options);
    if (options?.subresource) done.then(() => statusWrites.push(object.metadata!.name!));
    return done;
  };
  const controller = new Controller(build({ now: () => new Date(clock.now()) }), {
    client: cluster,
    events: { publish: (_regarding, e: EventInit) => events.push(`${e.type} ${e.reason}`) },
    semaphore: new Semaphore(4),
    caches,
    clock,
  });
  const stop = new AbortController();
  const running = Promise.all([caches.run(stop.signal), controller.run(stop.signal)]);
  return {
    cluster,
    events,
    statusWrites,
    async [Symbol.asyncDispose]() {
      stop.abort();
      await running;
    },
  };
}

const phase = (object: Workload | undefined) => object?.status?.phase;

Deno.test("the WebApp reconciler applies a Deployment and a Service, then reports Ready from the Deployment", async () => {
  await using r = run(webAppController);
  r.cluster.put(WEB_APPS, {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    metadata: { name: "shop", namespace: "web" },
    spec: { image: "nginx:1.27", replicas: 2 },
  });
  const shop = () => r.cluster.object<Workload>(WEB_APPS, "web/shop");
  await until(r.statusWrites, "a status while the Deployment rolls out", () => !!phase(shop()));
  assert.notEqual(phase(shop()), "Ready");
  assert.equal(shop()?.status?.observedGeneration, 1);
  const deployment = r.cluster.object<KubeObject>(DEPLOYMENTS, "web/shop")!;
  assert.equal(deployment.metadata?.ownerReferences?.[0]?.kind, "WebApp");
  r.cluster.put(DEPLOYMENTS, {
    ...deployment,
    status: {
      observedGeneration: deployment.metadata?.generation,
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
    },
  });
  await until(r.statusWrites, "Ready once the Deployment is", () => phase(shop()) === "Ready");
  assert.deepEqual(
    r.cluster.applies.filter((a) => !a.includes("/status")).toSorted(),
    ["deployments web/shop", "services web/shop"],
    "the children, already in place, are not applied again",
  );
  assert.ok(r.events.items.includes("Normal Ready"), r.events.items.join(", "));
});

Deno.test("the WebApp reconciler reports an invalid spec once and applies no child", async () => {
  await using r = run(webAppController);
  r.cluster.put(WEB_APPS, {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    metadata: { name: "broken", namespace: "web" },
    spec: { replicas: 1 },
  });
  await r.statusWrites.count(1, "the invalid status");
  const app = r.cluster.object<Workload>(WEB_APPS, "web/broken");
  const invalid = app?.status?.conditions?.find((c) => c.type === "InvalidSpec");
  assert.equal(invalid?.status, "True");
  assert.match(invalid?.message ?? "", /image/);
  assert.deepEqual(r.events.items, ["Warning InvalidSpec"]);
  assert.deepEqual(r.cluster.applies, ["webapps/status web/broken"]);
});

Deno.test("the InferenceService reconciler applies a GPU Deployment and a Service", async () => {
  await using r = run(inferenceServiceController);
  r.cluster.put(INFERENCE_SERVICES, {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "InferenceService",
    metadata: { name: "llm", namespace: "ml" },
    spec: { model: "meta-llama/Llama-3-8B", gpuType: "L40S" },
  });
  const llm = () => r.cluster.object<Workload>(INFERENCE_SERVICES, "ml/llm");
  await until(r.statusWrites, "a status", () => !!phase(llm()));
  const deployment = r.cluster.object<KubeObject & { spec: { template: { spec: unknown } } }>(
    DEPLOYMENTS,
    "ml/llm",
  );
  assert.match(JSON.stringify(deployment?.spec.template.spec), /nvidia\.com\/gpu/);
  assert.ok(r.cluster.object(SERVICES, "ml/llm"));
  assert.equal(llm()?.status?.observedGeneration, 1);
});

Deno.test("the DatabaseCluster reconciler adds its finalizer, creates credentials once and keeps them on deletion", async () => {
  await using r = run(databaseClusterController);
  const key = "shop/orders";
  r.cluster.put(DATABASE_CLUSTERS, {
    apiVersion: "kinglet.dev/v1alpha2",
    kind: "DatabaseCluster",
    metadata: { name: "orders", namespace: "shop" },
    spec: { engine: "postgres", version: "17", storage: { size: "10Gi" } },
  });
  const orders = () => r.cluster.object<Workload>(DATABASE_CLUSTERS, key);
  await waitFor("the first status", () => phase(orders()) === "Creating");
  assert.deepEqual(orders()?.metadata?.finalizers, [FINALIZER]);
  const secret = r.cluster.object<KubeObject>(
    SECRETS,
    `shop/${credentialsSecretName(orders() as DatabaseCluster)}`,
  );
  assert.ok(secret, "the credentials Secret");
  assert.ok(r.cluster.object(STATEFUL_SETS, key));
  assert.deepEqual(r.events.items.filter((e) => e.includes("Credentials")), [
    "Normal CredentialsCreated",
  ]);

  await r.cluster.delete(DATABASE_CLUSTERS, "orders", { namespace: "shop" });
  await waitFor("the cluster to be gone", () => orders() === undefined);
  const kept = r.cluster.object<KubeObject>(SECRETS, `shop/${secret.metadata!.name}`);
  assert.ok(kept, "the credentials Secret outlives the cluster");
  assert.equal(kept.metadata?.ownerReferences, undefined, "released, so the collector keeps it");
  assert.deepEqual(r.events.items.filter((e) => e.includes("Credentials")), [
    "Normal CredentialsCreated",
  ]);
});
