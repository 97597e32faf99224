/**
 * When each operator asks to be reconciled again, what a failure costs, and
 * how fast reconciles may start: one reconcile each, through a client that
 * answers every write with what was sent (status counts included, so a
 * StatefulSet reads as ready when `ready` says so).
 */
import assert from "node:assert/strict";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";
import { databaseClusterController } from "../../lib/operators/database/reconcile.ts";
import { inferenceServiceController } from "../../lib/operators/inference/reconcile.ts";
import { FINALIZER } from "../../lib/operators/labels.ts";
import { webAppController } from "../../lib/operators/webapp/reconcile.ts";
import type { ControllerSpec, ReconcileContext } from "../../lib/runtime/controller/spec.ts";
import { Store } from "../../lib/runtime/cache/store.ts";
import { ChildApplier } from "../../lib/runtime/children/child_applier.ts";

/** The client of one reconcile, and the clock of its conditions. */
interface Deps {
  client: ReconcileContext["client"];
  now: () => Date;
}

function deps(ready: boolean): Deps {
  const echo = <T extends KubeObject>(resource: Resource, object: T) => {
    const replicas = (object.spec as { replicas?: number } | undefined)?.replicas ?? 1;
    const workload = resource.kind === "StatefulSet" || resource.kind === "Deployment";
    return Promise.resolve({
      ...object,
      metadata: { ...object.metadata, uid: "child", generation: 1, resourceVersion: "1" },
      ...(workload && {
        status: {
          observedGeneration: 1,
          replicas,
          currentReplicas: replicas,
          updatedReplicas: ready ? replicas : 0,
          readyReplicas: ready ? replicas : 0,
          availableReplicas: ready ? replicas : 0,
        },
      }),
    } as T);
  };
  return {
    client: {
      apply: echo,
      create: echo,
      patch: () => Promise.reject(new Error("no patch expected")),
      delete: () => Promise.reject(new Error("no delete expected")),
      list: () => Promise.reject(new Error("no list expected")),
      get: () => Promise.reject(new Error("no get expected")),
      getOptional: () => Promise.reject(new Error("no get expected")),
    } as unknown as ReconcileContext["client"],
    now: () => new Date("2025-03-01T12:00:00Z"),
  };
}

function primary(kind: string, spec: Record<string, unknown>, status?: unknown): KubeObject {
  return {
    apiVersion: "kinglet.dev/v1alpha1",
    kind,
    metadata: {
      name: "one",
      namespace: "shop",
      uid: "uid-one",
      generation: 1,
      resourceVersion: "7",
      finalizers: [FINALIZER],
    },
    spec,
    ...(status !== undefined && { status }),
  };
}

async function reconcileOnce(
  build: (options: { now: () => Date }) => ControllerSpec<KubeObject>,
  { client, now }: Deps,
  object: KubeObject,
) {
  const spec = build({ now });
  const caches = new Map<string, Store>();
  const cache = <C extends KubeObject>(resource: Resource) => {
    if (!caches.has(resource.plural)) caches.set(resource.plural, new Store());
    return caches.get(resource.plural) as unknown as Store<C>;
  };
  const applier = new ChildApplier((resource, desired, signal) =>
    client.apply(resource, desired, { fieldManager: spec.fieldManager!, force: true, signal })
  );
  for (const owned of spec.owns ?? []) applier.track(owned.resource, cache(owned.resource));
  return await spec.reconcile(object, {
    signal: new AbortController().signal,
    key: "shop/one",
    client,
    clock: { now: () => now().getTime(), sleep: () => Promise.resolve() },
    events: { publish() {} },
    status: () => Promise.resolve(true),
    cache,
    children: {
      apply: (resource, desired, signal) =>
        applier.apply(resource, desired, cache(resource), signal),
    },
  });
}

const WEB_APP = { image: "nginx:1.27", replicas: 2 };
const MODEL = { model: "llama-3-8b", replicas: 1, gpuType: "none", maxBatchSize: 8 };
const DATABASE = { engine: "postgres", version: "17", replicas: 1, storage: { size: "1Gi" } };

Deno.test("a WebApp comes back after 300 s, or what its option says, and retries after 10 s", async () => {
  const app = primary("WebApp", WEB_APP);
  assert.deepEqual(await reconcileOnce(webAppController, deps(true), app), {
    requeueAfterMs: 300_000,
  });
  const short = (o: { now: () => Date }) => webAppController({ ...o, requeueAfterMs: 2_000 });
  assert.deepEqual(await reconcileOnce(short, deps(true), app), { requeueAfterMs: 2_000 });
  const policy = webAppController().errorPolicy!;
  assert.deepEqual([1, 2, 8].map((n) => policy(new Error("x"), n)), [10_000, 10_000, 10_000]);
});

Deno.test("an InferenceService comes back after 30 s and retries after 60 s", async () => {
  const model = primary("InferenceService", MODEL);
  assert.deepEqual(await reconcileOnce(inferenceServiceController, deps(true), model), {
    requeueAfterMs: 30_000,
  });
  const policy = inferenceServiceController().errorPolicy!;
  assert.deepEqual([1, 5].map((n) => policy(new Error("x"), n)), [60_000, 60_000]);
});

Deno.test("a DatabaseCluster comes back after 300 s when Ready and 60 s when not", async () => {
  const creating = await reconcileOnce(
    databaseClusterController,
    deps(false),
    primary("DatabaseCluster", DATABASE),
  );
  assert.deepEqual(creating, { requeueAfterMs: 60_000 });
  const ready = await reconcileOnce(
    databaseClusterController,
    deps(true),
    primary("DatabaseCluster", DATABASE, { phase: "Creating" }),
  );
  assert.deepEqual(ready, { requeueAfterMs: 300_000 });
  const tuned = await reconcileOnce(
    (o) => databaseClusterController({ ...o, notReadyRequeueAfterMs: 1_000 }),
    deps(false),
    primary("DatabaseCluster", DATABASE),
  );
  assert.deepEqual(tuned, { requeueAfterMs: 1_000 });
});

Deno.test("a DatabaseCluster retries on the tiered policy and starts at most 100 reconciles a minute", () => {
  const spec = databaseClusterController();
  assert.deepEqual(
    [1, 2, 3, 4, 5].map((n) => spec.errorPolicy!(new Error("x"), n)),
    [30_000, 120_000, 300_000, 600_000, 600_000],
  );
  assert.deepEqual(spec.reconcileRateLimit, { qps: 100 / 60, burst: 100 });
});
