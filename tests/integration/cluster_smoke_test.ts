/**
 * Proves the local control plane is a real one: a Deployment goes through
 * kube-controller-manager (ReplicaSet, pods), kube-scheduler (binding) and
 * kwok (Running, Ready), and etcd compaction turns old configmap watches into
 * 410 Gone.
 */
import assert from "node:assert/strict";
import type { V1ConfigMap, V1Deployment, V1NodeList, V1PodList } from "@kubernetes/client-node";
import { compactEtcd, kubectl, type KubectlResult } from "../_support/cluster.ts";

async function ok(args: string[], stdin?: string): Promise<string> {
  const result: KubectlResult = await kubectl(args, { stdin });
  assert.equal(result.code, 0, `kubectl ${args.join(" ")} failed: ${result.stderr}`);
  return result.stdout;
}

async function withNamespace(prefix: string, body: (namespace: string) => Promise<void>) {
  const namespace = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  await ok(["create", "namespace", namespace]);
  try {
    await body(namespace);
  } finally {
    await ok(["delete", "namespace", namespace, "--wait=false"]);
  }
}

Deno.test("a Deployment of 3 replicas becomes ready with its pods bound to kwok nodes", async () => {
  await withNamespace("smoke", async (namespace) => {
    await ok(["apply", "-f", "-"], deployment(namespace, 3));

    const deadline = Date.now() + 90_000;
    let readyReplicas = 0;
    while (readyReplicas !== 3) {
      assert.ok(Date.now() < deadline, `only ${readyReplicas}/3 replicas ready after 90 s`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      const current = JSON.parse(
        await ok(["get", "deployment", "smoke", "-n", namespace, "-o", "json"]),
      ) as V1Deployment;
      readyReplicas = current.status?.readyReplicas ?? 0;
    }

    const nodes = JSON.parse(
      await ok(["get", "nodes", "-l", "type=kwok", "-o", "json"]),
    ) as V1NodeList;
    const kwokNodes = new Set(nodes.items.map((n) => n.metadata?.name));
    const pods = JSON.parse(
      await ok(["get", "pods", "-n", namespace, "-l", "app=smoke", "-o", "json"]),
    ) as V1PodList;
    assert.equal(pods.items.length, 3);
    for (const pod of pods.items) {
      assert.ok(
        kwokNodes.has(pod.spec?.nodeName),
        `${pod.metadata?.name} is on ${pod.spec?.nodeName}`,
      );
      assert.equal(pod.status?.phase, "Running");
      assert.ok(pod.status?.podIP, `${pod.metadata?.name} has no pod IP`);
      const owner = pod.metadata?.ownerReferences?.[0];
      assert.equal(owner?.kind, "ReplicaSet", "pods are created by the ReplicaSet controller");
    }
  });
});

Deno.test("a configmap watch from before an etcd compaction ends with 410 Gone", async () => {
  await withNamespace("compact", async (namespace) => {
    const created = JSON.parse(
      await ok([
        "create",
        "configmap",
        "probe",
        "-n",
        namespace,
        "--from-literal=v=1",
        "-o",
        "json",
      ]),
    ) as V1ConfigMap;
    const before = created.metadata!.resourceVersion!;
    // Two writes, so the compaction lands past before+1: a watch from `before`
    // starts etcd at before+1, and if that were exactly the compacted revision
    // the API server would answer 500 (an event whose previous value is gone).
    for (const v of ["2", "3"]) {
      await ok(["patch", "configmap", "probe", "-n", namespace, "-p", `{"data":{"v":"${v}"}}`]);
    }

    const revision = await compactEtcd();
    assert.ok(revision > Number(before) + 1, `compacted to ${revision}, before is ${before}`);

    const watch = await kubectl([
      "get",
      "--raw",
      `/api/v1/namespaces/${namespace}/configmaps?watch=1&resourceVersion=${before}`,
    ], { signal: AbortSignal.timeout(30_000) });
    const events = watch.stdout.trim().split("\n").filter(Boolean).map((line) => JSON.parse(line));
    const error = events.find((e) => e.type === "ERROR");
    assert.ok(error, `expected an ERROR event, got ${watch.stdout || watch.stderr}`);
    assert.equal(error.object.code, 410, JSON.stringify(error.object));
    assert.equal(error.object.reason, "Expired");
  });
});

function deployment(namespace: string, replicas: number): string {
  return JSON.stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "smoke", namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: "smoke" } },
      template: {
        metadata: { labels: { app: "smoke" } },
        spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }] },
      },
    },
  });
}
