import assert from "node:assert/strict";
import { aborted, RunGroup, type Runnable, runnable } from "../../lib/runtime/manager/runnable.ts";

/** A runnable that logs its start and, once stopped, its stop; the stop waits a turn to show order. */
function logged(name: string, log: string[]): Runnable {
  return runnable(name, false, async (signal) => {
    log.push(`start ${name}`);
    await aborted(signal);
    await new Promise((resolve) => setTimeout(resolve, 0));
    log.push(`stop ${name}`);
  });
}

Deno.test("a run group starts in order and stops in reverse, each once the one after it stopped", async () => {
  const log: string[] = [];
  const group = new RunGroup((error) => assert.fail(`no failure expected: ${error}`));
  const started = await group.start(
    ["endpoints", "caches", "controllers"].map((name) => logged(name, log)),
    new AbortController().signal,
  );
  assert.equal(started, true);
  await group.stop();
  assert.deepEqual(log, [
    "start endpoints",
    "start caches",
    "start controllers",
    "stop controllers",
    "stop caches",
    "stop endpoints",
  ]);
});

Deno.test("a run group stops starting at a start that fails, and reports what it failed with", async () => {
  const log: string[] = [];
  const failures: unknown[] = [];
  const group = new RunGroup((error) => failures.push(error));
  const broken: Runnable = {
    name: "crds",
    leaderElected: false,
    start: () => Promise.reject(new Error("the CRD was never served")),
  };
  const started = await group.start(
    [logged("endpoints", log), broken, logged("caches", log)],
    new AbortController().signal,
  );
  assert.equal(started, false);
  assert.deepEqual(failures.map((e) => (e as Error).message), ["the CRD was never served"]);
  await group.stop();
  assert.deepEqual(log, ["start endpoints", "stop endpoints"], "nothing after the failure started");
});

Deno.test("a run group reports a runnable that fails while it runs", async () => {
  const failures: unknown[] = [];
  const group = new RunGroup((error) => failures.push(error));
  const failing = runnable("caches", false, () => Promise.reject(new Error("watch denied")));
  assert.equal(await group.start([failing], new AbortController().signal), true);
  await group.stop();
  assert.deepEqual(failures.map((e) => (e as Error).message), ["watch denied"]);
});

Deno.test("a start cut short by its signal is no failure: the group is stopping", async () => {
  const failures: unknown[] = [];
  const group = new RunGroup((error) => failures.push(error));
  const stop = new AbortController();
  const waiting: Runnable = {
    name: "crds",
    leaderElected: false,
    start: async (signal) => {
      await aborted(signal);
      throw signal.reason;
    },
  };
  const starting = group.start([waiting], stop.signal);
  stop.abort(new Error("shutting down"));
  assert.equal(await starting, false);
  assert.deepEqual(failures, []);
  await group.stop();
});
