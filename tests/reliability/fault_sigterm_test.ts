/**
 * Fault: the leader is asked to stop (SIGTERM, as systemd or a rollout
 * does) while reconciles are in flight. Two operator processes campaign for
 * the Lease; the test watches the Lease closely through the handover.
 */
import assert from "node:assert/strict";
import { LEASES } from "../../lib/kube/resources.ts";
import type { Lease } from "../../lib/runtime/leader/leader.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";
import { adminClient, createNamespace, deleteNamespace, waitFor } from "../_support/kube.ts";
import type { OperatorProcess } from "../_support/operator.ts";
import {
  allConverged,
  assertOneDeploymentEach,
  createWebApps,
  deleteLease,
  epochMs,
  figure,
  LEASE,
  leaseHeld,
  names,
  readLease,
  reconciles,
  seconds,
  startWebAppOperator,
} from "./_faults.ts";

const LEASE_DURATION_MS = 15_000;
/** client-go's acquire retry: the retry period (2 s) stretched by up to 1.2 times its length. */
const MAX_RETRY_MS = 2_000 * 2.2;
/** For a standby's timer in a process starved of CPU on a busy machine, not for the elector. */
const BUSY_MACHINE_MS = 3_000;

Deno.test("a leader SIGTERMed mid-reconcile exits 0 and releases the Lease, the standby takes over at once, and everything converges", async () => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "fault-sigterm");
  const kubeconfig = await operatorKubeconfig();
  await deleteLease(client);
  const start = (id: string) =>
    startWebAppOperator(kubeconfig, ns, ["--leader-elect", `--leader-election-id=${id}`]);
  const operators: OperatorProcess[] = [];
  const watching = new AbortController();
  try {
    const leader = await start("node-a");
    operators.push(leader);
    await leaseHeld(client);
    const standby = await start("node-b");
    operators.push(standby);
    await standby.ready();

    const apps = names("app", 20);
    await createWebApps(client, ns, apps);
    const inFlight = await waitFor("reconciles in flight", async () => {
      const busy = await leader.metric("controller_runtime_active_workers", {
        controller: "webapp",
      });
      return busy > 0 && busy;
    });
    // Every holder the Lease names from now on, in order, as a watch delivers them: the
    // standby watches the Lease too and takes it within moments of its release, sooner
    // than any poll could be sure to see the release in between.
    const holders: { at: number; holder: string; durationSeconds?: number }[] = [];
    const from = (await readLease(client))?.metadata?.resourceVersion ?? "";
    const following = (async () => {
      for await (
        const e of client.watch<Lease>(LEASES, {
          namespace: LEASE.namespace,
          fieldSelector: `metadata.name=${LEASE.name}`,
          resourceVersion: from,
          signal: watching.signal,
        })
      ) {
        if (e.type === "BOOKMARK") continue;
        const spec = e.object.spec;
        const holder = spec?.holderIdentity ?? "";
        if (holders.at(-1)?.holder !== holder) {
          holders.push({ at: Date.now(), holder, durationSeconds: spec?.leaseDurationSeconds });
        }
      }
    })();
    const terminatedAt = Date.now();
    assert.equal(await leader.stop("SIGTERM"), 0, "SIGTERM exits 0");
    const exitedAt = Date.now();
    const next = await leaseHeld(client, "node-a");
    assert.equal(next.spec?.holderIdentity, "node-b");
    await waitFor(
      "the watch to see node-b hold the Lease",
      () => Promise.resolve(holders.at(-1)?.holder === "node-b"),
    );
    watching.abort();
    await following;
    const takeoverMs = epochMs(next.spec?.acquireTime) - exitedAt;

    const seen = JSON.stringify(holders);
    const released = holders.findIndex((h) => h.holder === "");
    assert.ok(released >= 0, `the Lease was released: holders seen ${seen}`);
    assert.equal(holders[released]!.durationSeconds, 1, "released with a one second duration");
    assert.equal(holders[released + 1]?.holder, "node-b", `then taken by the standby: ${seen}`);
    const log = await leader.log();
    assert.match(log, /node-a\W+ released/);
    assert.doesNotMatch(log, /aborting \d+ reconciles still running/, "the drain let them finish");
    assert.ok(takeoverMs < LEASE_DURATION_MS, "the standby did not wait for the Lease to expire");

    await allConverged(client, ns, apps.length);
    await assertOneDeploymentEach(client, ns);
    const byStandby = await reconciles(standby);
    assert.ok(byStandby > 0, "the standby reconciled after taking over");
    figure(
      `SIGTERM handover: standby took over ${seconds(takeoverMs)} after the leader exited 0 ` +
        `(drain of ${inFlight} reconciles in flight and release ${
          seconds(exitedAt - terminatedAt)
        }; ` +
        `${byStandby} reconciles by the standby, ${apps.length} WebApps converged)`,
    );
    // A watching standby takes the released Lease at once, one that missed the release at its
    // next try: both well inside the lease, which the slack leaves half of.
    assert.ok(takeoverMs <= MAX_RETRY_MS + BUSY_MACHINE_MS, `takeover took ${takeoverMs} ms`);
    assert.equal(await standby.stop(), 0);
  } finally {
    watching.abort();
    await Promise.all(operators.map((o) => o[Symbol.asyncDispose]()));
    await deleteNamespace(client, ns);
    client.close();
  }
});
