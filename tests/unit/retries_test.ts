import assert from "node:assert/strict";
import { FakeClock } from "../../lib/async/clock.ts";
import { ApiError } from "../../lib/kube/errors.ts";
import {
  type ErrorPolicy,
  ErrorPolicyRateLimiter,
  tieredErrorPolicy,
} from "../../lib/runtime/scheduling/error_policy.ts";
import { Pacing } from "../../lib/runtime/scheduling/pacing.ts";
import { type Outcome, Retries } from "../../lib/runtime/scheduling/retries.ts";
import { TerminalError } from "../../lib/runtime/controller/spec.ts";
import type { ReconcileResult } from "../../lib/runtime/metrics/metrics.ts";
import type { RateLimiter } from "../../lib/runtime/scheduling/rate_limiter.ts";

/** Retries over a queue that records what it is asked, without jitter. */
function harness(errorPolicy?: ErrorPolicy, rateLimiter?: RateLimiter<string>) {
  const clock = new FakeClock();
  const added: [string, number][] = [];
  const results: ReconcileResult[] = [];
  const retries = new Retries(errorPolicy ? { errorPolicy } : {}, {
    name: "test",
    queue: { addAfter: (key, ms) => void added.push([key, ms]) },
    clock,
    pacing: new Pacing({ requeueJitter: 0 }, { name: "test", clock }),
    metrics: { reconciled: (result) => void results.push(result), activeWorkers: () => {} },
    ...(rateLimiter && { rateLimiter }),
  });
  const settle = (key: string, outcome: Outcome) => retries.settle(key, outcome, 0.01);
  return { retries, added, results, settle };
}

const failure = (error: unknown = new Error("x")): Outcome => ({ kind: "error", error });

Deno.test("the error policy sees attempts counted from 1, and forget starts them over", () => {
  const seen: number[] = [];
  const policy: ErrorPolicy = (_error, attempt) => {
    seen.push(attempt);
    return attempt * 1000;
  };
  const limiter = new ErrorPolicyRateLimiter<string>(policy);
  assert.equal(limiter.when("ns/a", new Error("x")), 1000);
  assert.equal(limiter.when("ns/a", new Error("x")), 2000);
  assert.equal(limiter.when("ns/b", new Error("x")), 1000);
  assert.equal(limiter.numRequeues("ns/a"), 2);
  limiter.forget("ns/a");
  assert.equal(limiter.numRequeues("ns/a"), 0);
  assert.equal(limiter.when("ns/a", new Error("x")), 1000);
  assert.deepEqual(seen, [1, 2, 1, 1]);
});

Deno.test("an error policy may call an error terminal", () => {
  const limiter = new ErrorPolicyRateLimiter<string>((e) =>
    e instanceof TypeError ? "terminal" : 5
  );
  assert.equal(limiter.when("ns/a", new TypeError("bad")), "terminal");
  assert.equal(limiter.when("ns/a", new Error("flaky")), 5);
});

Deno.test("without an error policy, failures are left to the rate limiter", () => {
  const asked: string[] = [];
  const limiter: RateLimiter<string> = {
    when: (key) => (asked.push(key), 250),
    forget: () => {},
    numRequeues: () => asked.length,
  };
  const h = harness(undefined, limiter);
  h.settle("ns/a", failure());
  assert.deepEqual(asked, ["ns/a"]);
  assert.deepEqual(h.added, [["ns/a", 250]]);
  assert.equal(h.retries.failures("ns/a"), 1);
});

Deno.test("the tiered policy under a controller starts over after a success", () => {
  const h = harness(tieredErrorPolicy());
  for (let i = 0; i < 3; i++) h.settle("ns/db", failure());
  assert.deepEqual(h.added.map(([, ms]) => ms), [30_000, 120_000, 300_000]);
  h.settle("ns/db", { kind: "success", action: {} });
  h.settle("ns/db", failure());
  assert.equal(h.added.at(-1)![1], 30_000);
});

