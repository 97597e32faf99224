import assert from "node:assert/strict";
import { jsonPatchBetween } from "../../lib/runtime/webhook/mod.ts";
import { jsonPatch } from "../../lib/testing/_patches.ts";

/** The patch from `before` to `after`, checked to turn the one into the other. */
function roundTrip(before: unknown, after: unknown) {
  const patch = jsonPatchBetween(before, after);
  assert.deepEqual(jsonPatch(before, patch), after);
  return patch;
}

Deno.test("equal values give an empty patch, whatever their key order", () => {
  assert.deepEqual(jsonPatchBetween({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }), []);
});

Deno.test("added, removed and replaced fields become add, remove and replace", () => {
  const patch = roundTrip(
    { spec: { replicas: 1, image: "a", old: true } },
    { spec: { replicas: 2, image: "a", port: 80 } },
  );
  assert.deepEqual(patch, [
    { op: "replace", path: "/spec/replicas", value: 2 },
    { op: "remove", path: "/spec/old" },
    { op: "add", path: "/spec/port", value: 80 },
  ]);
});

Deno.test("a map absent before is added whole", () => {
  const patch = roundTrip({ metadata: { name: "a" } }, {
    metadata: { name: "a", labels: { tier: "web" } },
  });
  assert.deepEqual(patch, [{ op: "add", path: "/metadata/labels", value: { tier: "web" } }]);
});

Deno.test("keys with a slash or a tilde are escaped as JSON Pointer tokens", () => {
  const patch = roundTrip(
    { metadata: { labels: {} } },
    { metadata: { labels: { "app.kubernetes.io/name": "web", "a~b": "c" } } },
  );
  assert.deepEqual(patch.map((op) => op.path), [
    "/metadata/labels/app.kubernetes.io~1name",
    "/metadata/labels/a~0b",
  ]);
});

Deno.test("arrays change index by index, a longer tail is added, a shorter one removed from the end", () => {
  assert.deepEqual(roundTrip({ a: [1, 2] }, { a: [1, 3, 4, 5] }), [
    { op: "replace", path: "/a/1", value: 3 },
    { op: "add", path: "/a/2", value: 4 },
    { op: "add", path: "/a/3", value: 5 },
  ]);
  assert.deepEqual(roundTrip({ a: [1, 2, 3] }, { a: [1] }), [
    { op: "remove", path: "/a/2" },
    { op: "remove", path: "/a/1" },
  ]);
  roundTrip({ c: [{ name: "x", ports: [1] }] }, { c: [{ name: "x", ports: [1, 2], env: [] }] });
});

Deno.test("a change of type replaces the value; undefined counts as absent", () => {
  assert.deepEqual(roundTrip({ a: [1] }, { a: { b: 1 } }), [
    { op: "replace", path: "/a", value: { b: 1 } },
  ]);
  assert.deepEqual(jsonPatchBetween({ a: 1, b: undefined }, { a: 1 }), []);
  assert.deepEqual(jsonPatchBetween({ a: 1 }, { a: 1, b: undefined }), []);
});

Deno.test("the patch holds copies: changing the object afterwards does not change it", () => {
  const after = { spec: { list: [1] } };
  const patch = jsonPatchBetween({}, after);
  after.spec.list.push(2);
  assert.deepEqual(patch, [{ op: "add", path: "/spec", value: { list: [1] } }]);
});
