import assert from "node:assert/strict";
import { FakeClock } from "../../lib/async/clock.ts";
import { fixedErrorPolicy, tieredErrorPolicy } from "../../lib/runtime/scheduling/error_policy.ts";
import { Pacing, type PacingOptions } from "../../lib/runtime/scheduling/pacing.ts";
import { WorkQueue } from "../../lib/runtime/queue/queue.ts";

/** A deterministic source in [0, 1) (mulberry32), so spreads are reproducible. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pacing(
  options: PacingOptions,
  random: () => number = Math.random,
  clock = new FakeClock(),
) {
  return new Pacing(options, { name: "test", clock, random });
}

Deno.test("a requested requeue is jittered by ±10 % by default", () => {
  assert.equal(pacing({}, () => 0).requeueDelay(300_000), 270_000);
  assert.equal(pacing({}, () => 0.5).requeueDelay(300_000), 300_000);
  assert.ok(pacing({}, () => 0.999_999).requeueDelay(300_000)! < 330_000);
});

Deno.test("a retry after a failure comes up to the jitter sooner than its delay, never later", () => {
  assert.equal(pacing({}, () => 0).retryDelay(30_000), 30_000);
  assert.equal(pacing({}, () => 0.5).retryDelay(30_000), 28_500);
  assert.ok(pacing({}, () => 0.999_999).retryDelay(30_000) > 27_000);
  assert.equal(pacing({ requeueJitter: 0 }, () => 0.7).retryDelay(30_000), 30_000);
});

Deno.test("the jitter follows the requeueJitter option, and 0 turns it off", () => {
  assert.equal(pacing({ requeueJitter: 0.5 }, () => 0).requeueDelay(60_000), 30_000);
  assert.equal(pacing({ requeueJitter: 0 }, () => 0).requeueDelay(60_000), 60_000);
});

Deno.test("5,000 requeues of 300 s land over 270 to 330 s, at most a few dozen in any second", () => {
  const p = pacing({}, seeded(13));
  const perSecond = new Map<number, number>();
  for (let i = 0; i < 5_000; i++) {
    const at = p.requeueDelay(300_000)!;
    assert.ok(at >= 270_000 && at < 330_000, `${at} ms is outside 270-330 s`);
    const second = Math.floor(at / 1000);
    perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
  }
  // Uniform over 60 s is 83 a second; all 5,000 at once is what jitter prevents.
  assert.equal(perSecond.size, 60);
  assert.ok(
    Math.max(...perSecond.values()) < 120,
    `${Math.max(...perSecond.values())} in a second`,
  );
});

Deno.test("without a requested requeue, a key comes back only when a resync period is set", () => {
  assert.equal(pacing({}).requeueDelay(undefined), undefined);
  assert.equal(pacing({ resyncPeriodMs: 600_000 }, () => 0.5).requeueDelay(undefined), 600_000);
  assert.equal(pacing({ resyncPeriodMs: 600_000 }, () => 0.5).requeueDelay(5_000), 5_000);
});

Deno.test("a requeue of 0 ms stays immediate", () => {
  assert.equal(pacing({}, () => 0).requeueDelay(0), 0);
});

Deno.test("a Retry-After is never cut short, and is spread over up to half of it again", () => {
  assert.equal(pacing({}, () => 0).retryAfterDelay(2), 2_000);
  assert.equal(pacing({}, () => 0.5).retryAfterDelay(2), 2_500);
  assert.ok(pacing({}, () => 0.999_999).retryAfterDelay(2) < 3_000);
});

Deno.test("the tiered policy waits 30 s, 2 min, 5 min, then 10 min for good", () => {
  const policy = tieredErrorPolicy();
  const error = new Error("x");
  assert.deepEqual(
    [1, 2, 3, 4, 5, 50].map((attempt) => policy(error, attempt)),
    [30_000, 120_000, 300_000, 600_000, 600_000, 600_000],
  );
});

Deno.test("the fixed policy waits the same after every failure", () => {
  const policy = fixedErrorPolicy(10_000);
  assert.deepEqual([1, 2, 9].map((a) => policy(new Error("x"), a)), [10_000, 10_000, 10_000]);
});

Deno.test("misconfigured policies are refused, naming the option and the value", () => {
  assert.throws(() => fixedErrorPolicy(-1), /'ms' must be a finite number >= 0, got -1/);
  assert.throws(() => tieredErrorPolicy([]), /'tiersMs' must hold finite delays >= 0, got \[\]/);
  assert.throws(() => tieredErrorPolicy([1, NaN]), /got \[1,NaN\]/);
});

Deno.test("misconfigured pacing is refused, naming the controller, the option and the value", () => {
  assert.throws(() => pacing({ requeueJitter: 1 }), /controller 'test': 'requeueJitter' .* got 1/);
  assert.throws(() => pacing({ resyncPeriodMs: -5 }), /'resyncPeriodMs' .* got -5/);
  assert.throws(
    () => pacing({ reconcileRateLimit: { qps: 0, burst: 1 } }),
    /'reconcileRateLimit' needs qps > 0 and a whole burst >= 1, got 0 and 1/,
  );
  assert.throws(() => pacing({ reconcileRateLimit: { qps: 1, burst: 0.5 } }), /got 1 and 0.5/);
});

/** Admits `count` reconciles as a controller's loop does, recording when each was let through. */
function admitAll(p: Pacing, clock: FakeClock, count: number, signal: AbortSignal): number[] {
  const admitted: number[] = [];
  (async () => {
    for (let i = 0; i < count; i++) {
      await p.admit(signal);
      admitted.push(clock.now());
    }
  })().catch(() => {});
  return admitted;
}

