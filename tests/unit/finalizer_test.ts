import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import { ApiError, isConflict } from "../../lib/kube/errors.ts";
import { CONFIG_MAPS } from "../../lib/kube/resources.ts";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";
import {
  addFinalizer,
  finalizer,
  type FinalizerClient,
  removeFinalizer,
} from "../../lib/runtime/controller/finalizer.ts";

type Op = { op: string; path: string; value?: unknown };

/**
 * One stored object and a JSON patch endpoint that applies `test`, `add` and
 * `remove` as the API server does: all or nothing, a failed test answered
 * with 422.
 */
class FakeClient {
  stored: KubeObject | undefined;
  readonly patches: { name: string; namespace?: string; type: string; ops: Op[] }[] = [];
  #version = 10;

  constructor(obj: KubeObject) {
    this.stored = structuredClone(obj);
  }

  /** Another writer changes the object; its resourceVersion moves on. */
  write(change: (obj: KubeObject) => void): void {
    assert.ok(this.stored);
    change(this.stored);
    this.stored.metadata = { ...this.stored.metadata, resourceVersion: String(++this.#version) };
  }

  patch<T extends KubeObject>(
    _res: Resource,
    name: string,
    patch: unknown,
    opts: { type: string; namespace?: string },
  ): Promise<T> {
    const ops = patch as Op[];
    this.patches.push({
      name,
      namespace: opts.namespace,
      type: opts.type,
      ops: structuredClone(ops),
    });
    if (!this.stored) {
      return Promise.reject(
        new ApiError({ status: 404, message: "not found", verb: "patch", path: name }),
      );
    }
    const doc = structuredClone(this.stored) as Record<string, unknown>;
    for (const op of ops) {
      const segments = op.path.split("/").slice(1);
      const last = segments.pop() ?? "";
      let parent: unknown = doc;
      for (const s of segments) parent = (parent as Record<string, unknown>)?.[s];
      const container = parent as Record<string, unknown> & unknown[];
      if (op.op === "test") {
        if (!isDeepStrictEqual(container?.[last as never], op.value)) {
          return Promise.reject(
            new ApiError({
              status: 422,
              message: "the server rejected our request due to an error in our request",
              causes: [{
                reason: "UnexpectedServerResponse",
                message: `testing value ${op.path} failed: test failed`,
              }],
              verb: "patch",
              path: name,
            }),
          );
        }
      } else if (op.op === "add" && Array.isArray(container)) {
        container.splice(last === "-" ? container.length : Number(last), 0, op.value);
      } else if (op.op === "add") {
        container[last] = op.value;
      } else if (op.op === "remove") {
        container.splice(Number(last), 1);
      }
    }
    this.stored = doc as KubeObject;
    this.write(() => {});
    return Promise.resolve(structuredClone(this.stored) as T);
  }

  finalizers(): string[] | undefined {
    return this.stored?.metadata?.finalizers;
  }
}

function cm(finalizers?: string[], deleting = false): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: "settings",
      namespace: "shop",
      resourceVersion: "10",
      ...(finalizers ? { finalizers } : {}),
      ...(deleting ? { deletionTimestamp: new Date(0).toISOString() } : {}),
    },
  };
}

const ours = "kinglet.dev/cleanup";

function asClient(fake: FakeClient): FinalizerClient {
  return fake as unknown as FinalizerClient;
}

Deno.test("adding the first finalizer tests the resourceVersion it was read at", async () => {
  const fake = new FakeClient(cm());
  const updated = await addFinalizer(asClient(fake), CONFIG_MAPS, cm(), ours);
  assert.deepEqual(fake.patches, [{
    name: "settings",
    namespace: "shop",
    type: "json",
    ops: [
      { op: "test", path: "/metadata/resourceVersion", value: "10" },
      { op: "add", path: "/metadata/finalizers", value: [ours] },
    ],
  }]);
  assert.deepEqual(updated.metadata?.finalizers, [ours]);
  assert.equal(updated.metadata?.resourceVersion, "11");
});