Deno.test("each outcome maps to one queue operation and one result", () => {
  const h = harness();
  h.settle("ns/a", { kind: "success", action: {} });
  h.settle("ns/b", { kind: "success", action: { requeueAfterMs: 60_000 } });
  h.settle("ns/c", { kind: "gone" });
  h.settle("ns/d", { kind: "skipped" });
  h.settle("ns/e", { kind: "terminal", error: new TerminalError("bad"), revision: 3 });
  h.settle("ns/f", failure());
  assert.deepEqual(h.added, [["ns/b", 60_000], ["ns/f", 5]]);
  assert.deepEqual(h.results, ["success", "requeue_after", "success", "error", "error"]);
});

Deno.test("a success, a skip, a terminal failure and a vanished object forget the key's failures", () => {
  const h = harness();
  const outcomes: Outcome[] = [
    { kind: "success", action: {} },
    { kind: "skipped" },
    { kind: "terminal", error: new TerminalError("bad"), revision: 1 },
    { kind: "gone" },
  ];
  for (const outcome of outcomes) {
    h.settle("ns/a", failure());
    h.settle("ns/a", failure());
    assert.equal(h.retries.failures("ns/a"), 2);
    h.settle("ns/a", outcome);
    assert.equal(h.retries.failures("ns/a"), 0, `after ${outcome.kind}`);
  }
});

Deno.test("a terminal failure holds at its revision until the revision moves, a success or a deletion", () => {
  const h = harness((error) => error instanceof RangeError ? "terminal" : 1_000);
  h.settle("ns/a", { kind: "terminal", error: new TerminalError("bad"), revision: 2 });
  assert.equal(h.retries.isTerminal("ns/a", 2), true);
  assert.equal(h.retries.isTerminal("ns/a", 3), false, "a new generation is reconciled");
  h.settle("ns/a", { kind: "success", action: {} });
  assert.equal(h.retries.isTerminal("ns/a", 2), false);
  h.settle("ns/b", { kind: "error", error: new RangeError("no"), revision: 7 });
  assert.equal(h.retries.isTerminal("ns/b", 7), true, "the policy's verdict counts as terminal");
  assert.deepEqual(h.added, [], "a terminal failure is not requeued");
  h.retries.deleted("ns/b");
  assert.equal(h.retries.isTerminal("ns/b", 7), false);
});

Deno.test("a Retry-After is waited out without counting a failure", () => {
  const h = harness();
  const shed = new ApiError({
    status: 429,
    reason: "TooManyRequests",
    message: "slow down",
    retryAfterSeconds: 2,
    verb: "PATCH",
    path: "/api/v1/namespaces/ns/configmaps/a",
  });
  h.settle("ns/a", failure(shed));
  assert.equal(h.retries.failures("ns/a"), 0);
  assert.equal(h.added.length, 1);
  const [, ms] = h.added[0]!;
  assert.ok(ms >= 2_000 && ms < 3_000, `retried after ${ms} ms`);
});

Deno.test("retries past the bucket's burst wait for its tokens", () => {
  const h = harness(() => 0);
  for (let i = 0; i < 102; i++) h.settle(`ns/k${i}`, failure());
  assert.deepEqual(h.added.slice(99).map(([, ms]) => ms), [0, 100, 200]);
});

Deno.test("without an error policy a key backs off exponentially, and never before the bucket has a token", () => {
  const h = harness();
  h.settle("ns/a", failure());
  h.settle("ns/a", failure());
  for (let i = 0; i < 98; i++) h.settle(`ns/other-${i}`, failure());
  h.settle("ns/fresh", failure());
  assert.deepEqual(h.added.slice(0, 2), [["ns/a", 5], ["ns/a", 10]]);
  assert.deepEqual(h.added.at(-1), ["ns/fresh", 100], "the bucket is spent: a first failure waits");
});
