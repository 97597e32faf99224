/**
 * Fault: etcd is compacted while the operator is cut off, so the
 * resourceVersion its watches resume from may be gone (410 Gone). The
 * operator (a separate process under the deploy/ RBAC) reaches the API
 * server through a TCP proxy that the test holds while it changes WebApps and
 * compacts etcd.
 *
 * The API server's watch cache would serve the old resourceVersion from
 * memory after the compaction, so the test starts a control plane of its own
 * with `--watch-cache=false`: watches then resume from etcd, which answers
 * 410 Gone, as a production API server does once the watch cache's window
 * has passed.
 */
import assert from "node:assert/strict";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { startCluster } from "../../lib/testing/control_plane/mod.ts";
import { install } from "../../lib/cli/install.ts";
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { createNamespace, waitFor } from "../_support/kube.ts";
import { serviceAccountKubeconfig } from "../_support/service_account.ts";
import { TcpProxy } from "../integration/_tcp_proxy.ts";
import {
  allConverged,
  assertOneDeploymentEach,
  createWebApps,
  figure,
  kubeconfigVia,
  names,
  reconciles,
  scaleWebApps,
  seconds,
  settledReconciles,
  startWebAppOperator,
} from "./_faults.ts";

const OBJECTS = 40;

Deno.test("after etcd is compacted while the operator is cut off, it converges without reconciling every object again", async () => {
  await using cluster = await startCluster({
    gpuNodes: false,
    apiserverFlags: ["--watch-cache=false"],
  });
  const client = new KubeClient(await loadConfig({ kubeconfig: cluster.kubeconfig }));
  try {
    await install(client, { namespace: "kinglet-system" });
    const ns = await createNamespace(client, "fault-gone");
    await using proxy = new TcpProxy(cluster.server);
    const kubeconfig = await kubeconfigVia(
      await serviceAccountKubeconfig(cluster.kubeconfig, "kinglet-system", "kinglet"),
      proxy.url,
    );
    await using operator = await startWebAppOperator(kubeconfig, ns);
    await operator.ready();
    const apps = names("app", OBJECTS);
    await createWebApps(client, ns, apps);
    await allConverged(client, ns, OBJECTS);
    const before = await settledReconciles(operator);

    proxy.hold();
    proxy.cut();
    await waitFor("the operator to try to reconnect", () => Promise.resolve(proxy.waiting > 0));
    const scaled = apps.slice(0, 3);
    await scaleWebApps(client, ns, scaled, 2);
    await client.delete(WEB_APPS, apps[OBJECTS - 1]!, { namespace: ns });
    await createWebApps(client, ns, ["added-while-away"]);
    const changed = scaled.length + 2;
    const revision = await cluster.compactEtcd();
    const released = performance.now();
    proxy.release();
    await waitFor(
      "a reconcile after reconnecting",
      async () => (await reconciles(operator)) > before,
    );
    const reconciling = performance.now();

    await allConverged(client, ns, OBJECTS);
    const recovered = performance.now();
    await assertOneDeploymentEach(client, ns);
    const after = await settledReconciles(operator);
    const log = await operator.log();
    const gone = /410 Gone|too old resource version/i.test(log);
    const relists = log.match(/relisting, since/g)?.length ?? 0;
    figure(
      `410 Gone after compaction: first reconcile ${seconds(reconciling - released)} and ` +
        `every WebApp converged ${seconds(recovered - released)} after reconnecting (the ` +
        `controller manager and kwok relist too), ` +
        `${after - before} reconciles for ${changed} changed of ${OBJECTS} WebApps ` +
        `(etcd compacted at revision ${revision}; ${relists} relists after 410 Gone)`,
    );
    assert.ok(gone, "a watch resumed from before the compaction was answered 410 Gone");
    assert.ok(relists >= 1, "the 410 led to a relist");
    // A relist that reconciled everything would cost at least one reconcile per object.
    assert.ok(
      after - before < OBJECTS,
      `${after - before} reconciles for ${changed} changed WebApps of ${OBJECTS}`,
    );
    assert.equal(await operator.stop(), 0);
  } finally {
    client.close();
  }
});
