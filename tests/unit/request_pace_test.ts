/**
 * The manager's pace: reconciles at once start at one, grow while requests
 * take about what their kind costs unloaded and reconciles wait for a
 * permit, shrink to keep about one request waiting in the server's queue
 * while they take longer, stay put without requests, and start at one again
 * after a quiet spell.
 */
import assert from "node:assert/strict";
import type { Clock } from "../../lib/async/clock.ts";
import { RequestPace } from "../../lib/runtime/manager/_request_pace.ts";

/** Time that moves only when told: the pace reads the clock and sets no timer. */
class ManualClock implements Clock {
  #now = 0;
  now(): number {
    return this.#now;
  }
  sleep(): Promise<void> {
    return Promise.reject(new Error("the pace sets no timer"));
  }
  advance(ms: number): void {
    this.#now += ms;
  }
}

function pace(max = 8, busy = () => true) {
  const clock = new ManualClock();
  const limits: number[] = [];
  const p = new RequestPace({ max, clock, busy, onChange: (limit) => limits.push(limit) });
  return { clock, limits, p };
}

/**
 * Ends `count` requests of `kind`, keeping `perReconcile` of them in flight
 * for each reconcile the limit allows; each takes `latency(inFlight, i)` ms.
 */
function steady(
  { p, clock }: { p: RequestPace; clock: ManualClock },
  kind: string | ((i: number) => string),
  count: number,
  latency: (inFlight: number, i: number) => number,
  perReconcile = 1,
): number {
  const flying: { end: () => void; at: number }[] = [];
  for (let i = 0; i < count; i++) {
    while (flying.length < p.limit * perReconcile) {
      const name = typeof kind === "string" ? kind : kind(i + flying.length);
      const at = clock.now() + latency(p.limit * perReconcile, i + flying.length);
      flying.push({ end: p.begin(name), at });
    }
    flying.sort((a, b) => a.at - b.at);
    const next = flying.shift()!;
    if (next.at > clock.now()) clock.advance(next.at - clock.now());
    next.end();
  }
  // The rest end when they are due.
  flying.sort((a, b) => a.at - b.at);
  for (const { end, at } of flying) {
    if (at > clock.now()) clock.advance(at - clock.now());
    end();
  }
  return p.limit;
}

Deno.test("requests that take as long however many are in flight grow the limit from 1 to its most, a step at a time", () => {
  const s = pace();
  assert.equal(s.p.limit, 1);
  assert.equal(steady(s, "deployments apply", 200, () => 20), 8);
  assert.deepEqual(s.limits, [2, 3, 4, 5, 6, 7, 8]);
});

Deno.test("answers that scatter a little, as a remote server's do, still grow the limit to its most", () => {
  const scatter = [40, 42, 41, 43, 40.5, 42.5, 41.5, 40, 43, 41];
  assert.equal(steady(pace(), "pods get", 400, (_, i) => scatter[i % scatter.length]!), 8);
});

Deno.test("answers that scatter widely however few are sent read as a queue: the limit stays low", () => {
  const scatter = [14, 27, 19, 22, 31, 16, 24, 18, 29, 21];
  const s = pace();
  steady(s, "pods get", 400, (_, i) => scatter[i % scatter.length]!);
  assert.ok(s.p.limit <= 3, `limit ${s.p.limit}`);
});

Deno.test("a limit nobody waits for does not grow", () => {
  let busy = false;
  const s = pace(8, () => busy);
  assert.equal(steady(s, "deployments apply", 100, () => 5), 1, "no reconcile waited");
  busy = true;
  assert.equal(steady(s, "deployments apply", 8, () => 5), 3);
});

Deno.test("kinds are told apart: a slow kind of request holds nothing back while it keeps its own pace", () => {
  const kind = (i: number) => i % 2 ? "widgets apply" : "configmaps apply";
  const s = pace();
  assert.equal(steady(s, kind, 400, (_, i) => i % 2 ? 900 : 4), 8);
});

