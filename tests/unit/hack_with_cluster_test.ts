import assert from "node:assert/strict";
import { failureSummary } from "../../hack/with_cluster.ts";

Deno.test("with_cluster repeats deno test's errors and failures without colours", () => {
  const output = [
    "watch resumes ... \x1b[31mFAILED\x1b[0m (2s)",
    "",
    "\x1b[1m\x1b[37m\x1b[41m ERRORS \x1b[0m",
    "",
    "watch resumes => ./tests/integration/watcher_test.ts:40:6",
    "error: AssertionError: expected 1 list, got 2",
    "",
    "\x1b[1m\x1b[37m\x1b[41m FAILURES \x1b[0m",
    "",
    "watch resumes => ./tests/integration/watcher_test.ts:40:6",
    "",
    "\x1b[31mFAILED\x1b[0m | 10 passed | 1 failed (3m)",
  ].join("\n");
  const summary = failureSummary(output);
  assert.ok(summary?.startsWith(" ERRORS "), String(summary));
  assert.match(summary!, /error: AssertionError: expected 1 list, got 2/);
  assert.match(summary!, /FAILED \| 10 passed \| 1 failed/);
  assert.ok(!summary!.includes("\x1b"), "colour codes remain");
});

Deno.test("with_cluster has no summary to repeat when the output holds no test report", () => {
  assert.equal(failureSummary("cannot connect\n"), undefined);
});