Deno.test("the reconcile rate limit lets the burst through, then one start per 1/qps seconds", async () => {
  const clock = new FakeClock();
  const p = pacing({ reconcileRateLimit: { qps: 100 / 60, burst: 100 } }, Math.random, clock);
  const stop = new AbortController();
  const admitted = admitAll(p, clock, 103, stop.signal);
  await clock.advance(0);
  assert.equal(admitted.length, 100, "the burst of 100 starts at once");
  await clock.advance(599);
  assert.equal(admitted.length, 100, "the 101st waits for a token");
  await clock.advance(1);
  assert.equal(admitted.length, 101, "a token every 600 ms (100 per 60 s)");
  await clock.advance(1_200);
  assert.deepEqual(admitted.slice(100), [600, 1_200, 1_800]);
  stop.abort();
});

Deno.test("the reconcile rate limit refills up to its burst while idle", async () => {
  const clock = new FakeClock();
  const p = pacing({ reconcileRateLimit: { qps: 1, burst: 3 } }, Math.random, clock);
  const stop = new AbortController();
  assert.equal(admitAll(p, clock, 3, stop.signal).length, 0);
  await clock.advance(0);
  await clock.advance(60_000);
  const later = admitAll(p, clock, 5, stop.signal);
  await clock.advance(0);
  assert.deepEqual(later, [60_000, 60_000, 60_000], "three tokens, not sixty");
  await clock.advance(2_000);
  assert.deepEqual(later, [60_000, 60_000, 60_000, 61_000, 62_000]);
  stop.abort();
});

Deno.test("a wait for the reconcile rate limit ends when the controller stops", async () => {
  const clock = new FakeClock();
  const p = pacing({ reconcileRateLimit: { qps: 1, burst: 1 } }, Math.random, clock);
  await p.admit(AbortSignal.abort());
  const stop = new AbortController();
  const waiting = p.admit(stop.signal);
  stop.abort(new Error("stopping"));
  await assert.rejects(waiting, /stopping/);
});

Deno.test("without a reconcile rate limit, admit never waits", async () => {
  const clock = new FakeClock();
  const p = pacing({}, Math.random, clock);
  for (let i = 0; i < 1_000; i++) await p.admit(new AbortController().signal);
  assert.equal(clock.pending, 0);
});

Deno.test("jittered requeues share the queue's one timer and come back spread out", async () => {
  const clock = new FakeClock();
  const queue = new WorkQueue<string>({ clock });
  const p = pacing({}, seeded(5), clock);
  // Few keys: the fake clock turns the event loop over at every timer it fires.
  for (let i = 0; i < 200; i++) queue.addAfter(`ns/app-${i}`, p.requeueDelay(300_000)!);
  assert.equal(clock.pending, 1, "one timer, not one per key");
  await clock.advance(269_999);
  assert.equal(queue.len, 0, "none before 270 s");
  await clock.advance(30_001);
  const half = queue.len;
  assert.ok(half > 70 && half < 130, `about half by 300 s, got ${half}`);
  await clock.advance(30_000);
  assert.equal(queue.len, 200);
  queue.shutDown();
});
