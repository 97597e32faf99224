/**
 * Fault: the network between the operator and the API server cuts, stalls
 * silently, and slows down. The operator (a separate process under the
 * deploy/ RBAC) reaches the API server only through a TCP proxy; the test
 * changes WebApps through its own, direct connection while the operator's is
 * impaired, and checks that every change converges.
 */
import assert from "node:assert/strict";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { adminClient, createNamespace, deleteNamespace, waitFor } from "../_support/kube.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";
import { apiServerUrl, clientThrough, TcpProxy } from "../integration/_tcp_proxy.ts";
import { NAMESPACES } from "../../lib/kube/resources.ts";
import { TransportError } from "../../lib/kube/errors.ts";
import { FakeClock } from "../../lib/async/clock.ts";
import {
  allConverged,
  createWebApps,
  figure,
  kubeconfigVia,
  names,
  reconciles,
  scaleWebApps,
  seconds,
  startWebAppOperator,
} from "./_faults.ts";

const STALL_TIMEOUT_MS = 5_000;

Deno.test("through cut, silently stalled and slow connections, every WebApp changed meanwhile converges", async (t) => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "fault-net");
  await using proxy = new TcpProxy(await apiServerUrl());
  const kubeconfig = await kubeconfigVia(await operatorKubeconfig(), proxy.url);
  await using operator = await startWebAppOperator(kubeconfig, ns, [
    `--watch-stall-timeout=${STALL_TIMEOUT_MS}ms`,
  ]);
  let exited = false;
  operator.status.then(() => (exited = true));
  try {
    await operator.ready();
    const apps = names("app", 12);
    await createWebApps(client, ns, apps);
    await allConverged(client, ns, apps.length);
    const count = apps.length;

    await t.step("a cut, then an outage of 3 s: changes made meanwhile converge", async () => {
      proxy.hold();
      proxy.cut();
      await scaleWebApps(client, ns, apps.slice(0, 3), 2);
      await createWebApps(client, ns, ["added-while-cut"]);
      // One added and one deleted: the count stays.
      await client.delete(WEB_APPS, apps[11]!, { namespace: ns });
      await new Promise((r) => setTimeout(r, 3_000));
      await waitFor(
        "the operator to try to reconnect during the outage",
        () => Promise.resolve(proxy.waiting > 0),
      );
      const released = performance.now();
      proxy.release();
      await allConverged(client, ns, count);
      figure(`connection cut recovery ${seconds(performance.now() - released)} after a 3 s outage`);
    });

    await t.step(
      "a silent stall is detected within the stall timeout and changes converge",
      async () => {
        const frozen = proxy.stall();
        assert.ok(frozen > 0, "the operator had connections to freeze");
        const stalled = performance.now();
        await scaleWebApps(client, ns, apps.slice(3, 6), 2);
        await allConverged(client, ns, count, 90_000);
        figure(
          `silent stall recovery ${seconds(performance.now() - stalled)} ` +
            `(watch stall timeout ${seconds(STALL_TIMEOUT_MS)}, ${frozen} connection(s) frozen)`,
        );
        assert.match(await operator.log(), /no event nor bookmark for 5000 ms/);
      },
    );

    await t.step("with 200 ms of latency each way, changes converge", async () => {
      proxy.delay(200);
      const before = await reconciles(operator);
      const started = performance.now();
      await scaleWebApps(client, ns, apps.slice(6, 9), 2);
      await allConverged(client, ns, count);
      figure(
        `200 ms latency: 3 WebApps scaled and converged in ${
          seconds(performance.now() - started)
        }` +
          ` with ${(await reconciles(operator)) - before} reconciles`,
      );
      proxy.delay(0);
    });

    await waitFor("the operator ready again", async () => {
      const response = await fetch(`${operator.healthUrl}/readyz`);
      await response.body?.cancel();
      return response.ok;
    });
    assert.equal(exited, false, "the operator process is still running");
    assert.equal(await operator.stop(), 0);
  } finally {
    await deleteNamespace(client, ns);
    client.close();
  }
});

Deno.test("a request that times out on a silently stalled connection moves the client to a new one", async () => {
  await using proxy = new TcpProxy(await apiServerUrl());
  // The timeout runs on a fake clock: only the stalled request may time out, however slowly
  // a busy API server answers the others.
  const clock = new FakeClock();
  const client = await clientThrough(proxy, { timeoutMs: 1_000, clock });
  try {
    await client.get(NAMESPACES, "default");
    assert.equal(proxy.stall(), 1, "one request in flight at a time needs one pooled connection");
    const stalled = assert.rejects(client.get(NAMESPACES, "default"), TransportError);
    await waitFor(
      "the stalled request to start its timeout",
      () => Promise.resolve(clock.pending > 0),
    );
    await clock.advance(1_000);
    await stalled;
    const namespace = await client.get(NAMESPACES, "default");
    assert.equal(namespace.metadata?.name, "default");
    assert.equal(proxy.accepted, 2, "the next request dialled a new connection");
  } finally {
    client.close();
  }
});
