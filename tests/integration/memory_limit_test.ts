// deno-lint-ignore-file no-console -- prints the figures it measured
/**
 * kinglet under `--memory-limit 64Mi`, a limit it idles close to: every
 * WebApp still becomes Ready, the limit shows in its metrics, each move
 * between pressure levels is one log line, and RSS ends under the limit.
 */
import assert from "node:assert/strict";
import { adminClient, createNamespace, deleteNamespace } from "../_support/kube.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";
import { rssBytes, startOperator } from "../_support/operator.ts";
import { allConverged, createWebApps } from "../reliability/_faults.ts";

const COUNT = 200;
const LIMIT = 64 * 2 ** 20;

Deno.test(`${COUNT} WebApps all become Ready under --memory-limit 64Mi`, async () => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "e2e-memory-limit");
  try {
    await using operator = await startOperator({
      kubeconfig: await operatorKubeconfig(),
      args: ["--memory-limit", "64Mi"],
    });
    await operator.ready();
    assert.equal(await operator.metric("kinglet_memory_limit_bytes"), LIMIT);
    // In tens, as a user's apply of a folder would send them, not all 200 at once.
    const names = Array.from({ length: COUNT }, (_, i) => `web-${i}`);
    for (let i = 0; i < names.length; i += 10) {
      await createWebApps(client, ns, names.slice(i, i + 10));
    }
    await allConverged(client, ns, COUNT, 300_000);
    const rss = await rssBytes(operator.pid);
    const level = await operator.metric("kinglet_memory_pressure");
    const moves = await operator.metric("kinglet_memory_pressure_transitions_total");
    const requests = await operator.metric("rest_client_requests_total");
    const lines = (await operator.log()).split("\n").filter((l) => l.includes("memory pressure"));
    console.log(
      `${COUNT} WebApps Ready under 64Mi: RSS ${(rss / 2 ** 20).toFixed(1)} MiB, pressure level ` +
        `${level}, ${moves} level moves, ${(requests / COUNT).toFixed(1)} API requests per WebApp`,
    );
    assert.equal(lines.length, moves, "one log line per move between levels");
    assert.ok(rss < LIMIT, `RSS ${rss} bytes, over the ${LIMIT} limit`);
    assert.equal(await operator.stop(), 0);
  } finally {
    await deleteNamespace(client, ns);
    client.close();
  }
});
