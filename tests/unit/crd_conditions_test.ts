/** `./crd`'s schema of `metav1.Condition` and of a status's list of them. */
import assert from "node:assert/strict";
import { z } from "zod";
import {
  conditionSchema,
  conditionsSchema,
  defineKind,
  type JsonSchema,
  structuralProblems,
  toKubernetesSchema,
} from "../../lib/crd/mod.ts";
import { type Condition, setCondition } from "../../lib/runtime/mod.ts";

const ready: Condition = {
  type: "Ready",
  status: "True",
  observedGeneration: 3,
  lastTransitionTime: "2025-03-01T10:00:00Z",
  reason: "Available",
  message: "",
};

Deno.test("the condition list renders as a map keyed by type, with metav1.Condition's limits", () => {
  const list = toKubernetesSchema(conditionsSchema());
  assert.equal(list.type, "array");
  assert.equal(list.description, "Latest observations of the object's state.");
  assert.equal(list["x-kubernetes-list-type"], "map");
  assert.deepEqual(list["x-kubernetes-list-map-keys"], ["type"]);
  const item = list.items as JsonSchema;
  assert.deepEqual(item.required, ["type", "status", "lastTransitionTime", "reason", "message"]);
  const fields = item.properties as Record<string, JsonSchema>;
  const limits = (name: string, ...keys: string[]) =>
    Object.fromEntries(keys.map((key) => [key, fields[name]![key]]));
  assert.deepEqual(limits("type", "type", "maxLength"), { type: "string", maxLength: 316 });
  assert.deepEqual(fields.status!.enum, ["True", "False", "Unknown"]);
  assert.deepEqual(limits("observedGeneration", "type", "format", "minimum"), {
    type: "integer",
    format: "int64",
    minimum: 0,
  });
  assert.deepEqual(limits("lastTransitionTime", "type", "format"), {
    type: "string",
    format: "date-time",
  });
  assert.deepEqual(limits("reason", "minLength", "maxLength", "pattern"), {
    minLength: 1,
    maxLength: 1024,
    pattern: "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
  });
  assert.equal(fields.message!.maxLength, 32768);
  assert.deepEqual(structuralProblems(list), []);
});

Deno.test("a kind's status holds the list as an optional field, described in the kind's words", () => {
  const status = z.object({ conditions: conditionsSchema("Ready: whether copies are scheduled.") });
  const backups = defineKind({
    group: "example.com",
    version: "v1",
    kind: "Backup",
    spec: z.object({ schedule: z.string() }),
    status,
  });
  const root = backups.crd().spec.versions[0]!.schema.openAPIV3Schema;
  const node = (root.properties as Record<string, JsonSchema>).status!;
  const conditions = (node.properties as Record<string, JsonSchema>).conditions!;
  assert.equal(conditions.description, "Ready: whether copies are scheduled.");
  assert.equal(conditions["x-kubernetes-list-type"], "map");
  assert.equal(node.required, undefined, "conditions are optional");
  const empty: z.infer<typeof status> = {};
  assert.deepEqual(status.parse(empty), {});
});

Deno.test("the condition schema refuses what the API server would refuse", () => {
  const holder = z.object({ condition: conditionSchema });
  const refused = (change: Partial<Record<keyof Condition, unknown>>) =>
    !holder.safeParse({ condition: { ...ready, ...change } }).success;
  assert.equal(refused({}), false);
  assert.equal(refused({ type: "example.com/Synced" }), false);
  assert.equal(refused({ type: "ready now" }), true);
  assert.equal(refused({ type: "A".repeat(317) }), true);
  assert.equal(refused({ status: "Yes" }), true);
  assert.equal(refused({ observedGeneration: -1 }), true);
  assert.equal(refused({ reason: "" }), true);
  assert.equal(refused({ reason: "not ready" }), true);
  assert.equal(refused({ reason: "A".repeat(1025) }), true);
  assert.equal(refused({ message: "m".repeat(32769) }), true);
  assert.equal(refused({ lastTransitionTime: undefined }), true);
});

Deno.test("the condition schemas parse to the runtime's Condition, both ways", () => {
  const status = z.object({ conditions: conditionsSchema() });
  const set = setCondition(undefined, { ...ready }, new Date(ready.lastTransitionTime));
  const parsed: Condition[] | undefined = status.parse({ conditions: set }).conditions;
  const back: z.input<typeof status> = { conditions: parsed };
  assert.deepEqual(back.conditions, set);
});
