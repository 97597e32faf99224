import assert from "node:assert/strict";
import { isShared, sharedObject, sharedString } from "../../lib/runtime/cache/shared_values.ts";
import { estimateBytes } from "../../lib/runtime/cache/estimate_bytes.ts";

Deno.test("sharedString gives equal short strings one copy and leaves long ones alone", () => {
  const a = sharedString(["apps", "v1"].join("/"));
  assert.equal(sharedString(`apps/${"v1"}`), a);
  assert.equal(isShared("apps/v1"), true);
  const long = "x".repeat(65);
  assert.equal(sharedString(long), long);
  assert.equal(isShared(long), false);
  assert.equal(sharedString(undefined), undefined);
});

Deno.test("sharedObject gives equal values one deeply frozen copy", () => {
  const status = () => ({ replicas: 2, conditions: [{ type: "Progressing", status: "True" }] });
  const first = sharedObject(status());
  const second = sharedObject(status());
  assert.equal(second, first);
  assert.deepEqual(first, status());
  assert.ok(Object.isFrozen(first) && Object.isFrozen(first.conditions));
  assert.ok(Object.isFrozen(first.conditions[0]));
  assert.throws(() => {
    (first as { replicas: number }).replicas = 3;
  }, TypeError);
  assert.ok(isShared(first) && isShared(first.conditions[0]));
  assert.equal(isShared(status()), false, "an equal object not passed through is not shared");
});

Deno.test("sharedObject does not share values JSON would confuse with others", () => {
  for (const value of [{ replicas: undefined }, { n: NaN }, { list: [undefined] }]) {
    const copy = structuredClone(value);
    assert.equal(sharedObject(value), value);
    assert.notEqual(sharedObject(copy), value);
    assert.equal(Object.isFrozen(value), false);
  }
  const long = { message: "x".repeat(300) };
  assert.equal(sharedObject(long), long);
  assert.equal(Object.isFrozen(long), false);
});

Deno.test("estimateBytes counts shared strings and objects at their slot only", () => {
  const own = () => ({ spec: { replicas: 7 }, kind: ["Not", "Yet", "Shared"].join("-") });
  const before = estimateBytes(own());
  assert.equal(before, 24 + 2 * 8 + (24 + 8) + (16 + 16));
  const shared = { spec: sharedObject(own().spec), kind: sharedString(own().kind) };
  assert.equal(estimateBytes(shared), 24 + 2 * 8, "an object's header and two slots");
  assert.equal(
    estimateBytes(own()),
    before - (16 + 16),
    "a string equal to a shared one counts as shared, an equal object does not",
  );
});

Deno.test("shared objects no cache holds any more leave the table and make room", async () => {
  const module = new URL("../../lib/runtime/cache/shared_values.ts", import.meta.url).href;
  const program = `
    import { isShared, sharedObject } from ${JSON.stringify(module)};
    // Fills the table with values nothing keeps.
    for (let i = 0; i < 1024; i++) sharedObject({ generation: i });
    const full = sharedObject({ generation: "one too many" });
    for (let turn = 0; turn < 5; turn++) {
      globalThis.gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    console.log(isShared(full), isShared(sharedObject({ generation: "after" })));
  `;
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-check", "--v8-flags=--expose-gc", program],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  assert.equal(new TextDecoder().decode(stdout).trim(), "false true");
});
