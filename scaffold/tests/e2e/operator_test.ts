/**
 * The Widget operator as it runs (`deno task start`), against a real API
 * server: the cluster of `KINGLET_TEST_KUBECONFIG`, or etcd and
 * kube-apiserver started from `KUBEBUILDER_ASSETS` (see `testCluster`).
 * Its CRD is applied first from `crds/` (`deno task e2e` runs `deno task
 * crds` to write it), as a user applies it: main.ts never installs it. It
 * runs as a ServiceAccount bound to exactly the RBAC derived from the
 * controllers of src/operator.ts (what deploy/'s ClusterRole grants): a
 * request it is denied fails the test, naming the verb and the resource.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { CONFIG_MAPS, type KubeObject } from "@kinglet/kinglet/kube";
import { controllerRules, installCrds } from "@kinglet/kinglet/runtime";
import { assertNoDenials, denialsInLog, testCluster, waitFor } from "@kinglet/kinglet/testing";
import type { ConfigMap } from "../../src/controller.ts";
import { operator } from "../../src/operator.ts";
import { type Widget, WIDGETS } from "../../src/kind.ts";

/** The CRD `deno task crds` writes from src/schema.ts. */
const CRD_FILE = new URL("../../crds/widgets.example.org.yaml", import.meta.url);
const CHILD = "sample-widget";
const PROJECT = fileURLToPath(new URL("../../", import.meta.url));

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

/**
 * Starts `main.ts` as `deno task start` does, with `--kubeconfig`;
 * its output is kept for failures.
 */
function startOperator(kubeconfig: string) {
  const health = `127.0.0.1:${freePort()}`;
  const permissions = ["--allow-net", "--allow-read", "--allow-env", "--allow-sys=hostname"];
  const child = new Deno.Command(Deno.execPath(), {
    // --kubeconfig, as install's "run it with --kubeconfig <path>" says; it wins over KUBECONFIG.
    args: ["run", ...permissions, "main.ts", "--kubeconfig", kubeconfig],
    cwd: PROJECT,
    env: { HEALTH_ADDRESS: health, METRICS_ADDRESS: "0" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  // The operator logs the API server's sentence for each request it is denied.
  const assertAllowed = () => assertNoDenials(denialsInLog(output), "the operator");
  // Aborted when it is denied a request or exits: that says why better than a timeout.
  const failed = new AbortController();
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    let line = ""; // a line not yet ended, read with the chunk that ends it
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      output += text;
      const lines = (line + text).split("\n");
      line = lines.pop()!;
      if (failed.signal.aborted || denialsInLog(lines.join("\n")).length === 0) continue;
      try {
        assertAllowed();
      } catch (error) {
        failed.abort(error);
      }
    }
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  let exited = false;
  const status = child.status.then(async ({ code }) => {
    exited = true;
    await drained;
    failed.abort(new Error(`the operator exited with ${code}:\n${output}`));
    return code;
  });
  const poll = { timeoutMs: 60_000, intervalMs: 100, signal: failed.signal };
  let signalled = false;
  return {
    /** Resolves once `/readyz` answers 200. */
    ready: () =>
      waitFor("the operator's /readyz to answer 200", async () => {
        const response = await fetch(`http://${health}/readyz`).catch(() => undefined);
        await response?.body?.cancel();
        return response?.ok;
      }, poll),
    /** Waits for `check` to hold; fails at once when the operator is denied a request. */
    waitFor: <T>(what: string, check: () => Promise<T | undefined | false>) =>
      waitFor(what, check, poll),
    /** Stops it with SIGTERM and resolves to its exit code. */
    stop(): Promise<number> {
      if (!exited && !signalled) child.kill("SIGTERM");
      signalled = true;
      return status;
    },
    output: () => output,
    /** Throws naming the verb and resource of every request it was denied; call after stop. */
    assertNoDenials: assertAllowed,
  };
}

Deno.test("the operator writes the ConfigMap and reports Ready under its derived RBAC", async () => {
  // The client's default namespace is the test's own, deleted when the test ends.
  await using cluster = await testCluster({ namespacePrefix: "e2e" });
  // As kubectl apply -f crds/ would, with the admin's client; resolves once the CRD is served.
  const crd = parse(await Deno.readTextFile(CRD_FILE)) as KubeObject;
  await installCrds(cluster.client, [crd], { fieldManager: "kubectl" });
  // Started without --leader-elect, main.ts elects no leader; deployed, deploy/'s Role grants
  // the Lease.
  await using account = await cluster.serviceAccount({
    name: operator.name,
    rules: controllerRules(operator.controllers),
    // Writes only to what it owns, as deploy/validatingadmissionpolicy.yaml confines it.
    policy: operator.controllers,
  });
  const { client, namespace } = cluster;
  const running = startOperator(account.kubeconfig);
  const { waitFor } = running;
  try {
    await running.ready();
    await client.create(WIDGETS, {
      apiVersion: "example.org/v1alpha1",
      kind: "Widget",
      metadata: { name: "sample", namespace },
      spec: { message: "Hello" },
    });
    const cm = await waitFor(
      "the ConfigMap",
      () => client.getOptional<ConfigMap>(CONFIG_MAPS, CHILD),
    );
    assert.deepEqual(cm.data, { message: "Hello" });
    const ready = await waitFor("the Ready condition", async () => {
      const stored = await client.get<Widget>(WIDGETS, "sample");
      const condition = stored.status?.conditions?.find((c) => c.type === "Ready");
      return condition?.status === "True" && stored;
    });
    assert.equal(ready.status?.observedGeneration, ready.metadata.generation);
    const code = await running.stop();
    running.assertNoDenials();
    assert.equal(code, 0, running.output());
  } finally {
    await running.stop();
  }
});
