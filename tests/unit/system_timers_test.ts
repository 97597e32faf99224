import assert from "node:assert/strict";
import { SystemTimers } from "../../lib/async/_system_timers.ts";
import { deadline, FakeClock, systemClock } from "../../lib/async/clock.ts";

/** A timer that records its name, and says when it ran. */
function fired(order: string[], name: string, done?: () => void): () => void {
  return () => {
    order.push(name);
    done?.();
  };
}

Deno.test("system timers fire in due order, timers due together in scheduling order", async () => {
  const timers = new SystemTimers();
  const order: string[] = [];
  const { promise, resolve } = Promise.withResolvers<void>();
  // Gaps of 200 ms, so that a loaded machine scheduling the five slowly still sees them due apart.
  timers.schedule(fired(order, "400", resolve), 400);
  timers.schedule(fired(order, "200a"), 200);
  timers.schedule(fired(order, "200b"), 200);
  timers.schedule(fired(order, "0"), 0);
  timers.schedule(fired(order, "negative"), -5);
  assert.equal(timers.pending, 5);
  await promise;
  assert.deepEqual(order, ["0", "negative", "200a", "200b", "400"]);
  assert.equal(timers.pending, 0);
});

Deno.test("a system timer never fires before its time, whole or fractional milliseconds", async () => {
  const timers = new SystemTimers();
  const delays = [0.5, 1, 2.5, 3.999, 7.25, 10, 10.9, 25.5];
  const early: string[] = [];
  await Promise.all(delays.map((ms) => {
    const { promise, resolve } = Promise.withResolvers<void>();
    const start = performance.now();
    timers.schedule(() => {
      const waited = performance.now() - start;
      if (waited < ms) early.push(`${ms} ms fired after ${waited.toFixed(3)} ms`);
      resolve();
    }, ms);
    return promise;
  }));
  assert.deepEqual(early, []);
});

Deno.test("a cancelled system timer never fires and the others still do", async () => {
  const timers = new SystemTimers();
  const order: string[] = [];
  const { promise, resolve } = Promise.withResolvers<void>();
  const head = timers.schedule(fired(order, "head"), 5);
  const middle = timers.schedule(fired(order, "middle"), 10);
  timers.schedule(fired(order, "last", resolve), 20);
  head();
  middle();
  head(); // twice is harmless
  assert.equal(timers.pending, 1);
  await promise;
  assert.deepEqual(order, ["last"]);
});

Deno.test("a timer earlier than the armed one fires first, and one scheduled from a timer runs", async () => {
  const timers = new SystemTimers();
  const order: string[] = [];
  const { promise, resolve } = Promise.withResolvers<void>();
  timers.schedule(fired(order, "late", resolve), 60);
  timers.schedule(() => {
    order.push("early");
    timers.schedule(fired(order, "from early"), 0);
  }, 1);
  await promise;
  assert.deepEqual(order, ["early", "from early", "late"]);
});

Deno.test("deadlines scheduled and cancelled one after another share one wake-up signal", async () => {
  const armed: number[] = [];
  const timers = new SystemTimers((ms) => {
    armed.push(ms);
    return AbortSignal.timeout(ms);
  });
  for (let i = 0; i < 100; i++) timers.schedule(() => {}, 60_000 + i)();
  assert.deepEqual(armed.length, 1, "one signal for every deadline due no earlier");
  const { promise, resolve } = Promise.withResolvers<void>();
  timers.schedule(resolve, 5);
  await promise;
  assert.equal(armed.length, 2, "an earlier timer arms a signal of its own");
  assert.ok(armed[1]! <= 5, `armed for ${armed[1]} ms`);
  assert.equal(timers.pending, 0);
});

Deno.test("the system clock sleeps without the global setTimeout, and a sleep holds the process", async () => {
  const clock = new URL("../../lib/async/clock.ts", import.meta.url).href;
  const program = `
    import { systemClock } from ${JSON.stringify(clock)};
    globalThis.setTimeout = () => { throw new Error("the global setTimeout was called"); };
    const stop = new AbortController();
    const long = systemClock.sleep(3_600_000, stop.signal).catch((e) => e.name);
    await systemClock.sleep(20);
    stop.abort();
    console.log("woke", await long);
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-check", program],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Were the aborted hour-long sleep still holding the process, it would not end by itself.
  const guard = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const { code, stdout, stderr } = await child.output();
  clearTimeout(guard);
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  assert.equal(new TextDecoder().decode(stdout).trim(), "woke AbortError");
});

Deno.test("the system clock's sleep rejects with the signal's reason when aborted", async () => {
  const stop = new AbortController();
  const sleeping = systemClock.sleep(3_600_000, stop.signal);
  stop.abort(new Error("stopped"));
  await assert.rejects(sleeping, /stopped/);
});

Deno.test("a deadline within a signal aborts with that signal's reason, and lets go of it once disposed", async () => {
  const clock = new FakeClock();
  const outer = new AbortController();
  {
    using limit = deadline(clock, 1_000, outer.signal);
    outer.abort("stopping");
    assert.equal(limit.signal.reason, "stopping");
  }
  const later = new AbortController();
  let seen: AbortSignal;
  {
    using limit = deadline(clock, 1_000, later.signal);
    seen = limit.signal;
    await clock.advance(1_000);
    assert.equal((limit.signal.reason as DOMException).name, "TimeoutError");
  }
  later.abort("after");
  assert.notEqual(seen.reason, "after", "the deadline's reason changed after it passed");
  const idle = new AbortController();
  {
    using limit = deadline(clock, 1_000, idle.signal);
    seen = limit.signal;
  }
  assert.equal(clock.pending, 0, "the disposed deadline's timer is still pending");
  idle.abort("after dispose");
  assert.ok(!seen.aborted, "a disposed deadline still listened to its outer signal");
});
