/**
 * Fault: kube-apiserver goes away while many keys reconcile, so they all
 * fail in the same instant. Their retries must not all come back in one
 * instant on the server that just recovered: each retry comes up to the
 * jitter sooner than the error policy's delay (never later), and every
 * retry takes a token of the controller's retry bucket. The test starts a
 * control plane of its own, since it stops its API server.
 */
import assert from "node:assert/strict";
import { startCluster } from "../../lib/testing/control_plane/mod.ts";
import { Semaphore } from "../../lib/async/semaphore.ts";
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { keyOf } from "../../lib/kube/object_key.ts";
import { CONFIG_MAPS } from "../../lib/kube/resources.ts";
import { Caches } from "../../lib/runtime/cache/caches.ts";
import { Controller } from "../../lib/runtime/controller/controller.ts";
import { fixedErrorPolicy } from "../../lib/runtime/scheduling/error_policy.ts";
import { createNamespace, waitFor } from "../_support/kube.ts";
import { figure, seconds } from "./_faults.ts";

const KEYS = 40;
const DELAY_MS = 6_000;
const JITTER = 0.3;

Deno.test("keys failing together while kube-apiserver is down come back spread before their retry delay, and all converge", async () => {
  await using cluster = await startCluster({ gpuNodes: false });
  const client = new KubeClient(await loadConfig({ kubeconfig: cluster.kubeconfig }));
  const stop = new AbortController();
  /** Each key's reconciles: when one began and, for a failure, when it failed. */
  const attempts = new Map<string, { at: number; ok: boolean; failedAt?: number }[]>();
  const t0 = performance.now();
  try {
    const namespace = await createNamespace(client, "herd");
    const names = Array.from({ length: KEYS }, (_, i) => `cm-${i}`);
    for (const name of names) {
      await client.create(CONFIG_MAPS, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name },
        data: { a: "1" },
      }, { namespace });
    }
    const caches = new Caches({ client, namespace, backoff: { initialMs: 100, maxMs: 1_000 } });
    const controller = new Controller({
      name: "herd",
      resource: CONFIG_MAPS,
      errorPolicy: fixedErrorPolicy(DELAY_MS),
      requeueJitter: JITTER,
      async reconcile(cm, { key, signal }) {
        const at = performance.now() - t0;
        const record = (attempt: { ok: boolean; failedAt?: number }) =>
          attempts.set(key, [...(attempts.get(key) ?? []), { at, ...attempt }]);
        try {
          await client.get(CONFIG_MAPS, cm.metadata!.name!, { namespace, signal });
        } catch (error) {
          record({ ok: false, failedAt: performance.now() - t0 });
          throw error;
        }
        record({ ok: true });
        return {};
      },
    }, { client, semaphore: new Semaphore(KEYS), caches });
    const cachesDone = caches.run(stop.signal);
    const running = controller.run(stop.signal);
    const keys = names.map((n) => keyOf(namespace, n));
    await waitFor(
      "every key reconciled",
      () => Promise.resolve(keys.every((k) => attempts.get(k)?.length === 1)),
    );

    let failedAt = 0;
    await cluster.restartApiServer(undefined, async () => {
      for (const key of keys) controller.queue.add(key);
      await waitFor(
        "every key failed while the API server is down",
        () => Promise.resolve(keys.every((k) => attempts.get(k)?.at(-1)?.ok === false)),
        10_000,
      );
      failedAt = Math.max(...keys.map((k) => attempts.get(k)!.at(-1)!.failedAt!));
    });
    const backAt = performance.now() - t0;
    await waitFor(
      "every key reconciled again",
      () => Promise.resolve(keys.every((k) => attempts.get(k)!.at(-1)!.ok)),
      60_000,
    );
    const convergedAt = performance.now() - t0;

    // The first retry of each key after its failure during the outage, from when the failed
    // reconcile returned: the delay starts then, however long a request to an API server
    // going down took to fail.
    const retries = keys.map((k) => {
      const list = attempts.get(k)!;
      const failure = list.findIndex((a, i) => i > 0 && !a.ok);
      return list[failure + 1]!.at - list[failure]!.failedAt!;
    });
    const earliest = DELAY_MS * (1 - JITTER);
    // A retry is due by DELAY_MS at the latest; the slack is for a process starved of CPU while the
    // API server restarts beside it on a small machine, not for the policy.
    const late = retries.filter((d) => d > DELAY_MS + 1_000);
    assert.deepEqual(late, [], `retries later than the policy's ${DELAY_MS} ms`);
    assert.ok(
      retries.every((d) => d >= earliest - 50),
      `retries before ${earliest} ms: ${retries}`,
    );
    const spread = Math.max(...retries) - Math.min(...retries);
    const window = DELAY_MS - earliest;
    assert.ok(
      spread >= window / 2,
      `${KEYS} retries within ${spread} ms of the ${window} ms window`,
    );
    const sameInstant = Math.max(
      ...retries.map((d) => retries.filter((e) => Math.abs(e - d) < 50).length),
    );
    assert.ok(
      sameInstant <= KEYS / 4,
      `${sameInstant} of ${KEYS} retries within 50 ms of one another`,
    );
    figure(
      `${KEYS} keys failed together during a kube-apiserver restart; retries spread over ` +
        `${seconds(spread)} of the ${seconds(window)} window (${seconds(earliest)}–${
          seconds(DELAY_MS)
        } after the failure, at most ${sameInstant} within 50 ms); ` +
        `all converged ${seconds(convergedAt - backAt)} after the API server was back ` +
        `(${seconds(convergedAt - failedAt)} after the last failure)`,
    );
    stop.abort();
    await running;
    await cachesDone;
  } finally {
    stop.abort();
    client.close();
  }
});
