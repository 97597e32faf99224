import assert from "node:assert/strict";
import { FakeClock, Semaphore } from "../../lib/async/mod.ts";
import {
  CONFIG_MAPS,
  type KubeObject,
  NAMESPACES,
  type Resource,
  SECRETS,
} from "../../lib/kube/mod.ts";
import type { Action } from "../../lib/runtime/controller/mod.ts";
import {
  controllerReference,
  type ControllerSpec,
  OWNER_LABELS,
  type ReconcileContext,
} from "../../lib/runtime/mod.ts";
import { Caches } from "../../lib/runtime/cache/mod.ts";
import { Controller } from "../../lib/runtime/controller/mod.ts";
import {
  labelledOwnerKey,
  reachedByReference,
  withOwnerLabels,
} from "../../lib/runtime/children/owner_labels.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";
import { Happenings, until } from "./_until.ts";

const COPIES = ["other", "third"];

/** A controller of ConfigMaps in `ns` over an in-memory cluster with the namespaces of the copies. */
function harness(
  reconcile: (object: KubeObject, context: ReconcileContext) => Promise<Action>,
  extra: Partial<ControllerSpec<KubeObject>> = {},
) {
  const clock = new FakeClock();
  const cluster = new MemoryCluster({ clock, namespaces: ["ns", ...COPIES] });
  const caches = new Caches({ client: cluster, clock, watcherOptions: { streamingList: "off" } });
  const controller = new Controller({
    name: "copier",
    resource: CONFIG_MAPS,
    reconcile,
    owns: [{ resource: SECRETS, anywhere: true }],
    ...extra,
  }, { client: cluster, semaphore: new Semaphore(2), caches, clock });
  const stop = new AbortController();
  let running: Promise<unknown> | undefined;
  return {
    cluster,
    controller,
    start() {
      running = Promise.all([caches.run(stop.signal), controller.run(stop.signal)]);
    },
    async [Symbol.asyncDispose]() {
      stop.abort();
      await running;
    },
  };
}

/** Lets the fake-clock pipeline run until `check` holds, without moving the clock. */
async function settled(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  assert.ok(check(), `${what}: not after 200 turns of the event loop`);
}

const configMap = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns" },
});

/** A reconcile that copies its ConfigMap into a Secret in each of `namespaces`, as owner code does. */
function copier(reconciled: Happenings<string>, namespaces = COPIES) {
  return async (owner: KubeObject, { key, children, signal }: ReconcileContext) => {
    for (const namespace of namespaces) {
      await children.apply(SECRETS, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: `${owner.metadata!.name}-copy`,
          namespace,
          ownerReferences: [controllerReference(owner)],
        },
        stringData: { from: key },
      }, signal);
    }
    reconciled.push(key);
    return {};
  };
}

Deno.test("a child applied into another namespace carries owner labels and no owner reference", async () => {
  const reconciled = new Happenings<string>();
  await using h = harness(copier(reconciled));
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.start();
  await reconciled.count(1, "the first reconcile");
  for (const namespace of COPIES) {
    const copy = h.cluster.object(SECRETS, `${namespace}/a-copy`);
    assert.deepEqual(copy?.metadata?.labels, {
      [OWNER_LABELS.kind]: "ConfigMap",
      [OWNER_LABELS.namespace]: "ns",
      [OWNER_LABELS.name]: "a",
    });
    assert.equal(copy?.metadata?.ownerReferences, undefined);
  }
  assert.deepEqual(
    h.cluster.object(CONFIG_MAPS, "ns/a")?.metadata?.finalizers,
    ["kinglet.dev/children"],
    "the runtime keeps a finalizer of its own when the spec declares none",
  );
});