Deno.test("adding to an existing list tests the list and appends, leaving the others in place", async () => {
  const fake = new FakeClient(cm(["other.io/keep"]));
  await addFinalizer(asClient(fake), CONFIG_MAPS, cm(["other.io/keep"]), ours);
  assert.deepEqual(fake.patches[0]?.ops, [
    { op: "test", path: "/metadata/finalizers", value: ["other.io/keep"] },
    { op: "add", path: "/metadata/finalizers/-", value: ours },
  ]);
  assert.deepEqual(fake.finalizers(), ["other.io/keep", ours]);
});

Deno.test("adding a finalizer that is already there sends nothing", async () => {
  const fake = new FakeClient(cm([ours]));
  const obj = cm([ours]);
  assert.equal(await addFinalizer(asClient(fake), CONFIG_MAPS, obj, ours), obj);
  assert.equal(fake.patches.length, 0);
});

Deno.test("a finalizer list changed since the read makes the add a Conflict, and keeps the other writer's change", async () => {
  const fake = new FakeClient(cm(["a.io/x"]));
  const stale = cm(["a.io/x"]);
  fake.write((obj) => obj.metadata!.finalizers!.push("b.io/y"));
  const error = await addFinalizer(asClient(fake), CONFIG_MAPS, stale, ours).catch((e) => e);
  assert.ok(isConflict(error), String(error));
  assert.equal(error.status, 409);
  assert.match(error.message, /ConfigMap shop\/settings changed since it was read/);
  assert.deepEqual(fake.finalizers(), ["a.io/x", "b.io/y"]);
});

Deno.test("any write since the read makes the first add a Conflict", async () => {
  const fake = new FakeClient(cm());
  fake.write((obj) => obj.data = { changed: "yes" });
  await assert.rejects(addFinalizer(asClient(fake), CONFIG_MAPS, cm(), ours), (e) => isConflict(e));
  assert.equal(fake.finalizers(), undefined);
});

Deno.test("removing tests the finalizer at its index, then removes only that entry", async () => {
  const fake = new FakeClient(cm(["a.io/x", ours, "b.io/y"]));
  const updated = await removeFinalizer(
    asClient(fake),
    CONFIG_MAPS,
    cm(["a.io/x", ours, "b.io/y"]),
    ours,
  );
  assert.deepEqual(fake.patches[0]?.ops, [
    { op: "test", path: "/metadata/finalizers/1", value: ours },
    { op: "remove", path: "/metadata/finalizers/1" },
  ]);
  assert.deepEqual(updated.metadata?.finalizers, ["a.io/x", "b.io/y"]);
});

Deno.test("removing after the list shifted is a Conflict and removes nothing", async () => {
  const fake = new FakeClient(cm(["a.io/x", ours, "b.io/y"]));
  const stale = cm(["a.io/x", ours, "b.io/y"]);
  fake.write((obj) => obj.metadata!.finalizers!.splice(0, 1));
  await assert.rejects(
    removeFinalizer(asClient(fake), CONFIG_MAPS, stale, ours),
    (e) => isConflict(e),
  );
  assert.deepEqual(fake.finalizers(), [ours, "b.io/y"]);
});

Deno.test("removing a finalizer that is not there sends nothing", async () => {
  const fake = new FakeClient(cm(["a.io/x"]));
  await removeFinalizer(asClient(fake), CONFIG_MAPS, cm(["a.io/x"]), ours);
  assert.equal(fake.patches.length, 0);
});

Deno.test("a 422 that is not a failed test passes through unchanged", async () => {
  const invalid = new ApiError({
    status: 422,
    message: 'ConfigMap "settings" is invalid',
    causes: [{
      field: "metadata.finalizers",
      reason: "FieldValueForbidden",
      message: "no new finalizers",
    }],
    verb: "patch",
    path: "/",
  });
  const client = { patch: () => Promise.reject(invalid) } as unknown as FinalizerClient;
  await assert.rejects(addFinalizer(client, CONFIG_MAPS, cm(), ours), (e) => e === invalid);
});

