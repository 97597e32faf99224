import assert from "node:assert/strict";
import { DelayHeap } from "../../lib/async/delay_heap.ts";

Deno.test("the delay heap hands keys out by due time, ties in scheduling order", () => {
  const heap = new DelayHeap<string>();
  heap.schedule("c", 30);
  heap.schedule("a", 10);
  heap.schedule("b", 10);
  heap.schedule("d", 40);
  assert.equal(heap.nextAt, 10);
  assert.deepEqual(heap.popDue(30), ["a", "b", "c"]);
  assert.deepEqual(heap.popDue(39), []);
  assert.equal(heap.size, 1);
});

Deno.test("popDue hands out at most max keys and leaves the rest in their order", () => {
  const heap = new DelayHeap<string>();
  for (const key of ["a", "b", "c"]) heap.schedule(key, 10);
  assert.deepEqual(heap.popDue(10, 1), ["a"]);
  heap.schedule("d", 10);
  assert.deepEqual(heap.popDue(10, 2), ["b", "c"]);
  assert.deepEqual(heap.popDue(10), ["d"]);
});

Deno.test("a key scheduled twice keeps the earlier time and one slot", () => {
  const heap = new DelayHeap<string>();
  heap.schedule("a", 50);
  heap.schedule("b", 20);
  heap.schedule("a", 10);
  heap.schedule("b", 90);
  assert.equal(heap.size, 2);
  assert.deepEqual(heap.popDue(100), ["a", "b"]);
  assert.equal(heap.nextAt, undefined);
});

Deno.test("thousands of random reschedules come out as a sort of each key's earliest time", () => {
  let seed = 7;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const heap = new DelayHeap<number>();
  const earliest = new Map<number, number>();
  for (let i = 0; i < 20_000; i++) {
    const key = Math.floor(random() * 5_000);
    const at = Math.floor(random() * 300_000);
    heap.schedule(key, at);
    earliest.set(key, Math.min(earliest.get(key) ?? Infinity, at));
  }
  const expected = [...earliest].sort((x, y) => x[1] - y[1]).map(([, at]) => at);
  const out: number[] = [];
  for (let now = 0; now <= 300_000; now += 1_000) {
    for (const key of heap.popDue(now)) out.push(earliest.get(key)!);
  }
  assert.deepEqual(out, expected);
  assert.equal(heap.size, 0);
});

Deno.test("clear empties the heap and forgets every key", () => {
  const heap = new DelayHeap<string>();
  heap.schedule("a", 10);
  heap.clear();
  heap.schedule("a", 50);
  assert.deepEqual(heap.popDue(20), []);
  assert.deepEqual(heap.popDue(50), ["a"]);
});

Deno.test("a deleted key leaves the heap in order, and deleting an absent key says so", () => {
  const heap = new DelayHeap<string>();
  for (const [key, at] of [["a", 10], ["b", 20], ["c", 30], ["d", 40], ["e", 50]] as const) {
    heap.schedule(key, at);
  }
  assert.equal(heap.delete("a"), true);
  assert.equal(heap.delete("d"), true);
  assert.equal(heap.delete("d"), false);
  assert.equal(heap.delete("z"), false);
  assert.equal(heap.size, 3);
  assert.equal(heap.nextAt, 20);
  heap.schedule("a", 5);
  assert.deepEqual(heap.popDue(100), ["a", "b", "c", "e"]);
});
