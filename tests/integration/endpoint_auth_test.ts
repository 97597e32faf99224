/**
 * /metrics and /debug/cache behind the API server's TokenReview and
 * SubjectAccessReview, as kinglet serves them in a pod: kinglet asks with the
 * deploy/ RBAC, scrapers are granted deploy/metrics-reader.yaml's roles, the
 * probes stay open.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/endpoint_auth_test.ts
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { SERVICES } from "../../lib/kube/resources.ts";
import { tokenReviewAuth } from "../../lib/runtime/manager/endpoint_auth.ts";
import { Manager } from "../../lib/runtime/manager/manager.ts";
import { kubectl } from "../_support/cluster.ts";
import { operatorKubeconfig } from "../_support/crds.ts";
import { adminClient, createNamespace, deleteNamespace } from "../_support/kube.ts";
import { DEPLOY_DIR } from "../_support/service_account.ts";

async function run(args: string[], stdin?: string): Promise<string> {
  const result = await kubectl(args, stdin === undefined ? {} : { stdin });
  assert.equal(result.code, 0, result.stderr);
  return result.stdout;
}

Deno.test("behind TokenReview, /metrics answers only a token allowed to get it, /debug/cache only its own readers, and the probes anyone", async () => {
  const admin = await adminClient();
  const namespace = await createNamespace(admin, "scrape");
  const kinglet = new KubeClient(await loadConfig({ kubeconfig: await operatorKubeconfig() }));
  const stop = new AbortController();
  try {
    await run(["apply", "--server-side", "-f", join(DEPLOY_DIR, "metrics-reader.yaml")]);
    for (const name of ["prometheus", "stranger"]) {
      await run(["create", "serviceaccount", name, "-n", namespace]);
    }
    await run([
      "create",
      "clusterrolebinding",
      `${namespace}-prometheus`,
      "--clusterrole=kinglet-metrics-reader",
      `--serviceaccount=${namespace}:prometheus`,
    ]);
    const token = async (name: string) =>
      (await run(["create", "token", name, "-n", namespace])).trim();
    const [prometheus, stranger] = [await token("prometheus"), await token("stranger")];

    const manager = new Manager({
      client: kinglet,
      metricsAddress: "127.0.0.1:0",
      healthAddress: "127.0.0.1:0",
      metricsAuth: tokenReviewAuth(kinglet),
      namespace,
    });
    // Something to run: a manager without controllers is done at once.
    manager.add({ name: "services", resource: SERVICES, reconcile: () => Promise.resolve({}) });
    const outcome = manager.run(stop.signal);
    // One address for both: one listener, its probes open beside its protected routes.
    assert.equal(manager.listeners.length, 1);
    const metrics = `http://127.0.0.1:${manager.listeners[0]!.port}`;
    const health = metrics;
    const get = async (url: string, bearer?: string) => {
      const response = await fetch(
        url,
        bearer ? { headers: { authorization: `Bearer ${bearer}` } } : {},
      );
      return { status: response.status, body: await response.text() };
    };

    assert.equal((await get(`${metrics}/metrics`)).status, 401);
    assert.equal((await get(`${metrics}/metrics`, "not-a-token")).status, 401);
    const refused = await get(`${metrics}/metrics`, stranger);
    assert.equal(refused.status, 403);
    assert.match(
      refused.body,
      new RegExp(`system:serviceaccount:${namespace}:stranger may not get it`),
    );
    const scraped = await get(`${metrics}/metrics`, prometheus);
    assert.equal(scraped.status, 200, scraped.body);
    assert.match(scraped.body, /^# TYPE process_resident_memory_bytes gauge$/m);
    assert.equal(
      (await get(`${metrics}/debug/cache`, prometheus)).status,
      403,
      "a metrics scraper may read which objects kinglet caches",
    );
    assert.equal((await get(`${health}/healthz`)).status, 200);
    stop.abort();
    assert.equal(await outcome, "stopped");
  } finally {
    stop.abort();
    kinglet.close();
    await run(["delete", "clusterrolebinding", `${namespace}-prometheus`, "--ignore-not-found"]);
    await deleteNamespace(admin, namespace);
    admin.close();
  }
});