Deno.test("a server that serves one request at a time keeps about one of the manager's requests waiting", () => {
  // n in flight each take n times as long.
  assert.equal(steady(pace(), "services create", 400, (n) => 10 * n), 2);
  // Two requests a reconcile (a Deployment and a Service applied at once): one or two reconciles
  // at a time, as one of them alone already queues a request.
  const s = pace();
  steady(s, "services create", 400, (n) => 10 * n, 2);
  assert.ok(Math.max(...s.limits) <= 2, `limits ${s.limits}`);
  // A server that serves three at a time.
  assert.equal(steady(pace(), "services create", 400, (n) => 10 * Math.max(1, n / 3)), 4);
});

Deno.test("requests far slower than unloaded shrink the limit to what keeps about one waiting, by one at least", () => {
  const s = pace();
  assert.equal(steady(s, "deployments apply", 100, () => 5), 8);
  // The server now serves one at a time: 8 in flight take 8 times as long.
  assert.equal(steady(s, "deployments apply", 8, (n) => 5 * n), 2, "8 / 8 + 8 / 8");
  assert.equal(steady(s, "deployments apply", 40, (n) => 5 * n), 2, "one waiting: it stays");
  assert.equal(steady(s, "deployments apply", 8, () => 400), 1, "never under one");
  assert.deepEqual(s.limits.slice(-2), [2, 1]);
});

Deno.test("a step's median decides: one slow request among fast ones does not shrink the limit", () => {
  const s = pace();
  assert.equal(steady(s, "deployments apply", 100, () => 5), 8);
  assert.equal(steady(s, "deployments apply", 8, (_, i) => i % 8 === 3 ? 500 : 5), 8);
});

Deno.test("no requests leave the limit as it is; a tick after a quiet window starts it at one again", () => {
  let busy = true;
  const s = pace(8, () => busy);
  assert.equal(steady(s, "services apply", 100, () => 10), 8);
  busy = false;
  s.clock.advance(29_000);
  s.p.tick();
  assert.equal(s.p.limit, 8, "a request within the window keeps the limit");
  s.clock.advance(1_000);
  busy = true;
  s.p.tick();
  assert.equal(s.p.limit, 8, "reconciles waiting keep it");
  busy = false;
  s.p.tick();
  assert.equal(s.p.limit, 1, "what a request costs unloaded is forgotten: the limit starts over");
});

Deno.test("the unloaded cost of a kind is forgotten after two windows: a server slower for good is the new norm", () => {
  const s = pace(4);
  assert.equal(steady(s, "pods get", 40, () => 5), 4);
  assert.equal(steady(s, "pods get", 8, () => 50), 1);
  // A minute of 50 ms answers, one at a time.
  assert.equal(
    steady(s, "pods get", 1_300, () => 50),
    4,
    "50 ms is now unloaded: the limit grows again",
  );
});

Deno.test("reconciles that wait while none of the running ones is in a request grow the limit a tick at a time", () => {
  let busy = true;
  const s = pace(3, () => busy);
  s.p.tick();
  assert.equal(
    s.p.limit,
    2,
    "no request in flight and none ended: the server is not what they wait on",
  );
  const end = s.p.begin("pods get");
  s.p.tick();
  assert.equal(s.p.limit, 2, "a request in flight");
  end();
  s.p.tick();
  assert.equal(s.p.limit, 2, "a request ended since the last tick");
  s.p.tick();
  s.p.tick();
  assert.equal(s.p.limit, 3, "at most max");
  busy = false;
  const idle = pace(3, () => busy);
  idle.p.tick();
  assert.equal(idle.p.limit, 1, "nobody waits");
});

Deno.test("quietIn says when a tick would start the limit over, and nothing while there is nothing to start over", () => {
  const s = pace();
  assert.equal(s.p.quietIn(), undefined, "at its start");
  steady(s, "pods get", 20, () => 10);
  assert.equal(s.p.quietIn(), 30_000);
  s.clock.advance(10_000);
  assert.equal(s.p.quietIn(), 20_000);
  const end = s.p.begin("pods get");
  assert.equal(s.p.quietIn(), 30_000, "a request in flight: check again a window later");
  end();
});

Deno.test("max and initial must be positive integers; initial is capped by max", () => {
  const clock = new ManualClock();
  const busy = () => true;
  assert.throws(() => new RequestPace({ max: 0, clock, busy }), RangeError);
  assert.throws(() => new RequestPace({ max: 4, initial: 0, clock, busy }), RangeError);
  assert.equal(new RequestPace({ max: 2, initial: 6, clock, busy }).limit, 2);
});
