/**
 * Client-side flow control (`qps`, `burst`) on a fake clock: the bucket by
 * itself, then a client in front of a loopback server that answers at once,
 * so only the bucket decides when a request leaves.
 */
import assert from "node:assert/strict";
import { KubeClient, type RateLimiterObservation } from "../../lib/kube/client.ts";
import { FlowControl } from "../../lib/kube/_flow_control.ts";
import { CONFIG_MAPS, LEASES } from "../../lib/kube/resources.ts";
import { noToken } from "../../lib/kube/token_source.ts";
import { FakeClock } from "../../lib/async/clock.ts";
import { RuntimeMetrics } from "../../lib/runtime/metrics/metrics.ts";
import { waitFor } from "../../lib/testing/wait_for.ts";

Deno.test("flow control lets the burst go at once, then one request per 1/qps", async () => {
  const clock = new FakeClock();
  const flow = new FlowControl(clock, { qps: 5, burst: 2 });
  const waited: number[] = [];
  const sent: number[] = [];
  for (let i = 0; i < 5; i++) {
    flow.wait().then((seconds) => {
      waited.push(seconds);
      sent.push(clock.now());
    });
  }
  await clock.advance(0);
  assert.deepEqual(sent, [0, 0]);
  await clock.advance(600);
  assert.deepEqual(sent, [0, 0, 200, 400, 600], "in order, 200 ms apart, never together");
  assert.deepEqual(waited, [0, 0, 0.2, 0.4, 0.6]);
});

Deno.test("flow control with qps 0 never waits", async () => {
  const clock = new FakeClock();
  const flow = new FlowControl(clock, { qps: 0, burst: 0 });
  for (let i = 0; i < 10_000; i++) assert.equal(await flow.wait(), 0);
  assert.equal(clock.pending, 0);
});

Deno.test("a request waiting for a token gives up when its signal aborts", async () => {
  const clock = new FakeClock();
  const flow = new FlowControl(clock, { qps: 1, burst: 1 });
  await flow.wait();
  const stop = new AbortController();
  const waiting = flow.wait(stop.signal);
  stop.abort(new Error("caller gave up"));
  await assert.rejects(waiting, /caller gave up/);
});

Deno.test("flow control refuses a negative qps or a burst below 1, naming the option", () => {
  const clock = new FakeClock();
  assert.throws(() => new FlowControl(clock, { qps: -1, burst: 1 }), /'qps' .* got -1/);
  assert.throws(() => new FlowControl(clock, { qps: 1, burst: 0 }), /'burst' .* got 0/);
});

Deno.test("a client over its qps holds requests back and reports each wait as client-go's histogram", async () => {
  let served = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    served++;
    return Response.json({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } });
  });
  const clock = new FakeClock();
  const metrics = new RuntimeMetrics();
  const waits: RateLimiterObservation[] = [];
  const client = new KubeClient({
    server: `http://127.0.0.1:${server.addr.port}`,
    auth: noToken,
    namespace: "team",
    source: "test",
  }, {
    qps: 2,
    burst: 1,
    clock,
    onRateLimited: (o) => {
      waits.push(o);
      metrics.observeRateLimit(o);
    },
  });
  try {
    const gets = [0, 1, 2].map(() => client.get(CONFIG_MAPS, "c"));
    await waitUntil(() => served === 1);
    await clock.advance(499);
    assert.equal(served, 1, "the second request waits for its token");
    await clock.advance(1);
    await waitUntil(() => served === 2);
    await clock.advance(500);
    await Promise.all(gets);
    assert.equal(served, 3);
    assert.deepEqual(waits.map((w) => [w.method, w.seconds]), [["GET", 0], ["GET", 0.5], [
      "GET",
      1,
    ]]);
    const text = metrics.render();
    const host = `127.0.0.1:${server.addr.port}`;
    assert.match(
      text,
      new RegExp(
        `rest_client_rate_limiter_duration_seconds_count\\{verb="GET",host="${host}"\\} 3`,
      ),
    );
    assert.match(
      text,
      new RegExp(
        `rest_client_rate_limiter_duration_seconds_bucket\\{verb="GET",host="${host}",le="0.5"\\} 2`,
      ),
    );
  } finally {
    client.close();
    await server.shutdown();
  }
});

/** Lets real I/O (the loopback server) run until `done`, without moving the fake clock. */
async function waitUntil(done: () => boolean): Promise<void> {
  await waitFor("the loopback exchange to finish", done, { timeoutMs: 30_000, intervalMs: 2 });
}

Deno.test("Lease requests skip the bucket, so leader election never queues behind reconciles", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    return Response.json({ apiVersion: "v1", kind: "Whatever", metadata: { name: "x" } });
  });
  const clock = new FakeClock();
  const waits: string[] = [];
  const client = new KubeClient({
    server: `http://127.0.0.1:${server.addr.port}`,
    auth: noToken,
    namespace: "kinglet-system",
    source: "test",
  }, { qps: 1, burst: 1, clock, onRateLimited: (o) => waits.push(`${o.seconds}`) });
  try {
    await client.get(CONFIG_MAPS, "x");
    const held = client.get(CONFIG_MAPS, "y");
    for (let i = 0; i < 3; i++) await client.get(LEASES, "kinglet-leader");
    assert.deepEqual(waits, ["0"], "three Lease reads went while a ConfigMap read waits");
    await clock.advance(1_000);
    await held;
    assert.deepEqual(waits, ["0", "1"], "only the ConfigMap reads took or waited for tokens");
  } finally {
    client.close();
    await server.shutdown();
  }
});
