/**
 * The generated operator's tests, as kinglet's examples test theirs: a unit
 * test of the controller in a `Manager` over `MemoryCluster` on a
 * `FakeClock`, and an e2e test that runs `main.ts` as a process against the
 * API server of `testCluster()`.
 *
 * @module
 */
import { fit, importLine } from "./_format.ts";
import type { ProjectNames } from "./names.ts";
import { controllerConst } from "./source_files.ts";

/** `tests/unit/controller_test.ts`: the render function, then the controller in a Manager. */
export function unitTestTs(n: ProjectNames): string {
  const controller = controllerConst(n);
  return `/**
 * The ${n.kind} controller with kinglet's test kit: its render function alone,
 * then the controller in a Manager over the in-memory API server on a fake clock.
 */
import assert from "node:assert/strict";
import { CONFIG_MAPS } from "@kinglet/kinglet/kube";
import { Manager } from "@kinglet/kinglet/runtime";
import { FakeClock, MemoryCluster, waitFor } from "@kinglet/kinglet/testing";
${importLine(["type ConfigMap", controller, "renderConfigMap"], "../../src/controller.ts")}
${importLine([`type ${n.kind}`, n.kindConst], "../../src/schema.ts")}

const { resource } = ${n.kindConst};
const CHILD_KEY = "demo/sample-${n.childSuffix}";

const sample: ${n.kind} = {
  apiVersion: "${n.apiVersion}",
  kind: "${n.kind}",
  metadata: { name: "sample", namespace: "demo", uid: "u-1" },
  spec: { message: "Hello" },
};

/** Runs the controller over \`cluster\` until the returned function stops it. */
function run(cluster: MemoryCluster, clock: FakeClock): () => Promise<void> {
  const manager = new Manager({
    client: cluster,
    clock,
    metricsAddress: "0",
    healthAddress: "0",
    reportingInstance: "test",
  });
  manager.add(${controller});
  const stop = new AbortController();
  const running = manager.run(stop.signal);
  return async () => {
    stop.abort();
    await running;
  };
}

Deno.test("a ${n.kind} renders a ConfigMap it controls, holding its message", () => {
  const cm = renderConfigMap(sample);
  assert.equal(cm.metadata.name, "sample-${n.childSuffix}");
  assert.equal(cm.metadata.namespace, "demo");
  assert.deepEqual(cm.data, { message: "Hello" });
  assert.equal(cm.metadata.ownerReferences?.[0]?.uid, "u-1");
  assert.equal(cm.metadata.ownerReferences?.[0]?.controller, true);
});

Deno.test("the ${n.kind} CRD is named after its plural and group", () => {
  const { name } = ${n.kindConst}.crd().metadata;
  assert.equal(name, "${n.crdName}");
});

Deno.test("the controller writes the ConfigMap, reports Ready and repairs", async () => {
  const clock = new FakeClock();
  const cluster = new MemoryCluster({ clock, namespaces: ["demo"] });
  const stop = run(cluster, clock);
  try {
    const created = { ...sample, metadata: { name: "sample", namespace: "demo" } };
    cluster.put(resource, created); // as a user would create it
    const cm = await waitFor(
      "the ConfigMap",
      () => cluster.object<ConfigMap>(CONFIG_MAPS, CHILD_KEY),
    );
    assert.deepEqual(cm.data, { message: "Hello" });
    const ready = await waitFor("the Ready condition", () => {
${
    fit(
      `      const stored = cluster.object<${n.kind}>(resource, "demo/sample");`,
      `      const stored = cluster.object<${n.kind}>(\n        resource,\n        "demo/sample",\n      );`,
    )
  }
      const condition = stored?.status?.conditions?.find((c) => c.type === "Ready");
      return condition?.status === "True" && stored;
    });
    assert.equal(ready.status?.observedGeneration, ready.metadata.generation);
    assert.equal(ready.status?.configMap, "sample-${n.childSuffix}");

    cluster.remove(CONFIG_MAPS, CHILD_KEY);
    await waitFor("the ConfigMap back", () => cluster.object(CONFIG_MAPS, CHILD_KEY));

    cluster.put(resource, { ...ready, spec: { message: "Hello again" } });
    await waitFor("the new message", () => {
      const current = cluster.object<ConfigMap>(CONFIG_MAPS, CHILD_KEY);
      return current?.data.message === "Hello again";
    });
  } finally {
    await stop();
  }
});
`;
}

