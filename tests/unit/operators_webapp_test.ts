import assert from "node:assert/strict";
import type { V1Deployment } from "../../lib/operators/models.ts";
import { findCondition } from "../../lib/runtime/mod.ts";
import { renderWebApp } from "../../lib/operators/webapp/render.ts";
import { validateWebApp, type WebApp } from "../../lib/operators/webapp/kind.ts";
import {
  invalidWorkloadStatus,
  type WorkloadStatus,
  workloadStatus,
} from "../../lib/operators/workload_status.ts";

const NOW = new Date("2025-03-01T12:00:00Z");

function webAppStatus(app: WebApp, observed: V1Deployment | undefined, now: Date): WorkloadStatus {
  return workloadStatus(app, app.spec.port, observed, now);
}

function webApp(spec: Record<string, unknown> = {}, generation = 1): WebApp {
  const result = validateWebApp({ image: "ghcr.io/acme/shop:1.4.2", ...spec });
  if (!result.ok) throw new Error(result.message);
  return {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    metadata: { name: "shop", namespace: "web", uid: "uid-shop", generation },
    spec: result.spec,
  };
}

function deployment(
  status: NonNullable<V1Deployment["status"]>,
  replicas = 2,
  progressingReason?: string,
): V1Deployment {
  return {
    metadata: { name: "shop", generation: 4 },
    spec: { replicas, selector: {}, template: {} },
    status: {
      observedGeneration: 4,
      ...status,
      ...(progressingReason
        ? { conditions: [{ type: "Progressing", status: "True", reason: progressingReason }] }
        : {}),
    },
  };
}

Deno.test("a WebApp spec gets replicas 1 and port 8080 by default", () => {
  const result = validateWebApp({ image: "nginx" });
  assert.ok(result.ok);
  assert.deepEqual(result.spec, { image: "nginx", replicas: 1, port: 8080 });
});

Deno.test("a WebApp spec without an image, or with a bad port, is rejected clearly", () => {
  const result = validateWebApp({ port: 0, replicas: -1 });
  assert.ok(!result.ok);
  assert.deepEqual(result.problems, [
    "spec.image: is required",
    "spec.replicas: must be at least 0, got -1",
    "spec.port: must be at least 1, got 0",
  ]);
  const spaced = validateWebApp({ image: "nginx latest" });
  assert.ok(!spaced.ok);
  assert.equal(spaced.message, "spec.image: must not contain whitespace");
});

Deno.test("a WebApp spec runs the cross-field checks of env, resources and placement", () => {
  const result = validateWebApp({
    image: "nginx",
    env: [{ name: "MODE", value: "a" }, { name: "MODE", value: "b" }],
    resources: { requests: { memory: "2Gi" }, limits: { memory: "1Gi" } },
    nodeSelector: { "kubernetes.io/arch": "arm 64" },
    tolerations: [{ key: "edge", operator: "Exists", value: "yes" }],
  });
  assert.ok(!result.ok);
  assert.deepEqual(result.problems.map((line) => line.split(":")[0]), [
    "spec.env[1].name",
    "spec.resources.requests.memory",
    'spec.nodeSelector["kubernetes.io/arch"]',
    "spec.tolerations[0].value",
  ]);
});

