/**
 * Hashes for telling states apart without keeping them: {@link hashJson} of
 * any JSON value, and the {@link metadataFingerprint} a store keeps of every
 * object's labels and annotations, so that a cache whose projection drops
 * them still sees when someone changed them. The child applier compares
 * the same fingerprints of what it applied with what its cache holds.
 *
 * @example
 * ```ts
 * import { hashJson, metadataFingerprint } from "./fingerprint.ts";
 * const a = { metadata: { name: "web", labels: { app: "web" } } };
 * const b = { metadata: { name: "web", labels: { app: "shop" } } };
 * if (metadataFingerprint(a) === metadataFingerprint(b)) throw new Error("a label moved");
 * if (hashJson([1, "a"]) !== hashJson([1, "a"])) throw new Error("not a function of the value");
 * ```
 *
 * @module
 */
import type { KubeObject } from "../../kube/types.ts";

/** Annotations under a `kubernetes.io` domain, which Kubernetes' own controllers write. */
const KUBERNETES_IO = /^([^/]*\.)?kubernetes\.io\//;

/**
 * A 30-bit hash of `object`'s labels and annotations, for telling whether
 * anyone changed them: such a change moves neither `generation` nor the
 * desired state. Annotations under a `kubernetes.io` domain are left out:
 * Kubernetes' own controllers write them (the Deployment's revision) after
 * every apply. Thirty bits keep it a small integer, which V8 holds in the
 * slot that refers to it.
 */
export function metadataFingerprint(object: KubeObject): number {
  const m = object.metadata;
  const annotations = Object.entries(m?.annotations ?? {})
    .filter(([key]) => !KUBERNETES_IO.test(key))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const labels = Object.entries(m?.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  return hashJson([labels, annotations]) % 0x40000000;
}

/** A 53-bit hash of the value's JSON (cyrb53): enough to tell desired states apart. */
export function hashJson(value: unknown): number {
  return hashText(JSON.stringify(value) ?? "");
}

/** A 53-bit hash of `text` (cyrb53). */
export function hashText(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
