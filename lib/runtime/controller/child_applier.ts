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
 * need no write at all. It reads all of that from the cache's
 * {@link StoreEntry} (generation, resourceVersion, owner uids and the
 * fingerprint of labels and annotations), so the cached child itself may be
 * projected down to whatever the reconcile reads.
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
import { resourceId } from "../../kube/resources.ts";
import type { CacheReader, Store, StoreEntry } from "../cache/store.ts";
import { hashJson, metadataFingerprint } from "../cache/_fingerprint.ts";

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
   * @throws {TypeError} when the controller does not own `resource`.
   */
  apply<C extends KubeObject>(resource: Resource, desired: C, signal: AbortSignal): Promise<C>;
}

/**
 * The {@link Children} of a controller named `name` that owns `owned` and
 * writes with `applier`; `cache`
 * gives the cache of an owned resource.
 */
export function controllerChildren(
  name: string,
  owned: readonly Resource[],
  applier: ChildApplier,
  cache: (resource: Resource) => CacheReader,
): Children {
  return {
    apply(resource, desired, signal) {
      if (!owned.some((o) => resourceId(o) === resourceId(resource))) {
        throw new TypeError(
          `Controller '${name}' cannot apply ${resource.plural}: add it to 'owns'`,
        );
      }
      return applier.apply(resource, desired, cache(resource), signal);
    },
  };
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
    let records = this.#applied.get(resource.plural);
    const last = records?.get(key);
    const entry = last === undefined ? undefined : cache.entry(key);
    if (entry && record(hash, entry) === last && keepsOwners(entry, desired)) {
      const cached = cache.get(key);
      if (cached) return cached as C;
    }
    const applied = await this.#write(resource, desired, signal);
    if (!records) this.#applied.set(resource.plural, records = new Map());
    const m = applied.metadata;
    records.set(
      key,
      record(hash, {
        generation: m?.generation,
        resourceVersion: m?.resourceVersion ?? "",
        fingerprint: metadataFingerprint(applied),
      }),
    );
    return applied as C;
  }

  /** Keeps the records in step with `store`: a deleted child loses its record. */
  track(resource: Resource, store: Store): void {
    store.subscribe((change) => {
      if (change.type === "delete") this.#applied.get(resource.plural)?.delete(change.key);
    });
  }
}

/** Whether the cached child still carries every owner reference of `desired` (by uid). */
function keepsOwners(cached: StoreEntry, desired: KubeObject): boolean {
  return (desired.metadata?.ownerReferences ?? []).every((want) =>
    cached.ownerUids.includes(want.uid)
  );
}

/**
 * What an apply of desired state `hash` left: that hash, the child's
 * revision (`generation`, or `resourceVersion` for kinds without one) and
 * the fingerprint of its labels and annotations, in one number. Equal for
 * the cached child only when nothing moved since.
 */
function record(
  hash: number,
  child: Pick<StoreEntry, "generation" | "resourceVersion" | "fingerprint">,
): number {
  const revision = child.generation !== undefined
    ? `g${child.generation}`
    : `r${child.resourceVersion}`;
  return hashJson([hash, revision, child.fingerprint]);
}
