import assert from "node:assert/strict";
import {
  changedRelated,
  controllerOwnerKeys,
  primaryChanged,
  primaryTrigger,
  relatedTrigger,
  unobserved,
} from "../../lib/runtime/controller/relations.ts";
import type { AddOptions } from "../../lib/runtime/queue/queue.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import type { StoreChange, StoreEntry } from "../../lib/runtime/cache/store.ts";

const WEB_APPS = {
  group: "kinglet.dev",
  version: "v1alpha1",
  plural: "webapps",
  kind: "WebApp",
  namespaced: true,
};

function upsert(
  object: KubeObject,
  previous?: Partial<StoreEntry>,
  previousObject?: KubeObject,
): StoreChange<KubeObject> {
  return {
    type: "upsert",
    key: "ns/a",
    object,
    previous: previous as StoreEntry | undefined,
    ...(previousObject && { previousObject }),
  };
}

Deno.test("a primary seen for the first time is a change", () => {
  assert.deepStrictEqual(primaryChanged(upsert({ metadata: { generation: 1 } })), true);
});

Deno.test("a primary whose status alone moved is not a change", () => {
  const change = upsert(
    { metadata: { generation: 3, resourceVersion: "9" } },
    { generation: 3, resourceVersion: "8", deleting: false },
  );
  assert.deepStrictEqual(primaryChanged(change), false);
});

Deno.test("a primary with a new generation or a deletion mark is a change", () => {
  const before = { generation: 3, resourceVersion: "8", deleting: false };
  assert.deepStrictEqual(primaryChanged(upsert({ metadata: { generation: 4 } }, before)), true);
  const deleting = { metadata: { generation: 3, deletionTimestamp: "2026-01-01T00:00:00Z" } };
  assert.deepStrictEqual(primaryChanged(upsert(deleting as unknown as KubeObject, before)), true);
});

Deno.test("a related object relisted at the same resourceVersion is not a change", () => {
  const object = { metadata: { resourceVersion: "8" } };
  assert.deepStrictEqual(changedRelated(upsert(object, { resourceVersion: "8" })), undefined);
  assert.deepStrictEqual(changedRelated(upsert(object, { resourceVersion: "7" })), object);
});

Deno.test("a child maps to its controller owner of the primary's kind only", () => {
  const map = controllerOwnerKeys(WEB_APPS);
  const owned = (apiVersion: string, kind: string, controller: boolean): KubeObject => ({
    metadata: {
      namespace: "shop",
      name: "web-svc",
      ownerReferences: [{ apiVersion, kind, name: "web", uid: "1", controller }],
    },
  });
  assert.deepStrictEqual(map(owned("kinglet.dev/v1alpha1", "WebApp", true)), ["shop/web"]);
  assert.deepStrictEqual(map(owned("kinglet.dev/v1alpha1", "WebApp", false)), []);
  assert.deepStrictEqual(map(owned("other.dev/v1", "WebApp", true)), []);
  assert.deepStrictEqual(map(owned("kinglet.dev/v1alpha1", "DatabaseCluster", true)), []);
});

Deno.test("the default map also finds the owner a child's owner labels name, of the primary's kind only", () => {
  const map = controllerOwnerKeys(WEB_APPS);
  const labelled = (kind: string): KubeObject => ({
    metadata: {
      namespace: "elsewhere",
      name: "web-copy",
      labels: {
        "kinglet.dev/owner-kind": kind,
        "kinglet.dev/owner-namespace": "shop",
        "kinglet.dev/owner-name": "web",
      },
    },
  });
  assert.deepStrictEqual(map(labelled("WebApp.kinglet.dev")), ["shop/web"]);
  assert.deepStrictEqual(map(labelled("WebApp.other.dev")), []);
  assert.deepStrictEqual(map({ metadata: { namespace: "elsewhere", name: "x" } }), []);
});

Deno.test("a relist's changes join the backlog and a watch event's are fresh, primary and related alike", () => {
  const added: [string, AddOptions][] = [];
  const queue = { add: (key: string, options: AddOptions) => void added.push([key, options]) };
  const primary = primaryTrigger(queue, { deleted: () => {} });
  const related = relatedTrigger(() => ["ns/owner"], queue, () => {});
  const object = { metadata: { name: "a", namespace: "ns", generation: 1 } };
  for (const relist of [true, false]) {
    primary({ ...upsert(object), relist } as StoreChange<KubeObject>);
    related({ ...upsert(object), relist } as StoreChange<KubeObject>);
  }
  assert.deepEqual(added, [
    ["ns/a", { backlog: true }],
    ["ns/owner", { backlog: true }],
    ["ns/a", {}],
    ["ns/owner", {}],
  ]);
});

Deno.test("an update of a related object reconciles what its old and its new version map to, each key once", () => {
  const added: string[] = [];
  const bySite = (node: KubeObject) => [`ns/${node.metadata?.labels?.site}`, "ns/all"];
  const related = relatedTrigger(bySite, { add: (key) => void added.push(key) }, () => {});
  const node = (site: string, resourceVersion: string): KubeObject => ({
    metadata: { name: "n1", labels: { site }, resourceVersion },
  });
  related(upsert(node("b", "2"), { resourceVersion: "1" }, node("a", "1")));
  assert.deepEqual(added, ["ns/b", "ns/all", "ns/a"]);
  added.length = 0;
  related(upsert(node("b", "2"), { resourceVersion: "2" }, node("b", "2")));
  assert.deepEqual(added, [], "a relist at the same resourceVersion maps nothing");
});

Deno.test("a relisted primary whose generation nobody observed yet is missed; one observed joins the backlog", () => {
  const added: [string, AddOptions][] = [];
  const primary = primaryTrigger(
    { add: (key, options) => void added.push([key, options]) },
    { deleted: () => {} },
  );
  const at = (generation: number, observedGeneration: number) => ({
    metadata: { name: "a", namespace: "ns", generation },
    status: { observedGeneration },
  });
  primary({ ...upsert(at(3, 2)), relist: true } as StoreChange<KubeObject>);
  primary({ ...upsert(at(3, 3)), relist: true } as StoreChange<KubeObject>);
  assert.deepEqual(added.map(([, options]) => options), [{ missed: true }, { backlog: true }]);
  assert.equal(unobserved(at(3, 2)), true);
  assert.equal(unobserved({ metadata: { generation: 1 } }), false, "no status: nothing to compare");
});
