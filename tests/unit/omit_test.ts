import assert from "node:assert/strict";
import { omit } from "../../lib/runtime/cache/omit.ts";

Deno.test("omit copies the kept keys in their order and leaves its input alone", () => {
  const input = { name: "a", managedFields: [{}], uid: "u", labels: { x: "y" }, generation: 2 };
  const copy = omit(input, (key) => key === "managedFields");
  assert.deepEqual(Object.keys(copy), ["name", "uid", "labels", "generation"]);
  assert.deepEqual(copy, { name: "a", uid: "u", labels: { x: "y" }, generation: 2 });
  assert.equal(copy.labels, input.labels, "a shallow copy");
  assert.deepEqual(Object.keys(input), ["name", "managedFields", "uid", "labels", "generation"]);
});

Deno.test("omit gives copies of one key list their own values", () => {
  const a = omit({ k: "a", drop: 1, n: 1 }, (key) => key === "drop");
  const b = omit({ k: "b", drop: 2, n: 2 }, (key) => key === "drop");
  assert.deepEqual([a, b], [{ k: "a", n: 1 }, { k: "b", n: 2 }]);
});

Deno.test("omit copies keys that JSON or a prototype treat specially", () => {
  const input = JSON.parse('{"__proto__":"p","a\\"b":"q","0":"r","x":"drop"}');
  const copy = omit(input, (key) => key === "x");
  assert.deepEqual(Object.entries(copy), [["0", "r"], ["__proto__", "p"], ['a"b', "q"]]);
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
});

Deno.test("omit still copies once it has seen more key lists than it keeps templates for", () => {
  for (let i = 0; i < 300; i++) {
    const copy = omit({ [`key-${i}`]: i, other: "kept", drop: true }, (key) => key === "drop");
    assert.deepEqual(copy, { [`key-${i}`]: i, other: "kept" });
  }
});