/** `tests/e2e/operator_test.ts`: `main.ts` as a process against a real API server. */
export function e2eTestTs(n: ProjectNames): string {
  return `/**
 * The ${n.kind} operator as it runs (\`deno task start\`), against a real API
 * server: the cluster of \`KINGLET_TEST_KUBECONFIG\`, or etcd and
 * kube-apiserver started from \`KUBEBUILDER_ASSETS\` (see \`testCluster\`).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { CONFIG_MAPS } from "@kinglet/kinglet/kube";
import { testCluster, waitFor } from "@kinglet/kinglet/testing";
import type { ConfigMap } from "../../src/controller.ts";
${importLine([`type ${n.kind}`, n.kindConst], "../../src/schema.ts")}

const { resource } = ${n.kindConst};
const CHILD = "sample-${n.childSuffix}";
const PROJECT = fileURLToPath(new URL("../../", import.meta.url));
const SLOW = { timeoutMs: 60_000 };

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

/** Starts \`main.ts\` as \`deno task start\` does; its output is kept for failures. */
function startOperator(kubeconfig: string) {
  const health = \`127.0.0.1:\${freePort()}\`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-read", "--allow-env", "--allow-sys=hostname", "main.ts"],
    cwd: PROJECT,
    env: { KUBECONFIG: kubeconfig, HEALTH_ADDRESS: health, METRICS_ADDRESS: "0" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const decoder = new TextDecoder();
  const drain = (stream: ReadableStream<Uint8Array>) =>
    stream.pipeTo(new WritableStream({ write: (chunk) => void (output += decoder.decode(chunk)) }));
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  let exited = false;
  const status = child.status.then(async ({ code }) => {
    exited = true;
    await drained;
    return code;
  });
  return {
    ready: () =>
      waitFor("the operator's /readyz to answer 200", async () => {
        if (exited) throw new Error(\`the operator exited with \${await status}:\\n\${output}\`);
        const response = await fetch(\`http://\${health}/readyz\`).catch(() => undefined);
        await response?.body?.cancel();
        return response?.ok;
      }, SLOW),
    async stop(): Promise<number> {
      if (!exited) child.kill("SIGTERM");
      return await status;
    },
    output: () => output,
  };
}

Deno.test("the operator writes the ConfigMap and reports Ready on a real API server", async () => {
  // The client's default namespace is the test's own, deleted when the test ends.
  await using cluster = await testCluster({ namespacePrefix: "e2e" });
  const { client, namespace } = cluster;
  const operator = startOperator(cluster.kubeconfig);
  try {
    await operator.ready();
    await client.create(resource, {
      apiVersion: "${n.apiVersion}",
      kind: "${n.kind}",
      metadata: { name: "sample", namespace },
      spec: { message: "Hello" },
    });
    const cm = await waitFor(
      "the ConfigMap",
      () => client.getOptional<ConfigMap>(CONFIG_MAPS, CHILD),
      SLOW,
    );
    assert.deepEqual(cm.data, { message: "Hello" });
    const ready = await waitFor("the Ready condition", async () => {
${
    fit(
      `      const stored = await client.get<${n.kind}>(resource, "sample");`,
      `      const stored = await client.get<${n.kind}>(\n        resource,\n        "sample",\n      );`,
    )
  }
      const condition = stored.status?.conditions?.find((c) => c.type === "Ready");
      return condition?.status === "True" && stored;
    }, SLOW);
    assert.equal(ready.status?.observedGeneration, ready.metadata.generation);
    assert.equal(await operator.stop(), 0, operator.output());
  } finally {
    await operator.stop();
  }
});
`;
}
