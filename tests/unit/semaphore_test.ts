import assert from "node:assert/strict";
import { type Permit, Semaphore } from "../../lib/async/semaphore.ts";
import { flushMicrotasks } from "../../lib/async/clock.ts";

Deno.test("semaphore grants permits up to its size and then makes callers wait", async () => {
  const sem = new Semaphore(2);
  await sem.acquire();
  await sem.acquire();
  assert.equal(sem.available, 0);
  let granted = false;
  sem.acquire().then(() => granted = true);
  await flushMicrotasks();
  assert.equal(granted, false);
  assert.equal(sem.waiting, 1);
});

Deno.test("semaphore serves waiters first come, first served", async () => {
  const sem = new Semaphore(1);
  const held = await sem.acquire();
  const order: string[] = [];
  const waiters = ["a", "b", "c"].map((name) =>
    sem.acquire().then((permit) => {
      order.push(name);
      return permit;
    })
  );
  held.release();
  for (const waiter of waiters) (await waiter).release();
  assert.deepEqual(order, ["a", "b", "c"]);
  assert.equal(sem.available, 1);
});

Deno.test("semaphore hands a released permit to the next waiter rather than to tryAcquire", async () => {
  const sem = new Semaphore(1);
  const held = await sem.acquire();
  const next = sem.acquire();
  held.release();
  assert.equal(sem.tryAcquire(), undefined);
  (await next).release();
  assert.notEqual(sem.tryAcquire(), undefined);
});

Deno.test("semaphore permit is released when a using block throws", async () => {
  const sem = new Semaphore(1);
  async function failingReconcile() {
    using _permit = await sem.acquire();
    assert.equal(sem.available, 0);
    throw new Error("reconcile failed");
  }
  await assert.rejects(failingReconcile(), /reconcile failed/);
  assert.equal(sem.available, 1);
});

Deno.test("semaphore release is idempotent", async () => {
  const sem = new Semaphore(2);
  const permit = await sem.acquire();
  permit.release();
  permit.release();
  permit[Symbol.dispose]();
  assert.equal(sem.available, 2);
});

Deno.test("semaphore abort removes a waiter without taking a permit", async () => {
  const sem = new Semaphore(1);
  const held = await sem.acquire();
  const controller = new AbortController();
  const aborted = sem.acquire(controller.signal);
  const later = sem.acquire();
  controller.abort(new Error("gave up"));
  await assert.rejects(aborted, /gave up/);
  assert.equal(sem.waiting, 1);
  held.release();
  const permit: Permit = await later;
  assert.equal(sem.available, 0);
  permit.release();
  assert.equal(sem.available, 1);
});

Deno.test("semaphore acquire with an already aborted signal rejects at once", async () => {
  const sem = new Semaphore(1);
  await assert.rejects(sem.acquire(AbortSignal.abort(new Error("stopped"))), /stopped/);
  assert.equal(sem.available, 1);
});

Deno.test("semaphore rejects a size that is not a positive integer", () => {
  for (const bad of [0, -1, 1.5, NaN, Infinity]) {
    assert.throws(() => new Semaphore(bad), RangeError);
  }
  assert.throws(() => new Semaphore(0), /'permits' must be a positive integer, got 0/);
});

Deno.test("semaphore shrunk below the permits held serves nobody until enough come back", async () => {
  const sem = new Semaphore(3);
  const held = [await sem.acquire(), await sem.acquire(), await sem.acquire()];
  sem.resize(1);
  assert.equal(sem.limit, 1);
  let granted = false;
  sem.acquire().then(() => granted = true);
  held[0]!.release();
  held[1]!.release();
  await flushMicrotasks();
  assert.equal(granted, false, "the one permit still out fills the new limit");
  assert.equal(sem.available, 0);
  held[2]!.release();
  await flushMicrotasks();
  assert.equal(granted, true);
  assert.equal(sem.tryAcquire(), undefined);
});

Deno.test("semaphore grown serves its waiters at once, in order", async () => {
  const sem = new Semaphore(1);
  await sem.acquire();
  const order: number[] = [];
  for (const n of [1, 2, 3]) sem.acquire().then(() => order.push(n));
  sem.resize(3);
  await flushMicrotasks();
  assert.deepEqual(order, [1, 2]);
  assert.equal(sem.waiting, 1);
  assert.throws(() => sem.resize(0), /'permits' must be a positive integer, got 0/);
});
