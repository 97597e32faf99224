import assert from "node:assert/strict";
import { FakeClock } from "../../lib/async/clock.ts";
import { resetLogging, setupLogging } from "../../lib/log.ts";
import { MemoryGovernor } from "../../lib/runtime/memory/governor.ts";
import { memoryPlan, nextLevel } from "../../lib/runtime/memory/plan.ts";
import { RuntimeMetrics } from "../../lib/runtime/metrics/metrics.ts";

const MiB = 2 ** 20;
const LIMIT = 100 * MiB;

/** A governor over an RSS and V8 heap the test sets, recording every action in order. */
function governed(options: { collectIntervalMs?: number } = {}) {
  const clock = new FakeClock();
  const state = { rss: 50 * MiB, heap: 10 * MiB };
  const actions: string[] = [];
  const governor = new MemoryGovernor({
    limitBytes: LIMIT,
    rss: () => state.rss,
    heapBytes: () => state.heap,
    clock,
    actions: {
      cacheBytes: (bytes) => actions.push(`cache ${bytes / MiB}`),
      concurrency: (permits) => actions.push(`concurrency ${permits}`),
      collect: () => actions.push("collect"),
    },
    ...options,
  });
  const at = (mib: number) => {
    state.rss = mib * MiB;
    return governor.sample();
  };
  return { clock, governor, actions, at, state };
}

function captureLogs(): { lines: { level: string; message: string }[]; [Symbol.dispose](): void } {
  const lines: { level: string; message: string }[] = [];
  setupLogging({
    format: "json",
    level: "debug",
    write: (line) => lines.push(JSON.parse(line)),
  });
  return { lines, [Symbol.dispose]: resetLogging };
}

Deno.test("memory plan sizes caches, concurrency and pages from the limit", () => {
  const small = memoryPlan(64 * MiB, 8);
  assert.deepEqual(small.cacheBytes, { normal: 8 * MiB, evict: 2 * MiB, slow: 1 * MiB });
  assert.deepEqual(small.concurrency, { normal: 8, evict: 8, slow: 2 });
  assert.equal(small.pageSize, 256);
  assert.equal(small.eventsTracked, 1_024, "one Event series per 64 KiB of the limit");
  assert.equal(memoryPlan(8 * MiB).eventsTracked, 256, "never fewer than 256");
  assert.equal(memoryPlan(2 ** 30).eventsTracked, 4_096, "never more than client-go's 4,096");
  const tiny = memoryPlan(24 * MiB, 8);
  assert.deepEqual(tiny.concurrency, { normal: 3, evict: 3, slow: 1 }, "one reconcile per 8 MiB");
  assert.equal(tiny.pageSize, 96);
  assert.equal(memoryPlan(8 * MiB).pageSize, 50, "pages never fall below 50 objects");
  assert.equal(memoryPlan(4 * 2 ** 30, 4).pageSize, 500, "nor rise above the watcher's 500");
  assert.equal(memoryPlan(4 * 2 ** 30, 4).concurrency.normal, 4, "the configured max stands");
  assert.throws(() => memoryPlan(0), /'limitBytes' must be a positive integer, got 0/);
  assert.throws(() => memoryPlan(MiB, 0), /'maxConcurrentReconciles' must be a positive integer/);
});

Deno.test("memory levels move one step a sample, with ten points between entering and leaving", () => {
  assert.equal(nextLevel("normal", 0.79), "normal");
  assert.equal(nextLevel("normal", 0.8), "evict");
  assert.equal(nextLevel("normal", 0.99), "evict", "a jump still evicts before it slows");
  assert.equal(nextLevel("evict", 0.9), "slow");
  assert.equal(nextLevel("evict", 0.7), "evict", "leaving evict needs RSS below 70%");
  assert.equal(nextLevel("evict", 0.69), "normal");
  assert.equal(nextLevel("slow", 0.8), "slow", "leaving slow needs RSS below 80%");
  assert.equal(nextLevel("slow", 0.1), "evict", "one step down a sample");
  assert.equal(nextLevel("slow", 1.5), "slow");
});

Deno.test("memory governor evicts before it slows down, and relaxes in the reverse order", () => {
  const { governor, actions, at } = governed();
  assert.equal(at(60), "normal");
  assert.deepEqual(actions, [], "a sample that changes nothing does nothing");
  assert.equal(at(95), "evict");
  assert.deepEqual(actions, ["cache 3.125", "concurrency 8", "collect"]);
  actions.length = 0;
  assert.equal(at(95), "slow");
  assert.deepEqual(actions, ["cache 1.5625", "concurrency 2", "collect"]);
  actions.length = 0;
  assert.equal(at(85), "slow", "inside the hysteresis band nothing changes");
  assert.equal(at(75), "evict");
  assert.equal(at(72), "evict");
  assert.equal(at(60), "normal");
  assert.deepEqual(actions, ["cache 3.125", "concurrency 8", "cache 12.5", "concurrency 8"]);
  assert.deepEqual(governor.stats(), {
    limitBytes: LIMIT,
    level: "normal",
    rssBytes: 60 * MiB,
    transitions: { normal: 1, evict: 2, slow: 1 },
  });
});