Deno.test("a change of a child in another namespace reconciles its owner, which restores it", async () => {
  const reconciled = new Happenings<string>();
  await using h = harness(copier(reconciled));
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.start();
  await until(
    reconciled,
    "the copies",
    () => h.cluster.object(SECRETS, "third/a-copy") !== undefined,
  );
  const before = reconciled.items.length;
  await h.cluster.patch(SECRETS, "a-copy", { stringData: { from: "someone else" } }, {
    type: "merge",
    namespace: "other",
  });
  await until(
    reconciled,
    "the owner's reconcile",
    () =>
      reconciled.items.length > before &&
      h.cluster.object<KubeObject & { stringData?: Record<string, string> }>(
          SECRETS,
          "other/a-copy",
        )?.stringData?.from === "ns/a",
  );
  assert.ok(reconciled.items.slice(before).every((key) => key === "ns/a"));
});

Deno.test("deleting the owner deletes its children elsewhere, and only its own, then lets it go", async () => {
  const reconciled = new Happenings<string>();
  await using h = harness(copier(reconciled));
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.cluster.put(CONFIG_MAPS, configMap("b"));
  h.start();
  const copies = () => h.cluster.objects(SECRETS).map((s) => s.metadata?.name).sort();
  await until(reconciled, "both owners' copies", () => copies().length === 4);
  await h.cluster.delete(CONFIG_MAPS, "a", { namespace: "ns" });
  await settled("the owner gone", () => !h.cluster.object(CONFIG_MAPS, "ns/a"));
  assert.deepEqual(copies(), ["b-copy", "b-copy"]);
  assert.ok(h.cluster.object(CONFIG_MAPS, "ns/b"), "the other owner stays");
});

Deno.test("a spec's own finalizer runs its cleanup, then the children go, under that finalizer alone", async () => {
  const reconciled = new Happenings<string>();
  const cleanups: string[] = [];
  await using h = harness(copier(reconciled), {
    finalizer: {
      name: "example.com/cleanup",
      cleanup(_owner, { key }) {
        cleanups.push(`${key} with ${h.cluster.objects(SECRETS).length} copies`);
        reconciled.push("cleanup");
        return Promise.resolve({});
      },
    },
  });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.start();
  await until(reconciled, "the copies", () => h.cluster.objects(SECRETS).length === 2);
  assert.deepEqual(h.cluster.object(CONFIG_MAPS, "ns/a")?.metadata?.finalizers, [
    "example.com/cleanup",
  ]);
  await h.cluster.delete(CONFIG_MAPS, "a", { namespace: "ns" });
  await settled("the owner gone", () => !h.cluster.object(CONFIG_MAPS, "ns/a"));
  // A copy's deletion requeues the owner, whose cleanup may run again from a stale cache.
  assert.equal(cleanups[0], "ns/a with 2 copies", "the spec's cleanup runs before the copies go");
  assert.equal(h.cluster.objects(SECRETS).length, 0);
});

Deno.test("a child in another namespace of a kind not owned anywhere is refused, with what to write", async () => {
  const errors = new Happenings<string>();
  await using h = harness(async (owner, context) => {
    try {
      await copier(new Happenings())(owner, context);
    } catch (error) {
      errors.push(error instanceof TypeError ? error.message : String(error));
    }
    return {};
  }, { owns: [{ resource: SECRETS }] });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.start();
  const [message] = await errors.count(1, "the refusal");
  assert.match(message!, /^Controller 'copier' cannot apply secrets into namespace "other"/);
  assert.match(message!, /write 'anywhere: true' in the 'owns' entry of secrets/);
  assert.equal(h.cluster.objects(SECRETS).length, 0);
  assert.equal(h.cluster.object(CONFIG_MAPS, "ns/a")?.metadata?.finalizers, undefined);
});

Deno.test("a same-namespace child keeps its owner reference and gets no labels nor finalizer", async () => {
  const reconciled = new Happenings<string>();
  await using h = harness(copier(reconciled, ["ns"]), { owns: [{ resource: SECRETS }] });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.start();
  await reconciled.count(1, "the first reconcile");
  const copy = h.cluster.object(SECRETS, "ns/a-copy");
  assert.equal(copy?.metadata?.ownerReferences?.[0]?.name, "a");
  assert.equal(copy?.metadata?.labels, undefined);
  assert.equal(h.cluster.object(CONFIG_MAPS, "ns/a")?.metadata?.finalizers, undefined);
});

