/**
 * Fault: kube-apiserver restarts while the operator watches and reconciles.
 * The test starts a control plane of its own, since it restarts its API
 * server; the operator runs as a separate process under the deploy/ RBAC.
 */
import assert from "node:assert/strict";
import { startCluster } from "../../lib/testing/control_plane/mod.ts";
import { install } from "../../lib/cli/install.ts";
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { createNamespace, waitFor } from "../_support/kube.ts";
import { serviceAccountKubeconfig } from "../_support/service_account.ts";
import {
  allConverged,
  assertOneDeploymentEach,
  createWebApps,
  figure,
  names,
  reconciles,
  scaleWebApps,
  seconds,
  startWebAppOperator,
} from "./_faults.ts";

Deno.test("after kube-apiserver restarts mid-reconcile, every WebApp converges with one Deployment and the operator never exits", async () => {
  await using cluster = await startCluster({ gpuNodes: false });
  const client = new KubeClient(await loadConfig({ kubeconfig: cluster.kubeconfig }));
  try {
    await install(client, { namespace: "kinglet-system" });
    const ns = await createNamespace(client, "fault-restart");
    const kubeconfig = await serviceAccountKubeconfig(
      cluster.kubeconfig,
      "kinglet-system",
      "kinglet",
    );
    await using operator = await startWebAppOperator(kubeconfig, ns);
    let exited = false;
    operator.status.then(() => (exited = true));
    await operator.ready();
    const steady = names("steady", 15);
    await createWebApps(client, ns, steady);
    await allConverged(client, ns, steady.length);

    // Idle watches, and then reconciles in flight, when the API server goes away.
    const before = await reconciles(operator);
    await scaleWebApps(client, ns, steady, 2);
    const late = names("late", 5);
    await createWebApps(client, ns, late);
    await waitFor("reconciles under way", async () => (await reconciles(operator)) > before);
    const stopping = performance.now();
    await cluster.restartApiServer();
    const back = performance.now();
    const healthz = await fetch(`${operator.healthUrl}/healthz`);
    assert.equal(healthz.status, 200, await healthz.text());

    await allConverged(client, ns, steady.length + late.length, 180_000);
    const recovered = performance.now();
    await assertOneDeploymentEach(client, ns);
    assert.equal(exited, false, "the operator process is still running");
    assert.doesNotMatch(await operator.log(), /unhandled rejection/);
    figure(
      `apiserver restart recovery ${seconds(recovered - back)} ` +
        `(apiserver down and back in ${seconds(back - stopping)}, ` +
        `${steady.length + late.length} WebApps, ${
          await reconciles(operator) - before
        } reconciles)`,
    );
    assert.equal(await operator.stop(), 0, "SIGTERM still exits 0");
  } finally {
    client.close();
  }
});
