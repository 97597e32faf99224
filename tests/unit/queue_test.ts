import assert from "node:assert/strict";
import { type QueueMetrics, type QueueSnapshot, WorkQueue } from "../../lib/runtime/queue/queue.ts";

/** While both lanes wait, one key in this many comes from the backlog (the queue's contract). */
const BACKLOG_SHARE = 8;
import { FakeClock, flushMicrotasks } from "../../lib/async/clock.ts";

function setup() {
  const clock = new FakeClock();
  const queue = new WorkQueue<string>({ clock });
  return { clock, queue };
}

/** Resolves to what `get` returned, or "pending" if it has not returned yet. */
async function peek<T>(promise: Promise<T>): Promise<T | "pending"> {
  let value: T | "pending" = "pending";
  promise.then((v) => value = v);
  await flushMicrotasks();
  return value;
}

Deno.test("queue deduplicates a key added twice before it is taken", async () => {
  const { queue } = setup();
  queue.add("a");
  queue.add("b");
  queue.add("a");
  assert.equal(queue.len, 2);
  assert.equal(await queue.get(), "a");
  assert.equal(await queue.get(), "b");
  assert.equal(await peek(queue.get()), "pending");
  queue.shutDown();
});

Deno.test("queue hands keys out in the order they were first added", async () => {
  const { queue } = setup();
  const keys = Array.from({ length: 200 }, (_, i) => `k${i}`);
  for (const key of keys) queue.add(key);
  const taken: string[] = [];
  for (const _ of keys) {
    const key = (await queue.get())!;
    taken.push(key);
    queue.done(key);
  }
  assert.deepEqual(taken, keys);
});

Deno.test("queue never hands one key to two workers at once", async () => {
  const { queue } = setup();
  queue.add("a");
  const first = await queue.get();
  queue.add("a");
  assert.equal(queue.len, 0, "the re-added key waits for done");
  const second = queue.get();
  assert.equal(await peek(second), "pending");
  queue.add("b");
  assert.equal(await second, "b", "other keys still flow past the busy one");
  assert.equal(first, "a");
  queue.shutDown();
});

Deno.test("queue runs a key added while in flight exactly once more after done", async () => {
  const { queue } = setup();
  queue.add("a");
  const key = (await queue.get())!;
  queue.add("a");
  queue.add("a");
  queue.add("a");
  const waiting = queue.get();
  assert.equal(await peek(waiting), "pending");
  queue.done(key);
  assert.equal(await waiting, "a");
  queue.done("a");
  assert.equal(queue.len, 0);
  assert.equal(await peek(queue.get()), "pending");
  queue.shutDown();
});

Deno.test("queue done of a key that is not in flight is a RangeError", async () => {
  const { queue } = setup();
  assert.throws(() => queue.done("a"), /Cannot mark a done: it is not in flight/);
  queue.add("a");
  queue.done(await queue.get() as string);
  assert.throws(() => queue.done("a"), RangeError);
});

Deno.test("queue addAfter holds a key back until its time", async () => {
  const { clock, queue } = setup();
  queue.addAfter("a", 1000);
  assert.equal(queue.len, 0);
  await clock.advance(999);
  assert.equal(queue.len, 0);
  await clock.advance(1);
  assert.equal(queue.len, 1);
  assert.equal(await queue.get(), "a");
});

Deno.test("queue addAfter keeps the earlier time when a key is delayed twice", async () => {
  const { clock, queue } = setup();
  queue.addAfter("a", 1000);
  queue.addAfter("a", 100);
  queue.addAfter("b", 100);
  queue.addAfter("b", 1000);
  await clock.advance(100);
  assert.equal(queue.len, 2);
  queue.done((await queue.get())!);
  queue.done((await queue.get())!);
  await clock.advance(1000);
  assert.equal(queue.len, 0, "the later schedules were dropped");
});

Deno.test("queue addAfter of zero or less adds at once", () => {
  const { queue } = setup();
  queue.addAfter("a", 0);
  queue.addAfter("b", -5);
  assert.equal(queue.len, 2);
  assert.throws(() => queue.addAfter("c", NaN), RangeError);
});

