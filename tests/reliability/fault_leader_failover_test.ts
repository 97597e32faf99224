/**
 * Fault: the leader dies. Three operator processes campaign for one Lease,
 * as three k3s server nodes would; the leader is killed with SIGKILL while it
 * reconciles. The test checks who reconciled (each process' metrics), when
 * the Lease changed hands, and when every write happened: the children's
 * managedFields times and the Events, whose `reportingInstance` names the
 * process that wrote them.
 */
import assert from "node:assert/strict";
import { DEPLOYMENTS, EVENTS, LEASES, SERVICES } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import type { Lease } from "../../lib/runtime/leader/leader.ts";
import { FIELD_MANAGER } from "../../lib/operators/labels.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";
import { adminClient, createNamespace, deleteNamespace, waitFor } from "../_support/kube.ts";
import { type OperatorProcess, rssBytes } from "../_support/operator.ts";
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
  scaleWebApps,
  seconds,
  startWebAppOperator,
} from "./_faults.ts";

const LEASE_DURATION_MS = 15_000;
/**
 * For what a busy machine adds to the takeover: the standby seeing the last
 * renewal a little after the test does, and its timer firing late.
 */
const BUSY_MACHINE_MS = 2_000;
/**
 * How long after the kill a write the old leader sent before it may still
 * land: the API server finishes what it was handling when the connection
 * went, later on a busy machine.
 */
const IN_FLIGHT_MS = 5_000;

interface EventObject extends KubeObject {
  eventTime: string;
  reportingController?: string;
  reportingInstance?: string;
  series?: { lastObservedTime?: string };
}

