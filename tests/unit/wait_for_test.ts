import assert from "node:assert/strict";
import { waitFor } from "../../lib/testing/mod.ts";

Deno.test("waitFor resolves to the first value its check returns", async () => {
  let calls = 0;
  const found = await waitFor("the third call", () => ++calls === 3 && `call ${calls}`, {
    intervalMs: 1,
  });
  assert.equal(found, "call 3");
});

Deno.test("waitFor fails with what it waited for and what the last check saw", async () => {
  await assert.rejects(
    waitFor("the answer", () => Promise.reject(new Error("no route to host")), {
      timeoutMs: 20,
      intervalMs: 5,
    }),
    {
      message:
        "Timed out after 20 ms waiting for the answer; the last check threw no route to host",
    },
  );
});

Deno.test("waitFor stops when its signal aborts", async () => {
  const stop = new AbortController();
  const waiting = waitFor("never", () => false, { signal: stop.signal, intervalMs: 5 });
  stop.abort(new Error("test over"));
  await assert.rejects(waiting, { message: "test over" });
});

Deno.test("waitFor refuses a timeout that is not positive", async () => {
  await assert.rejects(
    waitFor("anything", () => true, { timeoutMs: 0 }),
    {
      name: "RangeError",
      message: "Cannot wait for anything: 'timeoutMs' must be positive, got 0",
    },
  );
});