Deno.test("queue delays thousands of keys with a single timer", async () => {
  const { clock, queue } = setup();
  for (let i = 0; i < 5000; i++) queue.addAfter(`k${i}`, 1000 + (i % 10) * 100);
  assert.equal(clock.pending, 1);
  queue.addAfter("early", 10);
  assert.equal(clock.pending, 1, "an earlier key replaces the timer instead of adding one");
  await clock.advance(10);
  assert.equal(queue.len, 1);
  await clock.advance(2000);
  assert.equal(queue.len, 5001);
  assert.equal(clock.pending, 0);
});

Deno.test("queue requeue-after of an in-flight key runs it after done and the delay", async () => {
  const { clock, queue } = setup();
  queue.add("a");
  const key = (await queue.get())!;
  queue.addAfter(key, 30_000);
  queue.done(key);
  await clock.advance(29_999);
  assert.equal(queue.len, 0);
  await clock.advance(1);
  assert.equal(await queue.get(), "a");
});

Deno.test("queue get rejects and leaves the line when its signal aborts", async () => {
  const { queue } = setup();
  const controller = new AbortController();
  const aborted = queue.get(controller.signal);
  const other = queue.get();
  controller.abort(new Error("worker stopping"));
  await assert.rejects(aborted, /worker stopping/);
  queue.add("a");
  assert.equal(await other, "a", "the key went to the worker still waiting");
});

Deno.test("queue shutDown releases waiting workers and ignores later adds", async () => {
  const { clock, queue } = setup();
  const waiting = queue.get();
  queue.addAfter("delayed", 100);
  assert.equal(queue.shuttingDown, false);
  queue.shutDown();
  assert.equal(queue.shuttingDown, true);
  assert.equal(await waiting, undefined);
  queue.add("a");
  await clock.advance(100);
  assert.equal(queue.len, 0);
  assert.equal(await queue.get(), undefined);
  assert.equal(clock.pending, 0, "the delay timer was cancelled");
});

Deno.test("queue reports adds, retries, queue and work durations and in-flight work", async () => {
  const clock = new FakeClock();
  const events: string[] = [];
  let probe: (() => QueueSnapshot) | undefined;
  const metrics: QueueMetrics = {
    added: () => events.push("added"),
    taken: (s) => events.push(`taken ${s}`),
    finished: (s) => events.push(`finished ${s}`),
    retried: () => events.push("retried"),
    track: (snapshot) => probe = snapshot,
  };
  const queue = new WorkQueue<string>({ clock, metrics });
  queue.add("a");
  queue.add("a");
  queue.add("b");
  assert.deepEqual(probe!(), { depth: 2, unfinishedSeconds: 0, longestRunningSeconds: 0 });
  await clock.advance(2000);
  await queue.get();
  await clock.advance(500);
  await queue.get();
  await clock.advance(1000);
  assert.deepEqual(probe!(), { depth: 0, unfinishedSeconds: 2.5, longestRunningSeconds: 1.5 });
  queue.done("a");
  queue.addAfter("c", 10);
  assert.deepEqual(events, [
    "added",
    "added",
    "taken 2",
    "taken 2.5",
    "finished 1.5",
    "retried",
  ]);
  queue.shutDown();
});

/** Takes `n` keys one at a time, marking each done, and returns them in order. */
async function drain(queue: WorkQueue<string>, n: number): Promise<string[]> {
  const taken: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = (await queue.get())!;
    taken.push(key);
    queue.done(key);
  }
  return taken;
}

Deno.test("queue hands a fresh key out before every backlog key added earlier", async () => {
  const { queue } = setup();
  for (let i = 0; i < 100; i++) queue.add(`old${i}`, { backlog: true });
  queue.add("edit");
  assert.equal(queue.len, 101);
  assert.deepEqual(await drain(queue, 3), ["edit", "old0", "old1"]);
  queue.shutDown();
});

