/**
 * InferenceService end to end: the operator runs as a separate process under
 * the deploy/ RBAC, against the real control plane whose kwok GPU nodes
 * (`kwok-gpu-a100|h100|l40s`, labelled `kinglet.dev/gpu-type` and tainted
 * `nvidia.com/gpu`) take the GPU pods and whose CPU nodes take the rest.
 */
import assert from "node:assert/strict";
import { assertNoDenials, denialsInLog } from "../../lib/testing/denials.ts";
import type { V1Deployment, V1Pod, V1Service } from "@kubernetes/client-node";
import { crdDocuments, install } from "../../lib/cli/install.ts";
import type { KubeClient } from "../../lib/kube/client.ts";
import {
  CUSTOM_RESOURCE_DEFINITIONS,
  DEPLOYMENTS,
  PODS,
  SERVICES,
} from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { INFERENCE_SERVICES } from "../../lib/operators/inference/kind.ts";
import { FIELD_MANAGER } from "../../lib/operators/labels.ts";
import {
  adminClient,
  condition,
  createNamespace,
  deleteNamespace,
  eventsFor,
  getOrUndefined,
  waitFor,
} from "../_support/kube.ts";
import { startOperator } from "../_support/operator.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";

type Deployment = V1Deployment & KubeObject;
type Pod = V1Pod & KubeObject;

const MODEL = "HuggingFaceTB/SmolLM2-360M-Instruct";
const BIGGER_MODEL = "HuggingFaceTB/SmolLM2-1.7B-Instruct";

function inferenceService(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): KubeObject {
  return {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "InferenceService",
    metadata: { name, namespace },
    spec,
  };
}

/** The server container's environment as a map. */
function envOf(deployment: Deployment): Record<string, string | undefined> {
  const env = deployment.spec?.template.spec?.containers[0]?.env ?? [];
  return Object.fromEntries(env.map((e) => [e.name, e.value]));
}

/** Events about the InferenceService itself, not its same-named Deployment. */
async function serviceEvents(
  client: KubeClient,
  namespace: string,
  name: string,
  reason: string,
): Promise<KubeObject[]> {
  const events = await eventsFor(client, namespace, name, reason);
  return events.filter((e) => (e.regarding as { kind?: string }).kind === "InferenceService");
}

/**
 * A copy of the InferenceService CRD that accepts any gpuType, as an older
 * kinglet's CRD did. Applied under kinglet's field manager, so the enum it
 * leaves out is removed from the stored CRD, and re-installing restores it.
 */
function crdWithoutGpuTypeEnum(): KubeObject {
  const crd = crdDocuments().find((c) => c.metadata.name === "inferenceservices.kinglet.dev");
  assert(crd, "kinglet defines the InferenceService CRD");
  const copy = structuredClone(crd);
  const schema = copy.spec.versions[0]?.schema.openAPIV3Schema as {
    properties: { spec: { properties: { gpuType: { enum?: unknown } } } };
  };
  assert(schema.properties.spec.properties.gpuType.enum, "the CRD restricts gpuType");
  delete schema.properties.spec.properties.gpuType.enum;
  return copy as unknown as KubeObject;
}

