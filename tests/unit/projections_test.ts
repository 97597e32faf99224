import assert from "node:assert/strict";
import {
  ownedTransform,
  projectOwned,
  projectPrimary,
  projectWorkload,
} from "../../lib/runtime/cache/projections.ts";
import { metadataFingerprint } from "../../lib/runtime/cache/fingerprint.ts";
import { Store, stripTransform } from "../../lib/runtime/cache/store.ts";
import { assessDeployment } from "../../lib/operators/workload_status.ts";
import {
  CONFIG_MAPS,
  DEPLOYMENTS,
  type KubeObject,
  SERVICES,
  STATEFUL_SETS,
} from "../../lib/kube/mod.ts";
import type { V1Deployment } from "../../lib/operators/models.ts";

const OWNER = {
  apiVersion: "kinglet.dev/v1alpha1",
  kind: "WebApp",
  name: "shop",
  uid: "0b6f9d8e-0000-4000-8000-000000000001",
  controller: true,
  blockOwnerDeletion: true,
};

/** A Deployment as the API server returns it after a finished rollout. */
function deployment(progressing: Record<string, string>) {
  return JSON.parse(JSON.stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "shop",
      namespace: "default",
      uid: "0b6f9d8e-0000-4000-8000-000000000002",
      resourceVersion: "812",
      generation: 3,
      labels: { "app.kubernetes.io/managed-by": "kinglet" },
      annotations: { "deployment.kubernetes.io/revision": "2" },
      creationTimestamp: "2026-11-23T10:00:00Z",
      ownerReferences: [OWNER],
    },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: "shop" } },
      template: { spec: { containers: [{ name: "app", image: "nginx" }] } },
    },
    status: {
      observedGeneration: 3,
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
      collisionCount: 1,
      conditions: [
        {
          type: "Available",
          status: "True",
          reason: "MinimumReplicasAvailable",
          message: "Deployment has minimum availability.",
          lastUpdateTime: "2026-11-23T10:00:05Z",
          lastTransitionTime: "2026-11-23T10:00:05Z",
        },
        {
          type: "Progressing",
          lastUpdateTime: "2026-11-23T10:00:05Z",
          lastTransitionTime: "2026-11-23T10:00:00Z",
          ...progressing,
        },
      ],
    },
  }));
}

Deno.test("projectOwned keeps identity, labels, annotations, revision and controller owners, and its store a fingerprint of labels and annotations", () => {
  const identity = { name: "shop", namespace: "default", uid: "u1", resourceVersion: "77" };
  const full: KubeObject = {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      ...identity,
      labels: { a: "b" },
      annotations: { c: "d", "kubectl.kubernetes.io/last-applied-configuration": "{}" },
      creationTimestamp: "2026-11-23T10:00:00Z",
      ownerReferences: [OWNER],
    },
  };
  const projected = projectOwned(full);
  const { blockOwnerDeletion: _dropped, ...owner } = OWNER;
  assert.deepEqual(projected, {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      ...identity,
      labels: { a: "b" },
      annotations: { c: "d" },
      ownerReferences: [owner],
    },
  });
  // The fingerprint moves with a label, and the store keeps the full object's beside the projection.
  const relabelled = { ...full, metadata: { ...full.metadata, labels: { a: "c" } } };
  assert.notEqual(metadataFingerprint(relabelled), metadataFingerprint(full));
  const store = new Store({ transform: projectOwned });
  store.apply({ type: "applied", object: full });
  assert.equal(store.entry("default/shop")?.fingerprint, metadataFingerprint(full));
  assert.deepEqual(store.get("default/shop"), projected);
});

Deno.test("projectOwned keeps a deletion in progress and the generation", () => {
  const projected = projectOwned({
    metadata: {
      name: "s",
      generation: 4,
      deletionTimestamp: "2026-11-23T10:00:00Z",
    },
  });
  assert.equal(projected.metadata?.generation, 4);
  assert.equal(String(projected.metadata?.deletionTimestamp), "2026-11-23T10:00:00Z");
});

Deno.test("projectWorkload keeps the replica counts and the Progressing condition only", () => {
  const projected = projectWorkload(
    deployment({ status: "True", reason: "NewReplicaSetAvailable", message: "progressed" }),
  );
  assert.deepEqual(projected.spec, { replicas: 2 });
  assert.deepEqual(projected.status, {
    observedGeneration: 3,
    replicas: 2,
    readyReplicas: 2,
    availableReplicas: 2,
    updatedReplicas: 2,
    conditions: [{ type: "Progressing", status: "True", reason: "NewReplicaSetAvailable" }],
  });
  assert.deepEqual(projected.metadata?.labels, deployment({}).metadata?.labels);
  assert.equal(projected.metadata?.generation, 3);
});

