import assert from "node:assert/strict";
import {
  ExponentialRateLimiter,
  TokenBucketRateLimiter,
} from "../../lib/runtime/scheduling/rate_limiter.ts";
import { FakeClock } from "../../lib/async/clock.ts";

Deno.test("exponential limiter doubles from 5 ms per failure of a key", () => {
  const limiter = new ExponentialRateLimiter<string>();
  const delays = Array.from({ length: 5 }, () => limiter.when("a"));
  assert.deepEqual(delays, [5, 10, 20, 40, 80]);
  assert.equal(limiter.numRequeues("a"), 5);
  assert.equal(limiter.when("b"), 5, "keys back off independently");
});

Deno.test("exponential limiter caps delays at 1000 s", () => {
  const limiter = new ExponentialRateLimiter<string>();
  let delay = 0;
  for (let i = 0; i < 40; i++) delay = limiter.when("a");
  assert.equal(delay, 1_000_000);
  for (let i = 0; i < 2000; i++) delay = limiter.when("a");
  assert.equal(delay, 1_000_000, "no overflow to Infinity after many failures");
});

Deno.test("exponential limiter starts over after forget", () => {
  const limiter = new ExponentialRateLimiter<string>({ baseDelayMs: 100, maxDelayMs: 1000 });
  limiter.when("a");
  limiter.when("a");
  limiter.forget("a");
  assert.equal(limiter.numRequeues("a"), 0);
  assert.equal(limiter.when("a"), 100);
});

Deno.test("token bucket lets a burst through at once and then paces at qps", () => {
  const clock = new FakeClock();
  const limiter = new TokenBucketRateLimiter(clock);
  for (let i = 0; i < 100; i++) assert.equal(limiter.when(`k${i}`), 0);
  assert.equal(limiter.when("k100"), 100);
  assert.equal(limiter.when("k101"), 200, "each reservation queues behind the last");
});

Deno.test("token bucket refills with time up to its burst", async () => {
  const clock = new FakeClock();
  const limiter = new TokenBucketRateLimiter(clock, { qps: 2, burst: 3 });
  for (let i = 0; i < 3; i++) limiter.when("k");
  assert.equal(limiter.when("k"), 500);
  await clock.advance(500);
  assert.equal(limiter.when("k"), 500, "the token reserved earlier was used by the time it came");
  await clock.advance(60_000);
  for (let i = 0; i < 3; i++) assert.equal(limiter.when("k"), 0);
  assert.equal(limiter.when("k"), 500, "the bucket holds at most its burst");
});

Deno.test("rate limiters reject options out of range", () => {
  const clock = new FakeClock();
  assert.throws(() => new ExponentialRateLimiter({ baseDelayMs: 0 }), RangeError);
  assert.throws(() => new ExponentialRateLimiter({ baseDelayMs: 10, maxDelayMs: 5 }), RangeError);
  assert.throws(() => new TokenBucketRateLimiter(clock, { qps: 0 }), /'qps' must be a positive/);
  assert.throws(() => new TokenBucketRateLimiter(clock, { burst: 0.5 }), /'burst'/);
});
