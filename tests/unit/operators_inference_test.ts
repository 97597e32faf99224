import assert from "node:assert/strict";
import type { V1Deployment } from "../../lib/operators/models.ts";
import { findCondition } from "../../lib/runtime/mod.ts";
import {
  defaultServerImage,
  GPU_TYPE_LABEL,
  INFERENCE_PORT,
  renderInferenceService,
} from "../../lib/operators/inference/render.ts";
import {
  type InferenceService,
  validateInferenceService,
} from "../../lib/operators/inference/kind.ts";
import { invalidWorkloadStatus, workloadStatus } from "../../lib/operators/workload_status.ts";

const MODEL = "HuggingFaceTB/SmolLM2-360M-Instruct";

function isvc(spec: Record<string, unknown> = {}): InferenceService {
  const result = validateInferenceService({ model: MODEL, ...spec });
  if (!result.ok) throw new Error(result.message);
  return {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "InferenceService",
    metadata: { name: "chat", namespace: "ml", uid: "uid-chat", generation: 1 },
    spec: result.spec,
  };
}

function envOf(deployment: V1Deployment): Record<string, string | undefined> {
  const env = deployment.spec!.template.spec!.containers[0]!.env ?? [];
  return Object.fromEntries(env.map((variable) => [variable.name, variable.value]));
}

Deno.test("an InferenceService spec defaults to one CPU replica batching 8 requests", () => {
  const result = validateInferenceService({ model: MODEL });
  assert.ok(result.ok);
  assert.deepEqual(result.spec, { model: MODEL, replicas: 1, gpuType: "none", maxBatchSize: 8 });
});

Deno.test("an unsupported GPU type is rejected with the supported ones listed", () => {
  const result = validateInferenceService({ model: MODEL, gpuType: "T4" });
  assert.ok(!result.ok);
  assert.equal(
    result.message,
    'spec.gpuType: "T4" is not supported; use one of A100, H100, L40S, none',
  );
});

Deno.test("maxBatchSize is bounded, more tightly without a GPU", () => {
  const zero = validateInferenceService({ model: MODEL, maxBatchSize: 0 });
  assert.ok(!zero.ok);
  assert.equal(zero.message, "spec.maxBatchSize: must be at least 1, got 0");
  const cpu = validateInferenceService({ model: MODEL, maxBatchSize: 64 });
  assert.ok(!cpu.ok);
  assert.equal(
    cpu.message,
    "spec.maxBatchSize: 64 is too large for CPU serving (gpuType none); use at most 32, or choose a GPU type",
  );
  assert.ok(validateInferenceService({ model: MODEL, maxBatchSize: 64, gpuType: "H100" }).ok);
  assert.ok(!validateInferenceService({ model: MODEL, maxBatchSize: 4096, gpuType: "H100" }).ok);
});

Deno.test("an InferenceService needs a model without whitespace", () => {
  const missing = validateInferenceService({});
  assert.ok(!missing.ok);
  assert.equal(missing.message, "spec.model: is required");
  assert.ok(!validateInferenceService({ model: "my model" }).ok);
});

Deno.test("a GPU InferenceService selects GPU nodes, tolerates their taint and limits one GPU", () => {
  const { deployment } = renderInferenceService(
    isvc({ gpuType: "A100", resources: { limits: { memory: "40Gi" } } }),
  );
  const pod = deployment.spec!.template.spec!;
  assert.deepEqual(pod.nodeSelector, { "kinglet.dev/gpu-type": "A100" });
  assert.equal(GPU_TYPE_LABEL, "kinglet.dev/gpu-type");
  assert.deepEqual(pod.tolerations, [{
    key: "nvidia.com/gpu",
    operator: "Exists",
    effect: "NoSchedule",
  }]);
  assert.deepEqual(pod.containers[0]!.resources, {
    limits: { memory: "40Gi", "nvidia.com/gpu": "1" },
  });
  assert.equal(pod.containers[0]!.image, "ghcr.io/huggingface/text-generation-inference:3.3.5");
});

