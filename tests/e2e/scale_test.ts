// deno-lint-ignore-file no-console -- prints the figures it measured
/**
 * A hundred WebApps at once: every one converges to Ready, each reconciled a
 * bounded number of times. Prints the time it took and the operator's RSS
 * (figures, not assertions: the benchmark harness measures performance).
 */
import assert from "node:assert/strict";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import {
  adminClient,
  condition,
  createNamespace,
  deleteNamespace,
  waitFor,
} from "../_support/kube.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";
import { rssBytes, startOperator } from "../_support/operator.ts";

const COUNT = 100;

Deno.test(`${COUNT} WebApps all become Ready without a reconcile storm`, async () => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "e2e-scale");
  try {
    await using operator = await startOperator({ kubeconfig: await operatorKubeconfig() });
    await operator.ready();
    const started = performance.now();
    const names = Array.from({ length: COUNT }, (_, i) => `web-${i}`);
    for (let i = 0; i < names.length; i += 10) {
      await Promise.all(
        names.slice(i, i + 10).map((name) =>
          client.create(WEB_APPS, {
            apiVersion: "kinglet.dev/v1alpha1",
            kind: "WebApp",
            metadata: { name, namespace: ns },
            spec: { image: "nginx:1.27", replicas: 1 },
          })
        ),
      );
    }
    await waitFor(`all ${COUNT} WebApps Ready`, async () => {
      const list = await client.list(WEB_APPS, { namespace: ns });
      return list.items.length === COUNT &&
        list.items.every((a) => condition(a, "Ready")?.status === "True");
    }, 180_000);
    const seconds = (performance.now() - started) / 1000;
    const rss = await rssBytes(operator.pid);
    const reconciles = await operator.metric("controller_runtime_reconcile_total", {
      controller: "webapp",
    });
    const requests = await operator.metric("rest_client_requests_total");
    const errors = await operator.metric("controller_runtime_reconcile_total", {
      controller: "webapp",
      result: "error",
    });
    console.log(
      `${COUNT} WebApps Ready in ${seconds.toFixed(1)} s; operator RSS ${
        (rss / 2 ** 20).toFixed(1)
      } MiB; ` +
        `${reconciles} reconciles (${
          (reconciles / COUNT).toFixed(1)
        } per WebApp), ${errors} errors, ` +
        `${(requests / COUNT).toFixed(1)} API requests per WebApp`,
    );
    // Each WebApp is reconciled on creation and as its Deployment rolls out; far
    // more than that per object would be a storm.
    assert.ok(reconciles / COUNT < 10, `${reconciles} reconciles for ${COUNT} WebApps`);
    assert.equal(await operator.stop(), 0);
  } finally {
    await deleteNamespace(client, ns);
    client.close();
  }
});
