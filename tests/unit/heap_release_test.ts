/** HeapRelease: when V8's heap is worth a full collection. */
import assert from "node:assert/strict";
import { FakeClock } from "../../lib/async/clock.ts";
import { HeapRelease } from "../../lib/runtime/scheduling/heap_release.ts";

const MiB = 2 ** 20;

/** A heap whose size the test sets, and whose collection brings it to `afterCollection`. */
function harness(minGrowthBytes?: number) {
  const state = { heap: 14 * MiB, afterCollection: 15 * MiB, idle: true, collections: 0 };
  const release = new HeapRelease({
    heapBytes: () => state.heap,
    idle: () => state.idle,
    collect: () => {
      state.collections++;
      state.heap = state.afterCollection;
    },
    ...(minGrowthBytes === undefined ? {} : { minGrowthBytes }),
  });
  return { state, release };
}

Deno.test("heap release collects start-up's garbage once kinglet is first idle", () => {
  const { state, release } = harness();
  state.idle = false;
  assert.equal(release.check(), false, "reconciles still queued or running");
  assert.equal(state.collections, 0);
  state.idle = true;
  assert.equal(release.check(), true);
  assert.equal(state.heap, 15 * MiB);
  assert.equal(release.check(), false, "the heap has not grown since");
  assert.equal(state.collections, 1);
});

Deno.test("heap release collects once the heap grew by 2 MiB and kinglet is idle", () => {
  const { state, release } = harness();
  assert.equal(release.check(), true, "start-up's collection");
  state.heap = 16.5 * MiB;
  assert.equal(release.check(), false, "1.5 MiB of growth");
  state.heap = 28 * MiB;
  state.idle = false;
  assert.equal(release.check(), false, "reconciles still queued or running");
  state.idle = true;
  assert.equal(release.check(), true);
  assert.equal(state.heap, 15 * MiB);
  assert.equal(release.check(), false, "the level is the heap after the collection");
  assert.equal(state.collections, 2);
});

Deno.test("heap release measures growth from the heap's smallest size since the last collection", () => {
  const { state, release } = harness(MiB);
  state.heap = 20 * MiB;
  state.afterCollection = 20 * MiB;
  assert.equal(release.check(), true, "start-up's collection");
  state.heap = 12 * MiB;
  assert.equal(release.check(), false, "V8 shrank the heap by itself");
  state.heap = 13.5 * MiB;
  assert.equal(release.check(), true, "1.5 MiB above the smallest");
  assert.equal(state.collections, 2);
});

Deno.test("heap release refuses a minGrowthBytes that is not positive", () => {
  assert.throws(
    () => new HeapRelease({ heapBytes: () => 0, idle: () => true, minGrowthBytes: 0 }),
    /'minGrowthBytes' must be positive, got 0/,
  );
});

Deno.test("heap release checks every five seconds while it runs, and stops with its signal", async () => {
  const clock = new FakeClock();
  let checks = 0;
  const release = new HeapRelease({
    heapBytes: () => {
      checks++;
      return 14 * MiB;
    },
    idle: () => false,
    collect: () => {},
    clock,
  });
  const stop = new AbortController();
  const running = release.run(stop.signal);
  await clock.advance(4_999);
  assert.equal(checks, 0);
  await clock.advance(1);
  assert.equal(checks, 1);
  await clock.advance(10_000);
  assert.equal(checks, 3);
  stop.abort();
  await running;
  assert.equal(clock.pending, 0);
});
