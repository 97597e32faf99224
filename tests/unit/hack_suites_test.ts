import assert from "node:assert/strict";
import { suiteReport } from "../../hack/suites.ts";
import { loadPlan } from "../../hack/under_load.ts";

Deno.test("the suite report names every suite and the failed ones again in its verdict", () => {
  const report = suiteReport([
    { task: "check", code: 0, ms: 60_000 },
    { task: "test:cluster", code: 1, ms: 1_080_000 },
    { task: "test:kine", code: 0, ms: 660_000 },
  ]);
  assert.match(report, /check\s+passed\s+1\.0 min/);
  assert.match(report, /test:cluster\s+FAILED \(exit 1\)\s+18\.0 min/);
  assert.match(report, /test:kine\s+passed\s+11\.0 min/);
  assert.match(report, /1 of 3 suites failed: test:cluster$/);
});

Deno.test("the suite report says all passed with the total time when none failed", () => {
  const report = suiteReport([{ task: "check", code: 0, ms: 30_000 }, {
    task: "test:unit",
    code: 0,
    ms: 90_000,
  }]);
  assert.match(report, /all 2 suites passed in 2\.0 min$/);
});

Deno.test("the load plan runs ten times beside one busy thread per core by default", () => {
  assert.deepEqual(loadPlan(["tests/a_test.ts"], 2), {
    runs: 10,
    threads: 2,
    files: ["tests/a_test.ts"],
  });
  assert.deepEqual(loadPlan(["--runs", "3", "--load", "0", "a.ts", "b.ts"], 2), {
    runs: 3,
    threads: 0,
    files: ["a.ts", "b.ts"],
  });
});

Deno.test("the load plan refuses a run count that is not a whole number and a missing file", () => {
  assert.throws(() => loadPlan(["--runs", "0", "a.ts"], 2), /--runs: .* got 0/);
  assert.throws(() => loadPlan(["--load", "x", "a.ts"], 2), /--load: .* got x/);
  assert.throws(() => loadPlan([], 2), /name the test files/);
});
