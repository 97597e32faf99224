import assert from "node:assert/strict";
import type { KubeObject } from "../../lib/kube/mod.ts";
import { ConversionError, convertObject, defineConversion } from "../../lib/runtime/webhook/mod.ts";

type Spec<T> = KubeObject & { spec: T };

/** v1 has `size`, v2 (the hub) `replicas`, v3 `scale: { replicas }`. */
const WEBAPP = defineConversion({
  resource: {
    group: "example.com",
    version: "v2",
    plural: "webapps",
    kind: "WebApp",
    namespaced: true,
  },
  hub: "v2",
  versions: {
    v1: {
      toHub: (o) => {
        const { spec, ...rest } = o as Spec<{ size: number }>;
        return { ...rest, spec: { replicas: spec.size } };
      },
      fromHub: (o) => {
        const { spec, ...rest } = o as Spec<{ replicas: number }>;
        return { ...rest, spec: { size: spec.replicas } };
      },
    },
    v3: {
      toHub: (o) => {
        const { spec, ...rest } = o as Spec<{ scale: { replicas: number } }>;
        return { ...rest, spec: { replicas: spec.scale.replicas } };
      },
      fromHub: (o) => {
        const { spec, ...rest } = o as Spec<{ replicas: number }>;
        return { ...rest, spec: { scale: { replicas: spec.replicas } } };
      },
    },
  },
});

const METADATA = {
  name: "web",
  namespace: "shop",
  uid: "0a1b",
  resourceVersion: "42",
  generation: 3,
  labels: { tier: "web" },
  annotations: { note: "kept" },
};
const V1 = { apiVersion: "example.com/v1", kind: "WebApp", metadata: METADATA, spec: { size: 2 } };

Deno.test("an object converts to the hub and back, keeping its metadata", () => {
  const hub = convertObject(WEBAPP, V1, "example.com/v2");
  assert.deepEqual(hub, { ...V1, apiVersion: "example.com/v2", spec: { replicas: 2 } });
  assert.deepEqual(convertObject(WEBAPP, hub, "example.com/v1"), V1);
});

Deno.test("a spoke converts to another spoke through the hub", () => {
  const v3 = convertObject(WEBAPP, V1, "example.com/v3");
  assert.deepEqual(v3, { ...V1, apiVersion: "example.com/v3", spec: { scale: { replicas: 2 } } });
  assert.deepEqual(convertObject(WEBAPP, v3, "example.com/v1"), V1);
});

Deno.test("an object in the desired version comes back as an untouched copy", () => {
  const same = convertObject(WEBAPP, V1, "example.com/v1");
  assert.deepEqual(same, V1);
  assert.notEqual(same, V1);
});

Deno.test("converters get copies: the object given is never changed", () => {
  const given = structuredClone(V1);
  const mutating = defineConversion({
    ...WEBAPP,
    versions: {
      v1: {
        toHub: (o) => {
          (o.spec as { size?: number }).size = 99;
          return { ...o, spec: { replicas: 1 } };
        },
        fromHub: (o) => o,
      },
    },
  });
  convertObject(mutating, given, "example.com/v2");
  assert.deepEqual(given, V1);
});

Deno.test("a conversion may change labels and annotations but no other metadata", () => {
  const relabel = defineConversion({
    ...WEBAPP,
    versions: {
      v1: {
        toHub: (o) => ({ ...o, metadata: { ...o.metadata, labels: { moved: "yes" } } }),
        fromHub: (o) => o,
      },
    },
  });
  assert.deepEqual(convertObject(relabel, V1, "example.com/v2").metadata?.labels, { moved: "yes" });
  const rename = defineConversion({
    ...WEBAPP,
    versions: {
      v1: {
        toHub: (o) => ({ ...o, metadata: { ...o.metadata, name: "other" } }),
        fromHub: (o) => o,
      },
    },
  });
  assert.throws(
    () => convertObject(rename, V1, "example.com/v2"),
    (e) =>
      e instanceof ConversionError && e.reason === "MetadataChanged" && !e.retryable &&
      e.message ===
        "Cannot convert WebApp web from v1 to v2: the conversion changed metadata other than labels and annotations",
  );
});

Deno.test("a converter that throws is a ConversionError naming the step, with the cause", () => {
  const cause = new Error("size is negative");
  const failing = defineConversion({
    ...WEBAPP,
    versions: {
      v1: {
        toHub: () => {
          throw cause;
        },
        fromHub: (o) => o,
      },
    },
  });
  assert.throws(
    () => convertObject(failing, V1, "example.com/v2"),
    (e) =>
      e instanceof ConversionError && e.reason === "ConverterFailed" && e.cause === cause &&
      e.message === "Cannot convert WebApp web from v1 to v2: size is negative",
  );
});

Deno.test("an unknown version or another group is refused", () => {
  assert.throws(
    () => convertObject(WEBAPP, V1, "example.com/v9"),
    (e) =>
      e instanceof ConversionError && e.reason === "UnknownVersion" &&
      e.message ===
        'Cannot convert WebApp: the desired apiVersion "example.com/v9" names no version of WebApp (known: v2, v1, v3)',
  );
  assert.throws(
    () => convertObject(WEBAPP, { ...V1, apiVersion: "other.io/v1" }, "example.com/v2"),
    (e) => e instanceof ConversionError && e.reason === "WrongGroup",
  );
});
