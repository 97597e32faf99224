/**
 * What a reconcile gets through its context (client, events bound to the
 * object, status, children written as the spec's field manager) and the
 * finalizer protocol a controller runs for a spec that declares one: a
 * controller over the in-memory API server, on a fake clock.
 */
import assert from "node:assert/strict";
import { FakeClock, Semaphore } from "../../lib/async/mod.ts";
import { type ApplyOptions, CONFIG_MAPS, type KubeObject, SECRETS } from "../../lib/kube/mod.ts";
import type { Action } from "../../lib/runtime/controller/mod.ts";
import type { EventInit } from "../../lib/runtime/events/mod.ts";
import {
  type Condition,
  controllerReference,
  type ControllerSpec,
  type ReconcileContext,
  setCondition,
} from "../../lib/runtime/mod.ts";
import { Caches } from "../../lib/runtime/cache/mod.ts";
import { Controller } from "../../lib/runtime/controller/mod.ts";
import { MemoryCluster, waitFor } from "../../lib/testing/mod.ts";

interface Published {
  regarding: string;
  reason: string;
}

/** A controller of ConfigMaps over an in-memory cluster; records Events and apply options. */
function harness(
  reconcile: (object: KubeObject, context: ReconcileContext) => Promise<Action>,
  extra: Partial<ControllerSpec<KubeObject>> = {},
  clock = new FakeClock(),
) {
  const cluster = new MemoryCluster({ clock, namespaces: ["ns"] });
  const managers: string[] = [];
  const apply = cluster.apply.bind(cluster);
  cluster.apply = <T extends KubeObject>(r: typeof CONFIG_MAPS, o: T, options: ApplyOptions) => {
    managers.push(`${r.plural}${options.subresource ? "/status" : ""} ${options.fieldManager}`);
    return apply(r, o, options);
  };
  const published: Published[] = [];
  const events = {
    publish: (regarding: KubeObject, init: EventInit) =>
      void published.push({ regarding: regarding.metadata!.name!, reason: init.reason }),
  };
  const caches = new Caches({ client: cluster, clock });
  const controller = new Controller({ name: "test", resource: CONFIG_MAPS, reconcile, ...extra }, {
    client: cluster,
    events,
    semaphore: new Semaphore(2),
    caches,
    clock,
  });
  const stop = new AbortController();
  const running = Promise.all([caches.run(stop.signal), controller.run(stop.signal)]);
  return {
    cluster,
    managers,
    published,
    async [Symbol.asyncDispose]() {
      stop.abort();
      await running;
    },
  };
}

const configMap = (name: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns" },
  ...extra,
});

Deno.test("context.status writes a new status once, and skips one equal but for key order", async () => {
  const wrote: boolean[] = [];
  await using h = harness(async (object, { status }) => {
    const generation = object.metadata?.generation;
    wrote.push(await status({ phase: "Ready", observedGeneration: generation }));
    wrote.push(await status({ observedGeneration: generation, phase: "Ready" }));
    return {};
  });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  await waitFor("a status", () => h.cluster.object(CONFIG_MAPS, "ns/a")?.status);
  assert.deepEqual(wrote, [true, false]);
  assert.deepEqual(h.cluster.object(CONFIG_MAPS, "ns/a")?.status, {
    phase: "Ready",
    observedGeneration: 1,
  });
  assert.deepEqual(h.managers, ["configmaps/status test"], "applied as the controller's name");
});

Deno.test("context.status skips the status the object already has, whatever its key order", async () => {
  const wrote: boolean[] = [];
  await using h = harness(async (_object, { status }) => {
    wrote.push(await status({ phase: "Ready", replicas: { ready: 1, want: 1 } }));
    return {};
  });
  h.cluster.put(
    CONFIG_MAPS,
    configMap("a", { status: { replicas: { want: 1, ready: 1 }, phase: "Ready" } }),
  );
  await waitFor("the reconcile", () => wrote.length === 1);
  assert.deepEqual(wrote, [false]);
  assert.deepEqual(h.cluster.applies, []);
});

Deno.test("context.status resolves false for an object deleted meanwhile", async () => {
  const wrote: boolean[] = [];
  await using h = harness(async (object, { status }) => {
    await h.cluster.delete(CONFIG_MAPS, object.metadata!.name!, { namespace: "ns" });
    wrote.push(await status({ phase: "Ready" }));
    return {};
  });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  await waitFor("the reconcile", () => wrote.length === 1);
  assert.deepEqual(wrote, [false]);
});

Deno.test("context.events publishes about the object being reconciled, and context.client is the controller's", async () => {
  await using h = harness(async (object, { client, events, signal }) => {
    events.publish({ type: "Normal", reason: "Seen", action: "Reconcile", note: "seen" });
    await client.create(SECRETS, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `${object.metadata!.name}-seen`, namespace: "ns" },
    }, { signal });
    return {};
  });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  await waitFor("the Secret", () => h.cluster.object(SECRETS, "ns/a-seen"));
  assert.deepEqual(h.published, [{ regarding: "a", reason: "Seen" }]);
});