Deno.test("a cluster-scoped child of a namespaced owner is labelled, and deleted with it", async () => {
  const reconciled = new Happenings<string>();
  await using h = harness(async (owner, { key, children, signal }) => {
    await children.apply(NAMESPACES, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: `${owner.metadata!.name}-space` },
    }, signal);
    reconciled.push(key);
    return {};
  }, { owns: [{ resource: NAMESPACES, anywhere: true }] });
  h.cluster.put(CONFIG_MAPS, configMap("a"));
  h.start();
  await reconciled.count(1, "the first reconcile");
  assert.equal(h.cluster.object(NAMESPACES, "a-space")?.metadata?.labels?.[OWNER_LABELS.name], "a");
  await h.cluster.delete(CONFIG_MAPS, "a", { namespace: "ns" });
  await settled("the owner gone", () => !h.cluster.object(CONFIG_MAPS, "ns/a"));
  assert.equal(h.cluster.object(NAMESPACES, "a-space"), undefined);
});

Deno.test("owning anywhere under a cluster-scoped primary is refused at registration", () => {
  assert.throws(
    () =>
      new Controller({
        name: "namespaces",
        resource: NAMESPACES,
        reconcile: () => Promise.resolve({}),
        owns: [{ resource: SECRETS, anywhere: true }],
      }, { client: new MemoryCluster(), semaphore: new Semaphore(1) }),
    {
      name: "TypeError",
      message:
        /^Cannot create controller 'namespaces': owns\[0\] \(secrets\) says 'anywhere: true', but namespaces are cluster-scoped.*remove 'anywhere'$/,
    },
  );
});

const GADGETS: Resource = {
  group: "example.com",
  version: "v1",
  plural: "gadgets",
  kind: "Gadget",
  namespaced: true,
};
const gadget: KubeObject = {
  apiVersion: "example.com/v1",
  kind: "Gadget",
  metadata: { name: "g", namespace: "ns", uid: "u1" },
};

Deno.test("an owner reference reaches a child in the owner's namespace, or any child of a cluster-scoped owner", () => {
  const child = (namespace?: string): KubeObject => ({ metadata: { name: "c", namespace } });
  assert.equal(reachedByReference(GADGETS, gadget, SECRETS, child("ns")), true);
  assert.equal(reachedByReference(GADGETS, gadget, SECRETS, child()), true);
  assert.equal(reachedByReference(GADGETS, gadget, SECRETS, child("other")), false);
  assert.equal(reachedByReference(GADGETS, gadget, NAMESPACES, child()), false);
  assert.equal(reachedByReference(NAMESPACES, gadget, SECRETS, child("other")), true);
});

Deno.test("owner labels replace only the owner's reference and map back to the owner alone", () => {
  const other = { apiVersion: "v1", kind: "Node", name: "n", uid: "u2" };
  const labelled = withOwnerLabels(GADGETS, gadget, {
    metadata: {
      name: "c",
      namespace: "other",
      labels: { app: "c" },
      ownerReferences: [controllerReference(gadget), other],
    },
  });
  assert.deepEqual(labelled.metadata?.ownerReferences, [other]);
  assert.equal(labelled.metadata?.labels?.app, "c");
  assert.equal(labelledOwnerKey(GADGETS, labelled), "ns/g");
  assert.equal(labelledOwnerKey({ ...GADGETS, group: "else.com" }, labelled), undefined);
  assert.throws(
    () =>
      withOwnerLabels(GADGETS, { ...gadget, metadata: { name: "x".repeat(64), uid: "u3" } }, {
        metadata: { name: "c" },
      }),
    { name: "TerminalError", message: /longer than the 63 characters of the label/ },
  );
});