Deno.test("of three operator processes one reconciles; after kill -9 of the leader another takes over within the lease, and no two write at once", async () => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "fault-leader");
  const kubeconfig = await operatorKubeconfig();
  await deleteLease(client);
  const ids = ["node-a", "node-b", "node-c"];
  const operators = new Map<string, OperatorProcess>();
  try {
    for (const id of ids) {
      operators.set(
        id,
        await startWebAppOperator(kubeconfig, ns, ["--leader-elect", `--leader-election-id=${id}`]),
      );
    }
    await Promise.all([...operators.values()].map((o) => o.ready()));
    const first = await leaseHeld(client);
    const oldId = first.spec!.holderIdentity!;
    const old = operators.get(oldId)!;
    const apps = names("app", 10);
    await createWebApps(client, ns, apps);
    await allConverged(client, ns, apps.length);
    const reconcilesOf = (id: string) => reconciles(operators.get(id)!);
    assert.ok((await reconcilesOf(oldId)) > 0, "the leader reconciled");
    for (const id of ids.filter((id) => id !== oldId)) {
      assert.equal(await reconcilesOf(id), 0, `standby ${id} reconciled nothing`);
    }

    const before = await reconcilesOf(oldId);
    await scaleWebApps(client, ns, apps, 2);
    await waitFor(
      "the leader to reconcile the change",
      async () => (await reconcilesOf(oldId)) > before,
    );
    const byOld = await reconcilesOf(oldId);
    // Standbys are cold: they start no watch, so hold no cache, until they lead.
    const standbys = ids.filter((id) => id !== oldId);
    const mib = async (id: string) => (await rssBytes(operators.get(id)!.pid)) / 2 ** 20;
    const leaderMib = await mib(oldId);
    const standbyMib = Math.max(...await Promise.all(standbys.map(mib)));
    // When the test last saw the old leader renew, through a watch: a standby judges the
    // expiry from the last renewal it saw, and one under way at the kill may land after it.
    const held = await readLease(client);
    let renewalSeenAt = Date.now();
    let changedHands = false;
    const following = new AbortController();
    const renewals = (async () => {
      for await (
        const e of client.watch<Lease>(LEASES, {
          namespace: LEASE.namespace,
          fieldSelector: `metadata.name=${LEASE.name}`,
          resourceVersion: held?.metadata?.resourceVersion ?? "",
          signal: following.signal,
        })
      ) {
        if (e.type === "BOOKMARK") continue;
        if (e.object.spec?.holderIdentity !== oldId) {
          changedHands = true;
          return;
        }
        renewalSeenAt = Date.now();
      }
    })();
    const killedAt = Date.now();
    await old.stop("SIGKILL");
    const firstReconcile = waitFor("a standby's first reconcile", async () => {
      for (const id of standbys) if ((await reconcilesOf(id)) > 0) return Date.now();
      return undefined;
    }, 60_000);
    const next = await leaseHeld(client, oldId);
    const newId = next.spec!.holderIdentity!;
    const acquiredAt = epochMs(next.spec!.acquireTime);
    const takeoverMs = acquiredAt - killedAt;
    try {
      await waitFor("the watch to see the Lease change hands", () => Promise.resolve(changedHands));
    } finally {
      following.abort();
    }
    await renewals;
    const expiryMs = acquiredAt - renewalSeenAt;
    const reconcilingMs = (await firstReconcile) - killedAt;
    await allConverged(client, ns, apps.length);
    await assertOneDeploymentEach(client, ns);

    const third = ids.find((id) => id !== oldId && id !== newId)!;
    const byNew = await reconcilesOf(newId);
    assert.ok(byNew > 0, "the new leader reconciled");
    assert.equal(await reconcilesOf(third), 0, "the remaining standby never reconciled");
    assert.equal(next.spec!.leaseTransitions, (first.spec!.leaseTransitions ?? 0) + 1);

    // managedFields times are whole seconds, so the gap is the whole seconds strictly between
    // the writes still in flight at the kill and the takeover.
    const second = (ms: number) => Math.floor(ms / 1000) * 1000;
    const written: number[] = [];
    for (const resource of [DEPLOYMENTS, SERVICES, WEB_APPS]) {
      for (const object of (await client.list(resource, { namespace: ns })).items) {
        for (const entry of object.metadata?.managedFields ?? []) {
          if (entry.manager === FIELD_MANAGER) written.push(epochMs(String(entry.time)));
        }
      }
    }
    const gapFrom = second(killedAt + IN_FLIGHT_MS);
    assert.ok(
      gapFrom < second(acquiredAt) - 1000,
      `the takeover ${takeoverMs} ms after the kill, before the Lease could expire, left no gap`,
    );
    const inGap = written.filter((t) => t > gapFrom && t < second(acquiredAt));
    assert.deepEqual(
      inGap,
      [],
      "no child nor status was written between the kill and the takeover",
    );
    assert.ok(written.some((t) => t >= second(acquiredAt)), "the new leader wrote");

    const events = (await client.list<EventObject>(EVENTS, { namespace: ns })).items
      .filter((e) => e.reportingController === "kinglet");
    const by = (id: string) =>
      events.filter((e) => e.reportingInstance === id)
        .map((e) => epochMs(e.series?.lastObservedTime ?? e.eventTime));
    assert.ok(by(oldId).length > 0, "the old leader recorded Events");
    assert.ok(
      by(oldId).every((t) => t <= killedAt),
      "every Event of the old leader predates its kill",
    );
    assert.ok(
      by(newId).every((t) => t >= acquiredAt),
      "every Event of the new leader follows its takeover",
    );
    assert.deepEqual(by(third), [], "the remaining standby recorded no Event");

    figure(
      `leader failover ${seconds(takeoverMs)} from kill -9 to the new holder in the Lease ` +
        `(lease ${seconds(LEASE_DURATION_MS)}; reconciles: ${oldId} ${byOld} before its kill, ` +
        `${newId} ${byNew}, ${third} 0; ${written.length} kinglet writes, none in the gap)`,
    );
    figure(
      `cold standby: ${standbyMib.toFixed(1)} MiB RSS against the leader's ${
        leaderMib.toFixed(1)
      } MiB with 10 WebApps; reconciling ${seconds(reconcilingMs)} after the kill, ` +
        `${
          seconds(reconcilingMs - takeoverMs)
        } after taking the Lease (lists and syncs its caches first)`,
    );
    assert.ok(standbyMib < leaderMib, "a cold standby holds less than the leader");
    // A standby watches the Lease, so it saw the last renewal when it happened and tried
    // right at its expiry: the lease duration after that renewal bounds the takeover. A
    // standby that only read the Lease could see the renewal up to 4.4 s late.
    assert.ok(
      expiryMs <= LEASE_DURATION_MS + BUSY_MACHINE_MS,
      `takeover ${expiryMs} ms after the last renewal the test saw (${takeoverMs} ms after the kill)`,
    );
    for (const id of [newId, third]) {
      assert.equal(await operators.get(id)!.stop(), 0, `${id} exits 0 on SIGTERM`);
    }
  } finally {
    await Promise.all([...operators.values()].map((o) => o[Symbol.asyncDispose]()));
    await deleteNamespace(client, ns);
    client.close();
  }
});