Deno.test("a projected Deployment assesses as the full one does, a stalled rollout with its message", () => {
  const cases = [
    { status: "True", reason: "NewReplicaSetAvailable", message: "progressed" },
    {
      status: "False",
      reason: "ProgressDeadlineExceeded",
      message: 'ReplicaSet "shop-1" has timed out',
    },
  ];
  for (const progressing of cases) {
    for (const desired of [0, 2, 3]) {
      const full = deployment(progressing) as V1Deployment;
      const projected = projectWorkload(deployment(progressing)) as V1Deployment;
      assert.deepEqual(assessDeployment(desired, projected), assessDeployment(desired, full));
    }
  }
  const stalled = assessDeployment(2, projectWorkload(deployment(cases[1]!)) as V1Deployment);
  assert.equal(stalled.phase, "Degraded");
  assert.match(stalled.message, /timed out/);
});

Deno.test("a projected primary equals the stripped object, keeps every field and leaves its input alone", () => {
  const raw = {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    metadata: {
      name: "shop",
      namespace: "default",
      uid: "0b6f9d8e-0000-4000-8000-000000000001",
      resourceVersion: "900",
      generation: 2,
      creationTimestamp: "2026-11-23T10:00:00Z",
      labels: { "app.kubernetes.io/part-of": "store" },
      annotations: { note: "kept", "kubectl.kubernetes.io/last-applied-configuration": "{}" },
      finalizers: ["kinglet.dev/cleanup"],
      managedFields: [{ manager: "kubectl", operation: "Update" }],
    },
    spec: { image: "nginx:1.27", replicas: 2, port: 8080, env: [{ name: "A", value: "1" }] },
    status: {
      phase: "Ready",
      observedGeneration: 2,
      url: "http://shop.default.svc.cluster.local:8080",
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "Available",
          message: "2 of 2 replicas available",
          lastTransitionTime: "2026-11-23T10:00:09Z",
        },
        {
          type: "Progressing",
          status: "True",
          reason: "Rolled",
          message: "done",
          lastTransitionTime: "2026-11-23T10:00:09Z",
        },
      ],
    },
  };
  const input = JSON.parse(JSON.stringify(raw));
  const projected = projectPrimary(input);
  assert.deepEqual(projected, stripTransform(JSON.parse(JSON.stringify(raw))));
  assert.equal(projected.metadata?.managedFields, undefined);
  assert.deepEqual(projected.metadata?.annotations, { note: "kept" });
  assert.deepEqual(input, raw, "the input is not changed");
  assert.notEqual(projected.status, input.status, "the projection is a copy");
});

Deno.test("each projected child keeps its own fingerprint in its store entry", () => {
  const service = (app: string): KubeObject => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: app, namespace: "default", uid: `u-${app}`, labels: { app } },
  });
  const [a, b] = [service("a"), service("b")];
  const store = new Store({ transform: projectOwned });
  for (const object of [a, b]) store.apply({ type: "applied", object });
  const entries = ["default/a", "default/b"].map((key) => store.entry(key)!);
  assert.deepEqual(entries.map((e) => e.fingerprint), [a, b].map(metadataFingerprint));
  assert.notEqual(entries[0]!.fingerprint, entries[1]!.fingerprint);
  assert.equal(store.get("default/a")?.metadata?.annotations, undefined);
});

Deno.test("owned Deployments and StatefulSets default to the workload projection, other kinds to the owned one", () => {
  assert.equal(ownedTransform(DEPLOYMENTS), projectWorkload);
  assert.equal(ownedTransform(STATEFUL_SETS), projectWorkload);
  assert.equal(ownedTransform(SERVICES), projectOwned);
  assert.equal(ownedTransform(CONFIG_MAPS), projectOwned);
  assert.equal(ownedTransform({ ...DEPLOYMENTS, group: "example.com" }), projectOwned);
});

Deno.test("projectWorkload keeps only the counts a status has, and no conditions it lacks", () => {
  const rolling = deployment({ status: "True", reason: "ReplicaSetUpdated" });
  rolling.status = { observedGeneration: 3, replicas: 1, collisionCount: 2, conditions: null };
  assert.deepEqual(projectWorkload(rolling).status, { observedGeneration: 3, replicas: 1 });
  delete rolling.status;
  const projected = projectWorkload(rolling);
  assert.equal("status" in projected, false);
  assert.deepEqual(projected.spec, { replicas: 2 });
  assert.equal(projected.metadata?.uid, "0b6f9d8e-0000-4000-8000-000000000002");
});

Deno.test("converged workloads of one size share one frozen spec and status, a stalled one keeps its own", () => {
  const done = { status: "True", reason: "NewReplicaSetAvailable", message: "progressed" };
  const [a, b] = [projectWorkload(deployment(done)), projectWorkload(deployment(done))];
  assert.equal(a.status, b.status);
  assert.equal(a.spec, b.spec);
  assert.ok(Object.isFrozen(a.status) && Object.isFrozen(a.spec));
  assert.notEqual(a.metadata, b.metadata, "identity is per object");
  const stalled = { status: "False", reason: "ProgressDeadlineExceeded", message: "timed out" };
  const [c, d] = [projectWorkload(deployment(stalled)), projectWorkload(deployment(stalled))];
  assert.notEqual(c.status, d.status);
  assert.equal(Object.isFrozen(c.status), false);
  assert.deepEqual(c.status, d.status);
});