Deno.test("inferenceservice lifecycle: GPU and CPU placement, model change, scale, unknown gpuType, drift repair, delete", async (t) => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "e2e-isvc");
  await using operator = await startOperator({ kubeconfig: await operatorKubeconfig() });
  await operator.ready();
  const names = ["chat", "embed", "legacy"];

  const deployment = (name: string) => client.get<Deployment>(DEPLOYMENTS, name, { namespace: ns });
  const patch = (name: string, spec: Record<string, unknown>) =>
    client.patch(INFERENCE_SERVICES, name, { spec }, { type: "merge", namespace: ns });
  const ready = (name: string, replicas: number) =>
    waitFor(`InferenceService ${name} Ready with ${replicas} ready replicas`, async () => {
      const isvc = await client.get(INFERENCE_SERVICES, name, { namespace: ns });
      const status = isvc.status as
        | { readyReplicas?: number; phase?: string; observedGeneration?: number }
        | undefined;
      return status?.phase === "Ready" && condition(isvc, "Ready")?.status === "True" &&
        status.observedGeneration === isvc.metadata?.generation &&
        status.readyReplicas === replicas && isvc;
    });
  /** Waits until exactly `replicas` live pods exist, all Ready, and returns them. */
  const pods = (name: string, replicas: number) =>
    waitFor(`${replicas} Ready pods of ${name}`, async () => {
      const list = await client.list<Pod>(PODS, {
        namespace: ns,
        labelSelector: `app.kubernetes.io/instance=${name},app.kubernetes.io/name=inferenceservice`,
      });
      const live = list.items.filter((p) => !p.metadata?.deletionTimestamp);
      const allReady = live.every((p) =>
        p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")
      );
      return live.length === replicas && allReady && live;
    });
  const nodesOf = (list: Pod[]) => list.map((p) => p.spec?.nodeName);

  try {
    await t.step(
      "an A100 InferenceService runs on the A100 node with a GPU limit, toleration and batch size",
      async () => {
        await client.create(
          INFERENCE_SERVICES,
          inferenceService(ns, "chat", {
            model: MODEL,
            gpuType: "A100",
            maxBatchSize: 16,
            resources: { requests: { cpu: "1" }, limits: { memory: "4Gi" } },
          }),
        );
        const isvc = await ready("chat", 1);
        assert.equal(
          (isvc.status as { url?: string }).url,
          `http://chat.${ns}.svc.cluster.local:8080`,
        );
        const d = await deployment("chat");
        assert.equal(d.metadata?.ownerReferences?.[0]?.uid, isvc.metadata?.uid);
        const pod = d.spec?.template.spec;
        assert.deepEqual(pod?.nodeSelector, { "kinglet.dev/gpu-type": "A100" });
        assert.deepEqual(pod?.tolerations, [
          { key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" },
        ]);
        const container = pod?.containers[0];
        assert.deepEqual(container?.resources?.limits, { memory: "4Gi", "nvidia.com/gpu": "1" });
        assert.equal(container?.image, "ghcr.io/huggingface/text-generation-inference:3.3.5");
        const env = envOf(d);
        assert.equal(env.MAX_BATCH_SIZE, "16");
        assert.equal(env.MODEL_ID, MODEL);
        assert.equal(env.MODEL_NAME, MODEL);
        assert.equal(env.PORT, "8080");
        assert.deepEqual(nodesOf(await pods("chat", 1)), ["kwok-gpu-a100"]);
        const service = await client.get<V1Service & KubeObject>(SERVICES, "chat", {
          namespace: ns,
        });
        assert.equal(service.spec?.ports?.[0]?.port, 8080);
        assert.equal(service.metadata?.ownerReferences?.[0]?.uid, isvc.metadata?.uid);
        const events = await waitFor("the Ready Event", async () => {
          const events = await serviceEvents(client, ns, "chat", "Ready");
          return events.length > 0 && events;
        });
        assert.equal(events[0]?.note, "InferenceService is Ready");
      },
    );

    await t.step(
      "a CPU-only InferenceService has no GPU selector, limit or toleration and runs on CPU nodes",
      async () => {
        await client.create(
          INFERENCE_SERVICES,
          inferenceService(ns, "embed", { model: MODEL, gpuType: "none", replicas: 2 }),
        );
        await ready("embed", 2);
        const d = await deployment("embed");
        const pod = d.spec?.template.spec;
        assert.equal(pod?.nodeSelector, undefined);
        assert.equal(pod?.tolerations, undefined);
        assert.equal(pod?.containers[0]?.resources?.limits?.["nvidia.com/gpu"], undefined);
        assert.equal(
          pod?.containers[0]?.image,
          "ghcr.io/huggingface/text-generation-inference:3.3.5-intel-cpu",
        );
        assert.equal(envOf(d).MAX_BATCH_SIZE, "8", "maxBatchSize defaults to 8");
        for (const node of nodesOf(await pods("embed", 2))) {
          assert.match(node ?? "", /^kwok-node-\d$/);
        }
      },
    );

    await t.step("a new model and batch size roll out to the Deployment and its pods", async () => {
      await patch("chat", { model: BIGGER_MODEL, maxBatchSize: 32 });
      await waitFor("the Deployment to serve the new model", async () => {
        const env = envOf(await deployment("chat"));
        return env.MODEL_ID === BIGGER_MODEL && env.MODEL_NAME === BIGGER_MODEL &&
          env.MAX_BATCH_SIZE === "32";
      });
      await ready("chat", 1);
      const live = await pods("chat", 1);
      const env = live[0]?.spec?.containers[0]?.env ?? [];
      assert.equal(env.find((e) => e.name === "MODEL_ID")?.value, BIGGER_MODEL);
      assert.deepEqual(nodesOf(live), ["kwok-gpu-a100"]);
    });

    await t.step("scaling up and down keeps every pod on the A100 node", async () => {
      await patch("chat", { replicas: 3 });
      await ready("chat", 3);
      assert.equal((await deployment("chat")).spec?.replicas, 3);
      assert.deepEqual(nodesOf(await pods("chat", 3)), Array(3).fill("kwok-gpu-a100"));
      await patch("chat", { replicas: 1 });
      await ready("chat", 1);
      assert.equal((await deployment("chat")).spec?.replicas, 1);
      assert.deepEqual(nodesOf(await pods("chat", 1)), ["kwok-gpu-a100"]);
    });

    await t.step(
      "a gpuType stored before validation existed gets InvalidSpec naming the allowed values, a fix to L40S recovers",
      async () => {
        try {
          await client.apply(CUSTOM_RESOURCE_DEFINITIONS, crdWithoutGpuTypeEnum(), {
            fieldManager: FIELD_MANAGER,
            force: true,
          });
          await waitFor(
            "the API server to accept gpuType T4",
            () =>
              client.create(
                INFERENCE_SERVICES,
                inferenceService(ns, "legacy", { model: MODEL, gpuType: "T4" }),
              ),
          );
        } finally {
          await install(client);
        }
        const isvc = await waitFor("InvalidSpec True", async () => {
          const isvc = await client.get(INFERENCE_SERVICES, "legacy", { namespace: ns });
          return condition(isvc, "InvalidSpec")?.status === "True" && isvc;
        });
        const message = 'spec.gpuType: "T4" is not supported; use one of A100, H100, L40S, none';
        assert.equal(condition(isvc, "InvalidSpec")?.message, message);
        assert.equal((isvc.status as { phase?: string }).phase, "Invalid");
        assert.equal(
          await getOrUndefined(client, DEPLOYMENTS, "legacy", ns),
          undefined,
          "nothing is deployed for an invalid spec",
        );
        const events = await waitFor("the InvalidSpec Event", async () => {
          const events = await serviceEvents(client, ns, "legacy", "InvalidSpec");
          return events.length > 0 && events;
        });
        assert.equal(events[0]?.type, "Warning");
        assert.equal(events[0]?.note, message);
        await new Promise((r) => setTimeout(r, 2_000));
        assert.equal(
          (await serviceEvents(client, ns, "legacy", "InvalidSpec")).length,
          1,
          "one Warning Event, not a storm",
        );

        await patch("legacy", { gpuType: "L40S" });
        const fixed = await ready("legacy", 1);
        assert.equal(condition(fixed, "InvalidSpec")?.status, "False");
        assert.deepEqual((await deployment("legacy")).spec?.template.spec?.nodeSelector, {
          "kinglet.dev/gpu-type": "L40S",
        });
        assert.deepEqual(nodesOf(await pods("legacy", 1)), ["kwok-gpu-l40s"]);
      },
    );

    await t.step("a child edited or deleted by someone else is restored", async () => {
      await client.patch(DEPLOYMENTS, "chat", {
        spec: {
          replicas: 4,
          template: { spec: { nodeSelector: { "kinglet.dev/gpu-type": "H100" } } },
        },
      }, { type: "merge", namespace: ns });
      await waitFor("the Deployment back at 1 replica on A100", async () => {
        const d = await deployment("chat");
        return d.spec?.replicas === 1 &&
          d.spec.template.spec?.nodeSelector?.["kinglet.dev/gpu-type"] === "A100";
      });
      await ready("chat", 1);
      assert.deepEqual(nodesOf(await pods("chat", 1)), ["kwok-gpu-a100"]);

      const before = await client.get(SERVICES, "chat", { namespace: ns });
      await client.delete(SERVICES, "chat", { namespace: ns });
      await waitFor("the Service recreated", async () => {
        const service = await getOrUndefined(client, SERVICES, "chat", ns);
        return service !== undefined && service.metadata?.uid !== before.metadata?.uid;
      });
    });

    await t.step("deleting the InferenceServices removes their children", async () => {
      await Promise.all(
        names.map((name) => client.delete(INFERENCE_SERVICES, name, { namespace: ns })),
      );
      await waitFor("the InferenceServices gone", async () => {
        const list = await client.list(INFERENCE_SERVICES, { namespace: ns });
        return list.items.length === 0;
      });
      await waitFor("the Deployments and Services gone", async () => {
        const [deployments, services] = await Promise.all([
          client.list(DEPLOYMENTS, { namespace: ns }),
          client.list(SERVICES, { namespace: ns }),
        ]);
        return deployments.items.length === 0 && services.items.length === 0;
      });
    });

    assert.equal(await operator.stop(), 0, "SIGTERM exits 0");
    // Under deploy/'s RBAC and ownership policy: not one request refused.
    assertNoDenials(denialsInLog(await operator.log()), "kinglet");
  } finally {
    await deleteNamespace(client, ns);
    client.close();
  }
});