Deno.test("unusable names and objects are refused before any request", async () => {
  const fake = new FakeClient(cm());
  await assert.rejects(
    addFinalizer(asClient(fake), CONFIG_MAPS, cm(), "not a name"),
    /TypeError: .*must be a qualified name/,
  );
  await assert.rejects(
    addFinalizer(asClient(fake), CONFIG_MAPS, cm(), `x/${"a".repeat(64)}`),
    TypeError,
  );
  const unread = { kind: "ConfigMap", metadata: { name: "new", namespace: "shop" } };
  await assert.rejects(
    addFinalizer(asClient(fake), CONFIG_MAPS, unread, ours),
    /no metadata.resourceVersion/,
  );
  assert.equal(fake.patches.length, 0);
});

/** What the handlers resolve to, told apart. */
const APPLIED = { requeueAfterMs: 60_000 };
const CLEANED = { requeueAfterMs: 1_000 };

function handlers(log: string[], cleanupFails = false) {
  return {
    apply: (obj: KubeObject) => {
      log.push(`apply with ${JSON.stringify(obj.metadata?.finalizers)}`);
      return Promise.resolve(APPLIED);
    },
    cleanup: (obj: KubeObject) => {
      log.push(`cleanup with ${JSON.stringify(obj.metadata?.finalizers)}`);
      return cleanupFails
        ? Promise.reject(new Error("volume still attached"))
        : Promise.resolve(CLEANED);
    },
  };
}

Deno.test("finalizer adds itself before the first apply, which sees the updated object", async () => {
  const fake = new FakeClient(cm());
  const log: string[] = [];
  assert.deepEqual(
    await finalizer(asClient(fake), CONFIG_MAPS, cm(), ours, handlers(log)),
    APPLIED,
  );
  assert.deepEqual(log, [`apply with ["${ours}"]`]);
  assert.deepEqual(fake.finalizers(), [ours]);
});

Deno.test("finalizer only applies when its finalizer is already there", async () => {
  const fake = new FakeClient(cm([ours]));
  const log: string[] = [];
  await finalizer(asClient(fake), CONFIG_MAPS, cm([ours]), ours, handlers(log));
  assert.deepEqual(log, [`apply with ["${ours}"]`]);
  assert.equal(fake.patches.length, 0);
});

Deno.test("on deletion finalizer cleans up, then removes its finalizer", async () => {
  const fake = new FakeClient(cm([ours, "b.io/y"], true));
  const log: string[] = [];
  const result = await finalizer(
    asClient(fake),
    CONFIG_MAPS,
    cm([ours, "b.io/y"], true),
    ours,
    handlers(log),
  );
  assert.deepEqual(result, CLEANED);
  assert.deepEqual(log, [`cleanup with ["${ours}","b.io/y"]`]);
  assert.deepEqual(fake.finalizers(), ["b.io/y"]);
});

Deno.test("a failed cleanup keeps the finalizer and surfaces the error", async () => {
  const fake = new FakeClient(cm([ours], true));
  const log: string[] = [];
  await assert.rejects(
    finalizer(asClient(fake), CONFIG_MAPS, cm([ours], true), ours, handlers(log, true)),
    /volume still attached/,
  );
  assert.deepEqual(fake.finalizers(), [ours]);
  assert.equal(fake.patches.length, 0);
});

Deno.test("on deletion without our finalizer, finalizer does nothing and asks for nothing", async () => {
  const fake = new FakeClient(cm(["b.io/y"], true));
  const log: string[] = [];
  assert.deepEqual(
    await finalizer(asClient(fake), CONFIG_MAPS, cm(["b.io/y"], true), ours, handlers(log)),
    {},
  );
  assert.deepEqual(log, []);
  assert.equal(fake.patches.length, 0);
});

Deno.test("an object already gone when its finalizer is removed counts as done", async () => {
  const fake = new FakeClient(cm([ours], true));
  fake.stored = undefined;
  const log: string[] = [];
  assert.deepEqual(
    await finalizer(asClient(fake), CONFIG_MAPS, cm([ours], true), ours, handlers(log)),
    CLEANED,
  );
});
