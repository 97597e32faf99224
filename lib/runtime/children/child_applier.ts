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
 * A child lives in its owner's namespace with the owner reference the
 * reconcile gives it, or, of a kind owned `anywhere`, wherever it is put,
 * recorded to its owner by the labels of owner_labels.ts: the runtime
 * decides by where the child lives, the reconcile's code is the same.
 *
 * The record is in memory. A restarted controller has none, and reads
 * instead what its field manager's last apply left on the child, which the
 * cache keeps as its entries' memo ({@link childCacheMemo}) when the runtime
 * writes the children (no `applyChild` of the spec's own) and caches the
 * kind whole (not `metadataOnly`): the values at the fields the manager owns
 * in `metadata.managedFields`. A child someone else changed, or that the
 * manager no longer fully owns, is applied again; so is one whose values the
 * server keeps in another spelling. A change by someone else to a child's
 * metadata alone is repaired by the next reconcile, and a requeue brings one
 * even when no watch maps the change back to the owner (a lost owner
 * reference).
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
import type { CacheReader, StoreEntry, StoreView } from "../cache/store.ts";
import { hashJson, metadataFingerprint } from "../cache/fingerprint.ts";
import type {
  ApplyChild,
  Children,
  ControllerSpec,
  Owned,
  ReconcileClient,
} from "../controller/spec.ts";
import { appliedMemo, desiredFingerprint } from "./_applied.ts";
import { reachedByReference, withOwnerLabels } from "./owner_labels.ts";

/** The API server's limit on a field manager's length. */
const FIELD_MANAGER_LIMIT = 128;

/**
 * The field manager of a spec's applies (children and status): its own, or
 * its name.
 *
 * @throws {RangeError} when `fieldManager` is empty or longer than 128 characters.
 */
export function fieldManagerOf(spec: Pick<ControllerSpec, "name" | "fieldManager">): string {
  const manager = spec.fieldManager ?? spec.name;
  if (!manager || manager.length > FIELD_MANAGER_LIMIT) {
    throw new RangeError(
      `Cannot create controller '${spec.name}': 'fieldManager' must be 1 to ` +
        `${FIELD_MANAGER_LIMIT} characters, got ${JSON.stringify(manager)}`,
    );
  }
  return manager;
}

/**
 * How a controller of `spec` writes a child: the spec's `applyChild`, or a
 * server-side apply with its field manager, forced (the default).
 */
export function childWriter(
  spec: Pick<ControllerSpec, "name" | "fieldManager" | "applyChild">,
  client: Pick<ReconcileClient, "apply">,
): ApplyChild {
  if (spec.applyChild) return spec.applyChild;
  const fieldManager = fieldManagerOf(spec);
  return (resource, desired, signal) =>
    client.apply(resource, desired, { fieldManager, force: true, signal });
}

/**
 * The memo the cache of an owned kind keeps for a restarted applier: what
 * the spec's field manager last applied to each child. None when the spec
 * writes children its own way (`applyChild`), or the kind is cached
 * `metadataOnly`, whose objects lack the values.
 */
export function childCacheMemo(
  spec: Pick<ControllerSpec, "name" | "fieldManager" | "applyChild">,
  owned: Pick<Owned, "metadataOnly">,
): ((object: KubeObject) => number | undefined) | undefined {
  if (spec.applyChild || owned.metadataOnly) return undefined;
  return appliedMemo(fieldManagerOf(spec));
}

/**
 * The {@link Children} of `owner` under the controller of `spec`, written
 * with `applier` against the caches it tracks. A child no owner reference
 * can reach is labelled with its owner (see owner_labels.ts), when its kind
 * is owned `anywhere`.
 */
export function controllerChildren(
  spec: Pick<ControllerSpec<KubeObject>, "name" | "resource" | "owns">,
  owner: KubeObject,
  applier: ChildApplier,
): Children {
  return {
    apply(resource, desired, signal) {
      const owned = spec.owns?.find((o) => resourceId(o.resource) === resourceId(resource));
      if (!owned) {
        throw new TypeError(
          `Controller '${spec.name}' cannot apply ${resource.plural}: add it to 'owns'`,
        );
      }
      if (reachedByReference(spec.resource, owner, resource, desired)) {
        return applier.apply(resource, desired, applier.cacheOf(resource), signal);
      }
      if (!owned.anywhere) {
        const { namespace, name } = owner.metadata ?? {};
        const where = resource.namespaced
          ? `into namespace "${desired.metadata?.namespace}"`
          : "cluster-scoped";
        throw new TypeError(
          `Controller '${spec.name}' cannot apply ${resource.plural} ${where}: no owner ` +
            `reference reaches it from its owner ${spec.resource.kind} ${namespace}/${name}; ` +
            `write 'anywhere: true' in the 'owns' entry of ${resource.plural}, and the runtime ` +
            "records it by owner labels and deletes it when the owner goes",
        );
      }
      const labelled = withOwnerLabels(spec.resource, owner, desired);
      return applier.apply(resource, labelled, applier.cacheOf(resource), signal);
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
  /**
   * By plural, then by `namespace/name`: the desired state's hash and the
   * generation of the last apply, until the child's cache shows that
   * generation. A cache behind the controller's own write (an event of
   * before the apply, told after it) is no drift. Holds only the children
   * whose apply the cache has not caught up with, of tracked kinds.
   */
  readonly #unseen = new Map<string, Map<ObjectKey, { hash: number; generation: number }>>();
  /** By plural: the cache {@link ChildApplier.track} was given. */
  readonly #caches = new Map<string, CacheReader>();

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
    const found = cache.read(key);
    const entry = found?.entry;
    const unseen = this.#unseen.get(resource.plural);
    const behind = unseen?.get(key);
    const stale = behind !== undefined && behind.hash === hash &&
      entry?.generation !== undefined && entry.generation < behind.generation;
    if (
      entry && (stale || inPlace(entry, hash, last, desired)) && keepsOwners(entry, desired)
    ) {
      if (found?.object) return found.object as C;
    }
    const applied = await this.#write(resource, desired, signal);
    if (!records) this.#applied.set(resource.plural, records = new Map());
    const m = applied.metadata;
    if (unseen && m?.generation !== undefined) unseen.set(key, { hash, generation: m.generation });
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

  /**
   * The cache of `resource` given to {@link ChildApplier.track}.
   *
   * @throws {TypeError} when no cache of `resource` is tracked.
   */
  cacheOf(resource: Resource): CacheReader {
    const cache = this.#caches.get(resource.plural);
    if (cache) return cache;
    throw new TypeError(
      `Cannot apply ${resource.plural}: the child applier tracks no cache of them; ` +
        "add the kind to the spec's 'owns'",
    );
  }

  /**
   * Reads the children of `resource` from `store`, and keeps the records in
   * step with it: a deleted child loses its record.
   */
  track(resource: Resource, store: CacheReader & Pick<StoreView, "subscribe">): void {
    this.#caches.set(resource.plural, store);
    const unseen = new Map<ObjectKey, { hash: number; generation: number }>();
    this.#unseen.set(resource.plural, unseen);
    store.subscribe((change) => {
      if (change.type === "delete") {
        this.#applied.get(resource.plural)?.delete(change.key);
        unseen.delete(change.key);
        return;
      }
      if (change.type === "replace") {
        unseen.clear();
        return;
      }
      const behind = unseen.get(change.key);
      const generation = change.object.metadata?.generation;
      if (behind && (generation === undefined || generation >= behind.generation)) {
        unseen.delete(change.key);
      }
    });
  }
}

/**
 * Whether the cached child is as an apply of `desired` (of hash `hash`)
 * would leave it: by this process' record of its last apply (`last`), or,
 * when the cache records the field manager's applies, by what the manager
 * owns on the child, its cache's memo (after a restart, with no record yet).
 */
function inPlace(
  entry: StoreEntry,
  hash: number,
  last: number | undefined,
  desired: KubeObject,
): boolean {
  if (last !== undefined && record(hash, entry) === last) return true;
  return entry.memo !== undefined && entry.memo === desiredFingerprint(desired);
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
