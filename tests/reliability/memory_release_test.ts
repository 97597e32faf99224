/**
 * Memory after large objects go: a burst of big WebApps (one with a 900 KB
 * env value, five with 250 KB annotations) raises kinglet's RSS; once they
 * are deleted and the queue is empty, RSS returns within 5 MiB of where it
 * was before the burst, within 2 minutes. An operator on a small node must
 * give back what a burst took.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/reliability/memory_release_test.ts
 */
import assert from "node:assert/strict";
import type { KubeClient } from "../../lib/kube/client.ts";
import { DEPLOYMENTS } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";
import {
  adminClient,
  condition,
  createNamespace,
  deleteNamespace,
  getOrUndefined,
  waitFor,
} from "../_support/kube.ts";
import { type OperatorProcess, startOperator } from "../_support/operator.ts";
import { figure, fixed1, rssMiB } from "./_measure.ts";

/** How far above its level before the burst RSS may stay. */
const SLACK_MIB = 5;
/** How long after the queue emptied RSS has to get there. */
const RETURN_MS = 120_000;

function webApp(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  annotations: Record<string, string> = {},
): KubeObject {
  return {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    metadata: { name, namespace, annotations },
    spec: { image: "nginx:1.27", ...spec },
  };
}

/** The burst: 900 KB in one env value, and 250 KB annotations on five more. */
function burst(namespace: string): KubeObject[] {
  return [
    webApp(namespace, "big-env", { env: [{ name: "BLOB", value: "e".repeat(900_000) }] }),
    ...Array.from(
      { length: 5 },
      (_, i) =>
        webApp(namespace, `big-note-${i}`, {}, { "example.com/note": `${i}`.repeat(250_000) }),
    ),
  ];
}

async function readyAll(client: KubeClient, namespace: string, names: string[]): Promise<void> {
  for (const name of names) {
    await waitFor(`WebApp ${name} Ready`, async () => {
      const app = await client.get(WEB_APPS, name, { namespace });
      return condition(app, "Ready")?.status === "True";
    }, 120_000);
  }
}

async function gone(client: KubeClient, namespace: string, names: string[]): Promise<void> {
  for (const name of names) {
    await waitFor(
      `WebApp ${name} and its Deployment gone`,
      async () =>
        await getOrUndefined(client, WEB_APPS, name, namespace) === undefined &&
        await getOrUndefined(client, DEPLOYMENTS, name, namespace) === undefined,
      120_000,
    );
  }
}

/** Waits until the webapp queue is empty and nothing is in flight. */
async function idle(operator: OperatorProcess): Promise<void> {
  await waitFor(
    "the webapp queue empty",
    async () =>
      await operator.metric("workqueue_depth", { name: "webapp" }) === 0 &&
      await operator.metric("controller_runtime_active_workers", { controller: "webapp" }) === 0,
    60_000,
  );
}

/** The median of `n` RSS samples a second apart: one sample may catch a collection midway. */
async function settledRss(pid: number, n = 5): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 1_000));
    samples.push(await rssMiB(pid));
  }
  return samples.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}

Deno.test("RSS returns within 5 MiB of its level within 2 minutes after big objects are deleted", async () => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "rel-memory");
  await using operator = await startOperator({ kubeconfig: await operatorKubeconfig() });
  try {
    await operator.ready();
    // A small WebApp first, so that code loaded and compiled on first use counts before the burst.
    await client.create(WEB_APPS, webApp(ns, "warm-up", { env: [{ name: "A", value: "1" }] }));
    await readyAll(client, ns, ["warm-up"]);
    await client.delete(WEB_APPS, "warm-up", { namespace: ns });
    await gone(client, ns, ["warm-up"]);
    await idle(operator);
    const before = await settledRss(operator.pid);

    const objects = burst(ns);
    const names = objects.map((o) => o.metadata!.name!);
    for (const object of objects) await client.create(WEB_APPS, object);
    await readyAll(client, ns, names);
    await idle(operator);
    const peak = await rssMiB(operator.pid);
    for (const name of names) await client.delete(WEB_APPS, name, { namespace: ns });
    await gone(client, ns, names);
    await idle(operator);

    const emptied = performance.now();
    let after = await settledRss(operator.pid);
    while (after > before + SLACK_MIB && performance.now() - emptied < RETURN_MS) {
      await new Promise((r) => setTimeout(r, 5_000));
      after = await settledRss(operator.pid);
    }
    const seconds = (performance.now() - emptied) / 1000;
    figure(
      `burst of 6 WebApps (900 KB env, 5 × 250 KB annotations): RSS ${fixed1(before)} → ` +
        `${fixed1(peak)} MiB; ${fixed1(after)} MiB ${fixed1(seconds)} s after the queue emptied`,
    );
    assert.ok(
      after <= before + SLACK_MIB,
      `RSS ${fixed1(after)} MiB ${fixed1(seconds)} s after the burst, was ${fixed1(before)} MiB`,
    );
  } finally {
    await deleteNamespace(client, ns).finally(() => client.close());
  }
  assert.equal(await operator.stop(), 0);
});