Deno.test("memory governor collects on entering pressure, then at most once per interval", async () => {
  const { clock, actions, at } = governed({ collectIntervalMs: 10_000 });
  at(85);
  at(85);
  await clock.advance(9_999);
  at(85);
  assert.deepEqual(actions.filter((a) => a === "collect").length, 1);
  await clock.advance(1);
  at(85);
  assert.deepEqual(actions.filter((a) => a === "collect").length, 2);
  at(95);
  assert.deepEqual(actions.filter((a) => a === "collect").length, 3, "a step up collects at once");
  at(75);
  at(60);
  at(85);
  assert.deepEqual(
    actions.filter((a) => a === "collect").length,
    4,
    "pressure that returns collects",
  );
});

Deno.test("memory governor under pressure collects as soon as the heap has grown by a thirty-second of the limit", async () => {
  const { clock, actions, at, state } = governed({ collectIntervalMs: 10_000 });
  const collections = () => actions.filter((a) => a === "collect").length;
  at(85);
  assert.equal(collections(), 1, "entering pressure collects");
  state.heap += 3 * MiB; // under LIMIT / 32 = 3.125 MiB
  await clock.advance(1_000);
  at(85);
  assert.equal(collections(), 1, "3 MiB of growth waits for the interval");
  state.heap += 0.25 * MiB;
  await clock.advance(1_000);
  at(85);
  assert.equal(collections(), 2, "3.25 MiB of growth collects before the interval");
  state.heap -= 2 * MiB; // what the collection gave back
  await clock.advance(1_000);
  at(85);
  assert.equal(collections(), 2, "growth counts from the heap the collection left");
  state.heap += 40 * MiB;
  at(60);
  assert.equal(collections(), 2, "no pressure, no collection, however the heap grew");
  assert.throws(
    () =>
      new MemoryGovernor({
        limitBytes: LIMIT,
        collectGrowthBytes: 0,
        actions: { cacheBytes() {}, concurrency() {}, collect() {} },
      }),
    /'collectGrowthBytes' must be positive/,
  );
});

Deno.test("memory governor logs exactly one line per transition and none per sample", () => {
  using logs = captureLogs();
  const { at } = governed();
  for (const mib of [50, 60, 85, 86, 87, 95, 96, 85, 75, 74, 60, 50]) at(mib);
  assert.deepEqual(
    logs.lines.map((l) => [l.level, l.message.split(":")[0]]),
    [
      ["WARN", 'memory pressure "normal" → "evict"'],
      ["WARN", 'memory pressure "evict" → "slow"'],
      ["INFO", 'memory pressure "slow" → "evict"'],
      ["INFO", 'memory pressure "evict" → "normal"'],
    ],
  );
  assert.match(
    logs.lines[1]!.message,
    /RSS 95 MiB of the 100 MiB limit \(95%\); caches now keep 1\.6 MiB of full objects together, 2 reconciles at once/,
  );
});

Deno.test("memory governor samples on its clock until stopped", async () => {
  const { clock, governor, actions } = governed();
  const stop = new AbortController();
  const running = governor.run(stop.signal);
  assert.equal(governor.stats().rssBytes, 0, "no sample before the first interval");
  await clock.advance(1000);
  assert.equal(governor.stats().rssBytes, 50 * MiB);
  stop.abort();
  await running;
  assert.deepEqual(actions, []);
  assert.throws(
    () => new MemoryGovernor({ limitBytes: LIMIT, actions: null!, intervalMs: 0 }),
    /'intervalMs' must be positive, got 0/,
  );
});

Deno.test("memory metrics show the limit, the level and the moves into each level", () => {
  const metrics = new RuntimeMetrics({ processStats: () => ({ residentBytes: 1, cpuSeconds: 0 }) });
  assert.doesNotMatch(metrics.render(), /kinglet_memory/, "no series without a limit");
  const { governor, at } = governed();
  metrics.trackMemory(() => governor.stats());
  at(85);
  at(95);
  const text = metrics.render();
  assert.equal(Number(/^kinglet_memory_limit_bytes (\S+)$/m.exec(text)?.[1]), LIMIT);
  assert.match(text, /^kinglet_memory_pressure 2$/m);
  assert.match(text, /^kinglet_memory_pressure_transitions_total\{level="evict"\} 1$/m);
  assert.match(text, /^kinglet_memory_pressure_transitions_total\{level="slow"\} 1$/m);
  assert.match(text, /^kinglet_memory_pressure_transitions_total\{level="normal"\} 0$/m);
});