Deno.test("renderWebApp renders a Deployment with labels, owner reference and the container", () => {
  const app = webApp({
    replicas: 3,
    port: 9000,
    env: [{ name: "MODE", value: "prod" }],
    resources: { limits: { cpu: 1, memory: "256Mi" } },
    nodeSelector: { "kubernetes.io/arch": "arm64" },
    tolerations: [{ key: "edge", operator: "Exists", effect: "NoSchedule" }],
  });
  const { deployment } = renderWebApp(app);
  const labels = {
    "app.kubernetes.io/name": "webapp",
    "app.kubernetes.io/instance": "shop",
    "app.kubernetes.io/managed-by": "kinglet",
  };
  assert.equal(deployment.apiVersion, "apps/v1");
  assert.equal(deployment.kind, "Deployment");
  assert.deepEqual(deployment.metadata, {
    name: "shop",
    namespace: "web",
    labels,
    ownerReferences: [{
      apiVersion: "kinglet.dev/v1alpha1",
      kind: "WebApp",
      name: "shop",
      uid: "uid-shop",
      controller: true,
      blockOwnerDeletion: true,
    }],
  });
  assert.equal(deployment.spec?.replicas, 3);
  assert.deepEqual(deployment.spec?.selector, {
    matchLabels: { "app.kubernetes.io/name": "webapp", "app.kubernetes.io/instance": "shop" },
  });
  const pod = deployment.spec!.template;
  assert.deepEqual(pod.metadata?.labels, labels);
  assert.deepEqual(pod.spec?.containers, [{
    name: "app",
    image: "ghcr.io/acme/shop:1.4.2",
    ports: [{ name: "http", containerPort: 9000, protocol: "TCP" }],
    env: [{ name: "MODE", value: "prod" }],
    resources: { limits: { cpu: "1", memory: "256Mi" } },
  }]);
  assert.deepEqual(pod.spec?.nodeSelector, { "kubernetes.io/arch": "arm64" });
  assert.deepEqual(pod.spec?.tolerations, [{
    key: "edge",
    operator: "Exists",
    effect: "NoSchedule",
  }]);
  assert.equal(deployment.status, undefined);
  assert.equal(deployment.spec?.strategy, undefined);
});

Deno.test("renderWebApp leaves out env, resources and placement the spec does not set", () => {
  const pod = renderWebApp(webApp()).deployment.spec!.template.spec!;
  assert.deepEqual(Object.keys(pod), ["containers"]);
  assert.deepEqual(Object.keys(pod.containers[0]!), ["name", "image", "ports"]);
});

Deno.test("renderWebApp renders a ClusterIP Service on the app's port to the named container port", () => {
  const { service, deployment } = renderWebApp(webApp({ port: 9000 }));
  assert.equal(service.apiVersion, "v1");
  assert.equal(service.kind, "Service");
  assert.equal(service.metadata?.name, "shop");
  assert.equal(service.metadata?.ownerReferences?.[0]?.controller, true);
  assert.deepEqual(service.spec, {
    type: "ClusterIP",
    selector: deployment.spec!.selector.matchLabels,
    ports: [{ name: "http", port: 9000, targetPort: "http", protocol: "TCP" }],
  });
});

Deno.test("renderWebApp refuses a WebApp without a uid", () => {
  const app = webApp();
  app.metadata = { name: "shop", namespace: "web" };
  assert.throws(() => renderWebApp(app), { name: "TypeError", message: /no metadata\.uid/ });
});

Deno.test("webAppStatus is Pending without a Deployment and reports URL and selector", () => {
  const status = webAppStatus(webApp({ port: 9000 }), undefined, NOW);
  assert.equal(status.phase, "Pending");
  assert.equal(status.observedGeneration, 1);
  assert.equal(status.url, "http://shop.web.svc.cluster.local:9000");
  assert.equal(status.selector, "app.kubernetes.io/instance=shop,app.kubernetes.io/name=webapp");
  assert.deepEqual([status.replicas, status.readyReplicas, status.availableReplicas], [0, 0, 0]);
  assert.equal(findCondition(status.conditions, "Progressing")?.status, "True");
  assert.equal(findCondition(status.conditions, "Ready")?.status, "False");
  assert.equal(findCondition(status.conditions, "InvalidSpec")?.status, "False");
});

Deno.test("webAppStatus is Ready when every replica is updated and available", () => {
  const app = webApp({ replicas: 2 });
  const status = webAppStatus(
    app,
    deployment({ replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 }),
    NOW,
  );
  assert.equal(status.phase, "Ready");
  assert.deepEqual([status.replicas, status.readyReplicas, status.availableReplicas], [2, 2, 2]);
  const ready = findCondition(status.conditions, "Ready")!;
  assert.deepEqual([ready.status, ready.reason, ready.message], [
    "True",
    "Available",
    "2 of 2 replicas available",
  ]);
  assert.equal(findCondition(status.conditions, "Degraded")?.status, "False");
});

