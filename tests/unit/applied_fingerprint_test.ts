/**
 * What a field manager's apply left on an object, against what it would
 * apply now: equal only when the apply would change nothing.
 */
import assert from "node:assert/strict";
import type { KubeObject } from "../../lib/kube/types.ts";
import {
  appliedFingerprint,
  appliedMemo,
  desiredFingerprint,
} from "../../lib/runtime/children/_applied.ts";

function desired(): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "shop", labels: { app: "web" } },
    spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
  };
}

/** The fields kinglet's apply of {@link desired} owns, as the API server records them. */
const OWNED = {
  "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
  "f:spec": {
    "f:ports": {
      'k:{"port":80,"protocol":"TCP"}': { ".": {}, "f:name": {}, "f:port": {}, "f:targetPort": {} },
    },
    "f:selector": {},
  },
};

/** {@link desired} as the API server stores it: defaulted, and with others' fields beside. */
function live(owned: object = OWNED, change: (o: KubeObject) => void = () => {}): KubeObject {
  const object: KubeObject = {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: "web",
      namespace: "shop",
      uid: "u1",
      resourceVersion: "7",
      labels: { app: "web", team: "blue" },
      managedFields: [
        {
          manager: "kinglet",
          operation: "Apply",
          apiVersion: "v1",
          fieldsType: "FieldsV1",
          fieldsV1: owned,
        },
        {
          manager: "kubectl-label",
          operation: "Update",
          apiVersion: "v1",
          fieldsType: "FieldsV1",
          fieldsV1: { "f:metadata": { "f:labels": { "f:team": {} } } },
        },
        {
          manager: "kinglet",
          operation: "Update",
          apiVersion: "v1",
          subresource: "status",
          fieldsType: "FieldsV1",
          fieldsV1: { "f:status": {} },
        },
      ],
    },
    spec: {
      clusterIP: "10.0.0.7",
      type: "ClusterIP",
      selector: { app: "web" },
      ports: [
        { name: "metrics", port: 9090, protocol: "TCP", targetPort: 9090 },
        { name: "http", port: 80, protocol: "TCP", targetPort: 8080 },
      ],
    },
  };
  change(object);
  return object;
}

Deno.test("a child as applied, defaulted and with others' fields beside, fingerprints as the desired object", () => {
  assert.equal(appliedFingerprint(live(), "kinglet"), desiredFingerprint(desired()));
});

Deno.test("the desired object's key order does not count", () => {
  const reordered: KubeObject = {
    spec: { ports: [{ targetPort: 8080, port: 80, name: "http" }], selector: { app: "web" } },
    metadata: { labels: { app: "web" }, namespace: "shop", name: "web" },
    kind: "Service",
    apiVersion: "v1",
  };
  assert.equal(appliedFingerprint(live(), "kinglet"), desiredFingerprint(reordered));
});

Deno.test("a value changed under a field the manager still owns differs", () => {
  const edited = live(OWNED, (o) => ((o.spec as { selector: object }).selector = { app: "other" }));
  assert.notEqual(appliedFingerprint(edited, "kinglet"), desiredFingerprint(desired()));
});

Deno.test("a field someone else took over or removed differs, though the value may be the same", () => {
  const { "f:targetPort": _taken, ...port } =
    OWNED["f:spec"]["f:ports"]['k:{"port":80,"protocol":"TCP"}'];
  const taken = {
    ...OWNED,
    "f:spec": { ...OWNED["f:spec"], "f:ports": { 'k:{"port":80,"protocol":"TCP"}': port } },
  };
  assert.notEqual(appliedFingerprint(live(taken), "kinglet"), desiredFingerprint(desired()));
  const removed = live(
    { ...OWNED, "f:metadata": { "f:labels": {} } },
    (o) => delete o.metadata!.labels!.app,
  );
  assert.notEqual(appliedFingerprint(removed, "kinglet"), desiredFingerprint(desired()));
});

Deno.test("a field the desired object dropped, still owned, differs: the apply would remove it", () => {
  const { selector: _dropped, ...spec } = desired().spec as Record<string, unknown>;
  assert.notEqual(
    appliedFingerprint(live(), "kinglet"),
    desiredFingerprint({ ...desired(), spec }),
  );
});

Deno.test("set items are matched by value, and items of other managers do not count", () => {
  const object: KubeObject = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: "c",
      finalizers: ["other/x", "kinglet.dev/y"],
      managedFields: [{
        manager: "kinglet",
        operation: "Apply",
        apiVersion: "v1",
        fieldsType: "FieldsV1",
        fieldsV1: {
          "f:metadata": { "f:finalizers": { 'v:"kinglet.dev/y"': {} } },
          "f:data": { "f:k": {} },
        },
      }],
    },
    data: { k: "v", other: "w" },
  };
  const want: KubeObject = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "c", finalizers: ["kinglet.dev/y"] },
    data: { k: "v" },
  };
  assert.equal(appliedFingerprint(object, "kinglet"), desiredFingerprint(want));
  assert.notEqual(
    appliedFingerprint(object, "kinglet"),
    desiredFingerprint({ ...want, data: { k: "x" } }),
  );
});

Deno.test("no fingerprint without an apply of that manager: updates, status and other managers do not count", () => {
  assert.equal(appliedFingerprint(live(), "someone-else"), undefined);
  const updated = live();
  updated.metadata!.managedFields = updated.metadata!.managedFields!.slice(1);
  assert.equal(appliedFingerprint(updated, "kinglet"), undefined);
  assert.equal(appliedFingerprint({ ...live(), metadata: { name: "web" } }, "kinglet"), undefined);
});

Deno.test("an apply recorded at another API version differs", () => {
  const other = live(OWNED, (o) => (o.metadata!.managedFields![0]!.apiVersion = "v2"));
  assert.notEqual(appliedFingerprint(other, "kinglet"), desiredFingerprint(desired()));
});

Deno.test("one field manager's caches of children share one memo, so two controllers share one cache", () => {
  assert.equal(appliedMemo("kinglet"), appliedMemo("kinglet"));
  assert.notEqual(appliedMemo("kinglet"), appliedMemo("someone-else"));
});