Deno.test("context.client reads a missing object as undefined, and deletes one already gone, whatever the client", async () => {
  const read: string[] = [];
  await using h = harness(async (object, { client, signal }) => {
    const name = `${object.metadata!.name}-secret`;
    const secret = await client.getOptional(SECRETS, name, { namespace: "ns", signal });
    await client.delete(SECRETS, name, { namespace: "ns", ignoreNotFound: true, signal });
    read.push(`${name}: ${secret ? "found" : "none"}`);
    return {};
  });
  h.cluster.put(SECRETS, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "a-secret", namespace: "ns" },
  });
  // A client that knows no ignoreNotFound: the context keeps the promise all the same.
  const remove = h.cluster.delete.bind(h.cluster);
  h.cluster.delete = (res, name, opts) => remove(res, name, { ...opts, ignoreNotFound: false });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.cluster.put(CONFIG_MAPS, configMap("b"));
  await waitFor("both reconciles", () => read.length === 2);
  assert.deepEqual(read.toSorted(), ["a-secret: found", "b-secret: none"]);
  assert.equal(h.cluster.object(SECRETS, "ns/a-secret"), undefined);
});

Deno.test("context.clock is the controller's, so a condition set under a fake clock has the fake time", async () => {
  const clock = new FakeClock(Date.UTC(2025, 0, 1, 12));
  await using h = harness(
    async (_object, { clock, status }) => {
      const update = { type: "Ready", status: "True", reason: "Seen", message: "" } as const;
      await status({ conditions: setCondition(undefined, update, clock) });
      return {};
    },
    {},
    clock,
  );
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  const status = await waitFor(
    "a status",
    () =>
      h.cluster.object<KubeObject & { status?: { conditions: Condition[] } }>(CONFIG_MAPS, "ns/a")
        ?.status,
  );
  assert.equal(status.conditions[0]?.lastTransitionTime, "2025-01-01T12:00:00Z");
});

Deno.test("children are server-side applied as the spec's field manager without an applyChild", async () => {
  await using h = harness(async (object, { children, signal }) => {
    await children.apply(SECRETS, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: `${object.metadata!.name}-child`,
        namespace: "ns",
        ownerReferences: [controllerReference(object)],
      },
    }, signal);
    return {};
  }, { owns: [{ resource: SECRETS }], fieldManager: "backup-operator" });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  await waitFor("the child", () => h.cluster.object(SECRETS, "ns/a-child"));
  assert.equal(h.managers[0], "secrets backup-operator");
});

Deno.test("a declared finalizer is added before the first reconcile, and cleanup runs before it goes", async () => {
  const calls: string[] = [];
  await using h = harness((object) => {
    calls.push(`reconcile ${object.metadata?.finalizers?.join(",")}`);
    return Promise.resolve({});
  }, {
    finalizer: {
      name: "example.com/cleanup",
      cleanup(object, { events }) {
        calls.push(`cleanup ${object.metadata?.deletionTimestamp ? "deleting" : "live"}`);
        events.publish({ type: "Normal", reason: "Released", action: "Cleanup", note: "done" });
        return Promise.resolve({});
      },
    },
  });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  await waitFor("the reconcile", () => calls.length === 1);
  assert.deepEqual(calls, ["reconcile example.com/cleanup"]);
  assert.deepEqual(h.cluster.object(CONFIG_MAPS, "ns/a")?.metadata?.finalizers, [
    "example.com/cleanup",
  ]);
  await h.cluster.delete(CONFIG_MAPS, "a", { namespace: "ns" });
  await waitFor("the ConfigMap to go", () => !h.cluster.object(CONFIG_MAPS, "ns/a"));
  assert.deepEqual(calls.slice(1), ["cleanup deleting"]);
  assert.deepEqual(h.published, [{ regarding: "a", reason: "Released" }]);
});

Deno.test("an object being deleted without the declared finalizer is not reconciled", async () => {
  const calls: string[] = [];
  await using h = harness((object) => {
    calls.push(object.metadata!.name!);
    return Promise.resolve({});
  }, {
    finalizer: { name: "example.com/cleanup", cleanup: () => Promise.resolve({}) },
  });
  const deletionTimestamp = "2025-01-01T00:00:00Z";
  const metadata = {
    name: "held",
    namespace: "ns",
    finalizers: ["other.io/keep"],
    deletionTimestamp,
  };
  h.cluster.put(CONFIG_MAPS, configMap("held", { metadata }));
  h.cluster.put(CONFIG_MAPS, configMap("b"));
  await waitFor("b's reconcile", () => calls.includes("b"));
  assert.deepEqual(calls, ["b"]);
  assert.deepEqual(h.cluster.object(CONFIG_MAPS, "ns/held")?.metadata?.finalizers, [
    "other.io/keep",
  ]);
});

Deno.test("a spec is refused at once for a finalizer that is no qualified name, or an empty field manager", () => {
  const client = new MemoryCluster();
  const reconcile = () => Promise.resolve({});
  const create = (extra: Partial<ControllerSpec<KubeObject>>) =>
    new Controller({ name: "bad", resource: CONFIG_MAPS, reconcile, ...extra }, {
      client,
      events: { publish() {} },
      semaphore: new Semaphore(1),
    });
  assert.throws(
    () => create({ finalizer: { name: "not a name", cleanup: reconcile } }),
    {
      name: "TypeError",
      message: /Cannot use finalizer "not a name": it must be a qualified name/,
    },
  );
  assert.throws(
    () => create({ fieldManager: "" }),
    { name: "RangeError", message: /'fieldManager' must be 1 to 128 characters, got ""/ },
  );
});