Deno.test("webAppStatus is Progressing while a rollout or scale is under way", () => {
  const app = webApp({ replicas: 2 });
  const cases: [V1Deployment, string][] = [
    [{ ...deployment({ observedGeneration: 3 }), metadata: { generation: 4 } }, "RolloutPending"],
    [deployment({ replicas: 1, updatedReplicas: 1, availableReplicas: 1 }, 1), "RollingOut"],
    [deployment({ replicas: 3, updatedReplicas: 1, availableReplicas: 2 }), "RollingOut"],
    [deployment({ replicas: 3, updatedReplicas: 2, availableReplicas: 2 }), "RollingOut"],
    [
      deployment({ replicas: 2, updatedReplicas: 2, availableReplicas: 1 }, 2, "ReplicaSetUpdated"),
      "RollingOut",
    ],
  ];
  for (const [observed, reason] of cases) {
    const status = webAppStatus(app, observed, NOW);
    assert.equal(status.phase, "Progressing", JSON.stringify(observed.status));
    assert.equal(findCondition(status.conditions, "Progressing")?.reason, reason);
  }
});

Deno.test("webAppStatus is Degraded when a completed rollout loses replicas or a rollout stalls", () => {
  const app = webApp({ replicas: 2 });
  const lost = webAppStatus(
    app,
    deployment(
      { replicas: 2, updatedReplicas: 2, availableReplicas: 1 },
      2,
      "NewReplicaSetAvailable",
    ),
    NOW,
  );
  assert.equal(lost.phase, "Degraded");
  assert.equal(findCondition(lost.conditions, "Degraded")?.message, "1 of 2 replicas available");
  const stalled = webAppStatus(app, {
    ...deployment({ replicas: 2, updatedReplicas: 1 }),
    status: {
      observedGeneration: 4,
      conditions: [{
        type: "Progressing",
        status: "False",
        reason: "ProgressDeadlineExceeded",
        message: 'ReplicaSet "shop-7d4" has timed out progressing.',
      }],
    },
  }, NOW);
  assert.equal(stalled.phase, "Degraded");
  assert.equal(findCondition(stalled.conditions, "Degraded")?.reason, "ProgressDeadlineExceeded");
});

Deno.test("webAppStatus treats a WebApp scaled to zero as Ready", () => {
  const status = webAppStatus(webApp({ replicas: 0 }), deployment({}, 0), NOW);
  assert.equal(status.phase, "Ready");
  assert.equal(findCondition(status.conditions, "Ready")?.reason, "ScaledToZero");
});

Deno.test("invalidWorkloadStatus sets a WebApp's phase Invalid and InvalidSpec, keeping the counts", () => {
  const previous = webAppStatus(
    webApp({ replicas: 2 }),
    deployment({ replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 }),
    NOW,
  );
  const message = 'spec.port: must be a number, got "http"';
  const status = invalidWorkloadStatus(
    {
      kind: "WebApp",
      metadata: { name: "shop", generation: 5 },
      spec: { port: "http" },
      status: previous,
    },
    message,
    new Date("2025-03-01T12:30:00Z"),
  );
  assert.equal(status.phase, "Invalid");
  assert.equal(status.observedGeneration, 5);
  assert.equal(status.readyReplicas, 2);
  const invalid = findCondition(status.conditions, "InvalidSpec")!;
  assert.deepEqual([invalid.status, invalid.reason, invalid.message], [
    "True",
    "InvalidSpec",
    message,
  ]);
  assert.equal(invalid.lastTransitionTime, "2025-03-01T12:30:00Z");
  assert.equal(findCondition(status.conditions, "Ready")?.status, "False");
});
