import assert from "node:assert/strict";
import { setStandardConditions } from "../../lib/operators/conditions.ts";
import { FakeClock } from "../../lib/async/mod.ts";
import {
  type Condition,
  findCondition,
  isConditionTrue,
  setCondition,
} from "../../lib/runtime/objects/mod.ts";

const T0 = new Date("2025-03-01T10:00:00.123Z");
const T1 = new Date("2025-03-01T10:05:00Z");
const T2 = new Date("2025-03-01T10:09:30Z");

Deno.test("setCondition appends a new type with lastTransitionTime at second precision", () => {
  const conditions = setCondition(undefined, {
    type: "Ready",
    status: "False",
    reason: "Creating",
    message: "Waiting for the Deployment to exist",
    observedGeneration: 1,
  }, T0);
  assert.deepEqual(conditions, [{
    type: "Ready",
    status: "False",
    observedGeneration: 1,
    lastTransitionTime: "2025-03-01T10:00:00Z",
    reason: "Creating",
    message: "Waiting for the Deployment to exist",
  }]);
});

Deno.test("setCondition keeps lastTransitionTime while the status stays the same", () => {
  const first = setCondition([], { type: "Ready", status: "False", reason: "A", message: "a" }, T0);
  const second = setCondition(
    first,
    { type: "Ready", status: "False", reason: "B", message: "b" },
    T1,
  );
  assert.equal(second[0]!.lastTransitionTime, "2025-03-01T10:00:00Z");
  assert.equal(second[0]!.reason, "B");
  assert.equal(second[0]!.message, "b");
});

Deno.test("setCondition moves lastTransitionTime when the status changes", () => {
  let conditions = setCondition(
    [],
    { type: "Ready", status: "False", reason: "A", message: "" },
    T0,
  );
  conditions = setCondition(
    conditions,
    { type: "Ready", status: "True", reason: "B", message: "" },
    T1,
  );
  assert.equal(conditions[0]!.lastTransitionTime, "2025-03-01T10:05:00Z");
  conditions = setCondition(
    conditions,
    { type: "Ready", status: "True", reason: "C", message: "" },
    T2,
  );
  assert.equal(conditions[0]!.lastTransitionTime, "2025-03-01T10:05:00Z");
});

Deno.test("setCondition replaces in place, keeps other types and does not mutate its input", () => {
  const input: Condition[] = [
    {
      type: "Ready",
      status: "True",
      lastTransitionTime: "2025-01-01T00:00:00Z",
      reason: "A",
      message: "",
    },
    {
      type: "Degraded",
      status: "False",
      lastTransitionTime: "2025-01-01T00:00:00Z",
      reason: "A",
      message: "",
    },
  ];
  const snapshot = structuredClone(input);
  const output = setCondition(input, {
    type: "Ready",
    status: "False",
    reason: "Lost",
    message: "",
  }, T1);
  assert.deepEqual(input, snapshot);
  assert.deepEqual(output.map((c) => c.type), ["Ready", "Degraded"]);
  assert.equal(output[1], input[1]);
  assert.equal(output[0]!.status, "False");
});

Deno.test("setCondition rejects reasons and types the API server would refuse", () => {
  assert.throws(
    () => setCondition([], { type: "Ready", status: "True", reason: "not ready", message: "" }, T0),
    { name: "TypeError", message: /reason must be CamelCase .* got "not ready"/ },
  );
  assert.throws(
    () => setCondition([], { type: "ready now", status: "True", reason: "A", message: "" }, T0),
    { name: "TypeError", message: /type must be CamelCase/ },
  );
  assert.throws(
    () => setCondition([], { type: "A".repeat(317), status: "True", reason: "A", message: "" }),
    { name: "TypeError", message: /type must be .* at most 316 characters/ },
  );
  assert.throws(
    () =>
      setCondition([], { type: "Ready", status: "True", reason: "A".repeat(1025), message: "" }),
    { name: "TypeError", message: /reason must be .* at most 1024 characters/ },
  );
  assert.throws(
    () =>
      setCondition([], { type: "Ready", status: "True", reason: "A", message: "" }, new Date(NaN)),
    { name: "TypeError", message: /'at' must read a valid time, got NaN/ },
  );
});