Deno.test("a CPU InferenceService has no GPU selector, toleration or limit", () => {
  const { deployment } = renderInferenceService(isvc());
  const pod = deployment.spec!.template.spec!;
  assert.equal(pod.nodeSelector, undefined);
  assert.equal(pod.tolerations, undefined);
  assert.equal(pod.containers[0]!.resources, undefined);
  assert.equal(pod.containers[0]!.image, defaultServerImage("none"));
  assert.match(defaultServerImage("none"), /-intel-cpu$/);
});

Deno.test("the model server gets the model, batch size and port in its environment", () => {
  const { deployment } = renderInferenceService(
    isvc({ maxBatchSize: 16, image: "registry.local/tgi:edge" }),
  );
  assert.deepEqual(envOf(deployment), {
    MODEL_ID: MODEL,
    MODEL_NAME: MODEL,
    MAX_BATCH_SIZE: "16",
    PORT: "8080",
  });
  const container = deployment.spec!.template.spec!.containers[0]!;
  assert.equal(container.image, "registry.local/tgi:edge");
  assert.deepEqual(container.ports, [{ name: "http", containerPort: 8080, protocol: "TCP" }]);
});

Deno.test("renderInferenceService labels and owns both children and selects its own pods", () => {
  const { deployment, service } = renderInferenceService(isvc({ replicas: 2 }));
  const selector = {
    "app.kubernetes.io/name": "inferenceservice",
    "app.kubernetes.io/instance": "chat",
  };
  for (const child of [deployment, service]) {
    assert.equal(child.metadata?.name, "chat");
    assert.equal(child.metadata?.namespace, "ml");
    assert.deepEqual(child.metadata?.labels, {
      ...selector,
      "app.kubernetes.io/managed-by": "kinglet",
    });
    assert.deepEqual(child.metadata?.ownerReferences, [{
      apiVersion: "kinglet.dev/v1alpha1",
      kind: "InferenceService",
      name: "chat",
      uid: "uid-chat",
      controller: true,
      blockOwnerDeletion: true,
    }]);
  }
  assert.equal(deployment.kind, "Deployment");
  assert.equal(deployment.spec?.replicas, 2);
  assert.deepEqual(deployment.spec?.selector.matchLabels, selector);
  assert.equal(service.kind, "Service");
  assert.deepEqual(service.spec, {
    type: "ClusterIP",
    selector,
    ports: [{ name: "http", port: 8080, targetPort: "http", protocol: "TCP" }],
  });
});

Deno.test("workloadStatus reports an InferenceService's URL, selector and phase from the Deployment", () => {
  const service = isvc({ replicas: 1 });
  const pending = workloadStatus(service, INFERENCE_PORT, undefined, new Date());
  assert.equal(pending.phase, "Pending");
  assert.equal(pending.url, "http://chat.ml.svc.cluster.local:8080");
  assert.equal(
    pending.selector,
    "app.kubernetes.io/instance=chat,app.kubernetes.io/name=inferenceservice",
  );
  const ready = workloadStatus(service, INFERENCE_PORT, {
    metadata: { generation: 1 },
    spec: { replicas: 1, selector: {}, template: {} },
    status: {
      observedGeneration: 1,
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
    },
  }, new Date());
  assert.equal(ready.phase, "Ready");
  assert.equal(findCondition(ready.conditions, "Ready")?.status, "True");
});

Deno.test("invalidWorkloadStatus reports an InferenceService's validation message", () => {
  const message = 'spec.gpuType: "T4" is not supported; use one of A100, H100, L40S, none';
  const status = invalidWorkloadStatus(
    { kind: "InferenceService", metadata: { name: "chat", generation: 2 } },
    message,
    new Date(),
  );
  assert.equal(status.phase, "Invalid");
  assert.equal(findCondition(status.conditions, "InvalidSpec")?.message, message);
});
