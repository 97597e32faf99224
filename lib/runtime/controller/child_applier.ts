/**
 * The owned children of a controller, applied through one component: a
 * controller declares what it owns (`owns`) and how a child is written
 * (`applyChild`, usually a server-side apply with its field manager) once, and
 * every reconcile gets the same {@link Children} in its context.
 *
 * The applier skips the write when the cached child is exactly as this
 * controller last applied it: same desired content, no change by anyone
 * since (its `metadata.generation`, or `resourceVersion` for kinds without
 * one, is what the last apply returned, and its labels and annotations are
 * as the apply left them), and still every owner reference the controller
 * gave it. Most reconciles are triggered by a child's status moving, and
 * need no write at all.
 *
 * Note: the record is in memory, so a restarted controller applies every
 * child once. A change by someone else to a child's metadata alone is
 * repaired by the next reconcile, and a requeue brings one even when no watch
 * maps the change back to the owner (a lost owner reference).
 *
 * @example
 * ```ts
 * import { ChildApplier } from "./child_applier.ts";
 * import { Store } from "../cache/store.ts";
 * import { CONFIG_MAPS } from "../../kube/resources.ts";
 * const writes: string[] = [];
 * const children = new ChildApplier((_resource, desired) => {
 *   writes.push(desired.metadata!.name!);
 *   return Promise.resolve({ ...desired, metadata: { ...desired.metadata, resourceVersion: "1" } });
 * });
 * const configMaps = new Store();
 * children.track(CONFIG_MAPS, configMaps);
 * const desired = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "ns" } };
 * const applied = await children.apply(CONFIG_MAPS, desired, configMaps, AbortSignal.timeout(1000));
 * configMaps.apply({ type: "applied", object: applied });
 * await children.apply(CONFIG_MAPS, desired, configMaps, AbortSignal.timeout(1000)); // skipped
 * if (writes.length !== 1) throw new Error("applied twice");
 * ```
 *
 * @module
 */
import type { KubeObject, ObjectKey, Resource } from "../../kube/types.ts";
import { objectKey } from "../../kube/object_key.ts";
import type { CacheReader, Store } from "../cache/store.ts";

/** Writes one child and resolves to it as the API server returned it. */
export type ApplyChild = (
  resource: Resource,
  desired: KubeObject,
  signal: AbortSignal,
) => Promise<KubeObject>;

/** What a reconcile uses to write the children its controller owns. */
export interface Children {
  /**
   * Applies `desired` unless the controller's cache of `resource` shows it
   * already in place; resolves to the child as applied, or as cached when the
   * write was skipped.
   *
   * @throws {TypeError} when the controller does not own `resource` or declares no `applyChild`.
   */
  apply<C extends KubeObject>(resource: Resource, desired: C, signal: AbortSignal): Promise<C>;
}

/**
 * The annotation under which a cache that projects its children (keeping
 * only a few fields) keeps {@link metadataFingerprint} of the full child, so
 * that the applier still sees a change to labels or annotations. It is never
 * written to the API server.
 */
export const METADATA_FINGERPRINT = "kinglet.dev/metadata-fingerprint";

/**
 * A hash of a child's labels and annotations, for telling whether anyone
 * changed them since the last apply: such a change moves neither
 * `generation` nor the desired state. Annotations under a `kubernetes.io`
 * domain are left out: Kubernetes' own controllers write them (the
 * Deployment's revision) after every apply. A projected child carries the
 * fingerprint of its full form in {@link METADATA_FINGERPRINT}.
 *
 * @example
 * ```ts
 * import { metadataFingerprint } from "./child_applier.ts";
 * const a = metadataFingerprint({ apiVersion: "v1", kind: "Service", metadata: { labels: { app: "web" } } });
 * const b = metadataFingerprint({ apiVersion: "v1", kind: "Service", metadata: { labels: {} } });
 * a === b; // false
 * ```
 */
export function metadataFingerprint(object: KubeObject): string {
  const m = object.metadata;
  const kept = m?.annotations?.[METADATA_FINGERPRINT];
  if (kept !== undefined) return kept;
  const annotations = Object.entries(m?.annotations ?? {})
    .filter(([key]) => !/^([^/]*\.)?kubernetes\.io\//.test(key))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const labels = Object.entries(m?.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  return hashJson([labels, annotations]).toString(36);
}

/** Applies children and remembers what it applied; one per controller. */
export class ChildApplier {
  readonly #write: ApplyChild;
  /**
   * By plural, then by `namespace/name`: {@link record} of the last apply, one
   * number per child (thousands of children are kept in a few hundred KiB;
   * one map per kind spares each child a `plural/` copy of its key).
   */
  readonly #applied = new Map<string, Map<ObjectKey, number>>();

  /** Creates an applier that writes with `write`. */
  constructor(write: ApplyChild) {
    this.#write = write;
  }

  /** Children with a record. */
  get size(): number {
    let size = 0;
    for (const records of this.#applied.values()) size += records.size;
    return size;
  }

  /**
   * Applies `desired` unless `cache` shows it already in place; resolves to
   * the child as applied, or as cached when the apply was skipped.
   *
   * @throws {TypeError} when `desired` has no `metadata.name`.
   */
  async apply<C extends KubeObject>(
    resource: Resource,
    desired: C,
    cache: CacheReader,
    signal: AbortSignal,
  ): Promise<C> {
    const key = objectKey(desired);
    const hash = hashJson(desired);
    const cached = cache.get(key);
    let records = this.#applied.get(resource.plural);
    const last = records?.get(key);
    if (
      cached && last !== undefined && record(hash, cached) === last && keepsOwners(cached, desired)
    ) {
      return cached as C;
    }
    const applied = await this.#write(resource, desired, signal);
    if (!records) this.#applied.set(resource.plural, records = new Map());
    records.set(key, record(hash, applied));
    return applied as C;
  }

  /** Keeps the records in step with `store`: a deleted child loses its record. */
  track(resource: Resource, store: Store): void {
    store.subscribe((change) => {
      if (change.type === "delete") this.#applied.get(resource.plural)?.delete(change.key);
    });
  }
}

/** Whether `cached` still carries every owner reference of `desired` (by uid). */
function keepsOwners(cached: KubeObject, desired: KubeObject): boolean {
  const has = cached.metadata?.ownerReferences ?? [];
  return (desired.metadata?.ownerReferences ?? []).every((want) =>
    has.some((o) => o.uid === want.uid)
  );
}

/**
 * What an apply of desired state `hash` left: that hash, the child's
 * revision (`metadata.generation`, or `resourceVersion` for kinds without
 * one) and its {@link metadataFingerprint}, in one number. Equal for the
 * cached child only when nothing moved since.
 */
function record(hash: number, child: KubeObject): number {
  return hashJson([hash, revision(child), metadataFingerprint(child)]);
}

function revision(object: KubeObject): string {
  const m = object.metadata;
  return m?.generation !== undefined ? `g${m.generation}` : `r${m?.resourceVersion}`;
}

/** A 53-bit hash of the object's JSON (cyrb53): enough to tell desired states apart. */
function hashJson(value: unknown): number {
  const text = JSON.stringify(value);
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