Deno.test("queue serves the backlog one key in eight while fresh keys never stop", async () => {
  const { queue } = setup();
  for (let i = 0; i < 5; i++) queue.add(`old${i}`, { backlog: true });
  let fresh = 0;
  const taken: string[] = [];
  for (let i = 0; i < 5 * BACKLOG_SHARE; i++) {
    queue.add(`new${fresh++}`);
    queue.add(`new${fresh++}`);
    taken.push(...await drain(queue, 1));
  }
  const backlog = taken.flatMap((key, at) => key.startsWith("old") ? [at] : []);
  assert.deepEqual(
    backlog,
    [1, 2, 3, 4, 5].map((n) => n * BACKLOG_SHARE - 1),
    "every BACKLOG_SHARE-th key handed out came from the backlog, in order",
  );
  assert.deepEqual(taken.filter((k) => k.startsWith("old")), [
    "old0",
    "old1",
    "old2",
    "old3",
    "old4",
  ]);
  queue.shutDown();
});

Deno.test("a backlog key added fresh moves ahead; a fresh key added to the backlog stays fresh", async () => {
  const { queue } = setup();
  queue.add("a", { backlog: true });
  queue.add("b", { backlog: true });
  queue.add("c", { backlog: true });
  queue.add("c");
  queue.add("d");
  queue.add("d", { backlog: true });
  assert.equal(queue.len, 4, "moving lanes neither adds nor loses a key");
  assert.deepEqual(await drain(queue, 4), ["c", "d", "a", "b"]);
  assert.equal(queue.len, 0);
  assert.equal(await peek(queue.get()), "pending", "the stale backlog slot of c is not handed out");
  queue.shutDown();
});

Deno.test("a backlog key added fresh while in flight runs again ahead of the backlog", async () => {
  const { queue } = setup();
  queue.add("a", { backlog: true });
  const held = (await queue.get())!;
  queue.add("a", { backlog: true });
  queue.add("b", { backlog: true });
  queue.add("a");
  queue.done(held);
  assert.deepEqual(await drain(queue, 2), ["a", "b"]);
  queue.shutDown();
});

Deno.test("delayed adds join the backlog, behind fresh keys", async () => {
  const { clock, queue } = setup();
  queue.addAfter("requeued", 100);
  await clock.advance(100);
  queue.add("edit");
  assert.deepEqual(await drain(queue, 2), ["edit", "requeued"]);
  queue.addAfter("now", 0);
  queue.add("fresh");
  assert.deepEqual(await drain(queue, 2), ["fresh", "now"]);
  queue.shutDown();
});

Deno.test("relane sorts the waiting keys into lanes again, in the order they became dirty, and leaves keys in flight alone", async () => {
  const { clock, queue } = setup();
  for (const key of ["a", "b", "c", "d"]) {
    queue.add(key);
    await clock.advance(1);
  }
  const held = (await queue.get())!;
  queue.add(held);
  queue.relane((key) => key === "c");
  assert.equal(queue.len, 3);
  queue.done(held);
  assert.deepEqual(
    await drain(queue, 4),
    ["a", "c", "b", "d"],
    "a re-added in flight stays fresh; c missed, ahead of the backlog",
  );
  queue.shutDown();
});

Deno.test("missed keys go behind fresh keys and ahead of the backlog, and a waiting key only moves up", async () => {
  const { queue } = setup();
  queue.add("listed", { backlog: true });
  queue.add("edited-while-down", { missed: true });
  queue.add("listed-then-missed", { backlog: true });
  queue.add("listed-then-missed", { missed: true });
  queue.add("edit");
  queue.add("edit", { backlog: true });
  queue.add("edited-while-down", { backlog: true });
  assert.equal(queue.len, 4);
  assert.deepEqual(await drain(queue, 4), [
    "edit",
    "edited-while-down",
    "listed-then-missed",
    "listed",
  ]);
  queue.shutDown();
});

Deno.test("while fresh keys keep coming, every eighth key comes from the missed lane", async () => {
  const { queue } = setup();
  queue.add("missed", { missed: true });
  queue.add("listed", { backlog: true });
  for (let i = 0; i < 20; i++) queue.add(`edit-${i}`);
  const order = await drain(queue, 22);
  assert.equal(order.indexOf("missed"), 7);
  assert.equal(order.indexOf("listed"), 15);
  queue.shutDown();
});
