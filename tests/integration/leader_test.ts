/**
 * Leader election on a real `coordination.k8s.io/v1` Lease: one leader at a
 * time, handover by release, takeover after expiry.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/leader_test.ts
 */
import assert from "node:assert/strict";
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { LEASES, NAMESPACES } from "../../lib/kube/resources.ts";
import { LeaderElector, type Lease, leaseApi } from "../../lib/runtime/leader/leader.ts";
import { testKubeconfig } from "../_support/cluster.ts";

/**
 * client-go's durations, which kinglet defaults to. Shorter ones would leave a
 * busy API server too little time: a leader whose renewals took longer than
 * the renew deadline would lose the Lease in the middle of a test.
 */
const TIMING = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

async function scope(prefix: string) {
  const client = new KubeClient(await loadConfig({ kubeconfig: testKubeconfig() }));
  const namespace = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  await client.create(NAMESPACES, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: namespace },
  });
  return {
    client,
    namespace,
    async [Symbol.asyncDispose]() {
      try {
        await client.delete(NAMESPACES, namespace);
      } finally {
        client.close();
      }
    },
  };
}

/** A candidate running in the background, with when it started and stopped leading. */
function candidate(
  client: KubeClient,
  namespace: string,
  identity: string,
  releaseOnCancel = true,
) {
  const elector = new LeaderElector(leaseApi(client), {
    namespace,
    name: "kinglet",
    identity,
    releaseOnCancel,
    ...TIMING,
  });
  const stop = new AbortController();
  const times: { started?: number; stopped?: number } = {};
  const done = elector.run(stop.signal, {
    onStartedLeading: () => {
      times.started = Date.now();
    },
    onStoppedLeading: () => {
      times.stopped = Date.now();
    },
  });
  return {
    elector,
    times,
    async stop() {
      stop.abort();
      await done;
    },
  };
}

async function eventually(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Every holder the Lease names after `resourceVersion`, in order, as a watch
 * delivers them: a release shows however soon the next holder follows it.
 */
function holders(client: KubeClient, namespace: string, resourceVersion: string) {
  const stop = new AbortController();
  const seen: string[] = [];
  const watching = (async () => {
    for await (
      const e of client.watch<Lease>(LEASES, {
        namespace,
        fieldSelector: "metadata.name=kinglet",
        resourceVersion,
        signal: stop.signal,
      })
    ) {
      if (e.type === "BOOKMARK") continue;
      const holder = e.object.spec?.holderIdentity ?? "";
      if (seen.at(-1) !== holder) seen.push(holder);
    }
  })();
  return {
    seen,
    async [Symbol.asyncDispose]() {
      stop.abort();
      await watching;
    },
  };
}

Deno.test("two candidates share one Lease: one leads, and a release hands over at once", async () => {
  await using s = await scope("le-release");
  const { client, namespace } = s;
  const a = candidate(client, namespace, "a");
  await eventually("a to lead", () => a.elector.isLeader);
  const b = candidate(client, namespace, "b");
  try {
    await sleep(TIMING.leaseDurationMs + 1_000);
    assert.equal(a.elector.isLeader, true, "a lost the Lease while renewing it");
    assert.equal(b.elector.isLeader, false, "two leaders");
    assert.equal(b.elector.leader, "a");
    const held = await client.get<Lease>(LEASES, "kinglet", { namespace });
    assert.equal(held.spec?.holderIdentity, "a");
    assert.equal(held.spec?.leaseDurationSeconds, 15);

    await using changes = holders(client, namespace, held.metadata?.resourceVersion ?? "");
    await a.stop();
    await eventually("b to lead", () => b.elector.isLeader);
    await eventually("the watch to see b hold the Lease", () => changes.seen.at(-1) === "b");
    assert.deepEqual(changes.seen.slice(-2), ["", "b"], `a released the Lease: ${changes.seen}`);
    const handover = (b.times.started ?? 0) - (a.times.stopped ?? 0);
    assert.ok(
      handover < TIMING.leaseDurationMs,
      `b waited ${handover} ms, as if for the Lease to expire`,
    );
    const taken = await client.get<Lease>(LEASES, "kinglet", { namespace });
    assert.equal(taken.spec?.holderIdentity, "b");
    assert.equal(taken.spec?.leaseTransitions, 1);
  } finally {
    await b.stop();
  }
});

Deno.test("a standby takes over an unreleased Lease only after it expires", async () => {
  await using s = await scope("le-expiry");
  const { client, namespace } = s;
  const a = candidate(client, namespace, "a", false);
  await eventually("a to lead", () => a.elector.isLeader);
  await a.stop();
  const stoppedAt = Date.now();
  const b = candidate(client, namespace, "b");
  try {
    await eventually("b to lead", () => b.elector.isLeader);
    const waited = (b.times.started ?? 0) - stoppedAt;
    assert.ok(waited >= TIMING.leaseDurationMs, `b took over after ${waited} ms, before expiry`);
    const taken = await client.get<Lease>(LEASES, "kinglet", { namespace });
    assert.equal(taken.spec?.holderIdentity, "b");
    assert.equal(taken.spec?.leaseTransitions, 1);
  } finally {
    await b.stop();
  }
});