Deno.test("setCondition reads a transition's time from the clock it is given", async () => {
  const clock = new FakeClock(Date.UTC(2025, 2, 1, 10));
  const first = setCondition(
    [],
    { type: "Ready", status: "False", reason: "A", message: "" },
    clock,
  );
  await clock.advance(90_000);
  const held = setCondition(
    first,
    { type: "Ready", status: "False", reason: "B", message: "" },
    clock,
  );
  const moved = setCondition(
    held,
    { type: "Ready", status: "True", reason: "C", message: "" },
    clock,
  );
  assert.equal(first[0]?.lastTransitionTime, "2025-03-01T10:00:00Z");
  assert.equal(held[0]?.lastTransitionTime, "2025-03-01T10:00:00Z");
  assert.equal(moved[0]?.lastTransitionTime, "2025-03-01T10:01:30Z");
});

Deno.test("setCondition without a time reads the system clock", () => {
  const before = Math.floor(Date.now() / 1000) * 1000;
  const [ready] = setCondition([], { type: "Ready", status: "True", reason: "A", message: "" });
  const at = Date.parse(ready!.lastTransitionTime);
  assert.ok(at >= before && at <= Date.now(), ready!.lastTransitionTime);
});

Deno.test("findCondition and isConditionTrue look conditions up by type", () => {
  const conditions = setCondition(
    [],
    { type: "Ready", status: "True", reason: "A", message: "" },
    T0,
  );
  assert.equal(findCondition(conditions, "Ready")?.reason, "A");
  assert.equal(findCondition(conditions, "Degraded"), undefined);
  assert.equal(isConditionTrue(conditions, "Ready"), true);
  assert.equal(isConditionTrue(conditions, "Degraded"), false);
});

Deno.test("setStandardConditions maps each health to the four condition statuses", () => {
  const statuses = (health: Parameters<typeof setStandardConditions>[1]["health"]) => {
    const conditions = setStandardConditions(undefined, { health, reason: "R", message: "m" }, T0);
    return Object.fromEntries(conditions.map((c) => [c.type, c.status]));
  };
  const row = (ready: string, progressing: string, degraded: string, invalid?: string) => ({
    Ready: ready,
    Progressing: progressing,
    Degraded: degraded,
    ...(invalid ? { InvalidSpec: invalid } : {}),
  });
  assert.deepEqual(statuses("Ready"), row("True", "False", "False", "False"));
  assert.deepEqual(statuses("Progressing"), row("False", "True", "False", "False"));
  assert.deepEqual(statuses("Degraded"), row("False", "False", "True", "False"));
  assert.deepEqual(statuses("Invalid"), row("False", "False", "False", "True"));
  assert.deepEqual(statuses("Terminating"), row("False", "True", "False"));
});

Deno.test("setStandardConditions shares reason, message and generation, and marks valid specs", () => {
  const conditions = setStandardConditions(undefined, {
    health: "Degraded",
    reason: "ReplicasUnavailable",
    message: "1 of 3 replicas available",
    observedGeneration: 7,
  }, T0);
  for (const type of ["Ready", "Progressing", "Degraded"]) {
    const condition = findCondition(conditions, type)!;
    assert.equal(condition.reason, "ReplicasUnavailable");
    assert.equal(condition.message, "1 of 3 replicas available");
    assert.equal(condition.observedGeneration, 7);
  }
  assert.equal(findCondition(conditions, "InvalidSpec")?.reason, "SpecValid");
});

Deno.test("setStandardConditions keeps transition times of conditions whose status holds", () => {
  const before = setStandardConditions(undefined, {
    health: "Ready",
    reason: "Available",
    message: "",
  }, T0);
  const after = setStandardConditions(
    before,
    { health: "Degraded", reason: "Lost", message: "" },
    T1,
  );
  assert.equal(findCondition(after, "Ready")!.lastTransitionTime, "2025-03-01T10:05:00Z");
  assert.equal(findCondition(after, "Degraded")!.lastTransitionTime, "2025-03-01T10:05:00Z");
  assert.equal(findCondition(after, "Progressing")!.lastTransitionTime, "2025-03-01T10:00:00Z");
  assert.equal(findCondition(after, "InvalidSpec")!.lastTransitionTime, "2025-03-01T10:00:00Z");
});
