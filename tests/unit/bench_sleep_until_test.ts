import assert from "node:assert/strict";
import { sleepUntil } from "../../bench/harness/scenario_steps.ts";

Deno.test("the harness waits until its clock reaches the time, never a fraction early", async () => {
  const t0 = performance.now();
  const clock = { now: () => performance.now() - t0 };
  const signal = new AbortController().signal;
  for (const due of [1, 2.5, 3.999, 5, 7.25, 10]) {
    const at = clock.now() + due;
    await sleepUntil(clock, at, signal);
    const now = clock.now();
    assert.ok(now >= at, `woke at ${now} ms for ${at} ms`);
  }
});

Deno.test("the harness wakes when a clock that lags its timers catches up", async () => {
  // A clock half a millisecond short after the first timer, as performance.now() can be beside
  // setTimeout: the wait must read it again and sleep once more.
  const readings = [999, 999.5, 1_000];
  let reads = 0;
  const clock = { now: () => readings[Math.min(reads++, readings.length - 1)]! };
  await sleepUntil(clock, 1_000, new AbortController().signal);
  assert.equal(reads, 3);
});

Deno.test("the harness's wait ends with the signal's reason when it aborts", async () => {
  const stop = new AbortController();
  const waiting = sleepUntil({ now: () => 0 }, 60_000, stop.signal);
  stop.abort(new Error("stopped"));
  await assert.rejects(waiting, /stopped/);
});
