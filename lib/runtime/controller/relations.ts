/**
 * Which changes reconcile which keys: the generation predicate on the
 * primary, the resourceVersion filter on related objects, the default map
 * of a child to its controller owner (by owner reference or owner labels),
 * and the store listeners that apply them ({@link primaryTrigger},
 * {@link relatedTrigger}).
 *
 * What the caller must know:
 *
 * - A primary counts as changed when its {@link revision} moved (its
 *   `metadata.generation`, or its resourceVersion for kinds without one) or
 *   its deletion mark appeared, so a status write does not loop back.
 * - A related object counts as changed on any new resourceVersion and on
 *   deletion; a relist that finds it unchanged does not count.
 * - A changed related object is mapped as it is now and, when the store
 *   still held it, as it was before, and the keys of both answers are
 *   reconciled (controller-runtime's `EnqueueRequestsFromMapFunc` maps both
 *   objects of an update too): a Node relabelled away from a site
 *   reconciles the site it left as well as the one it joined. An object a
 *   memory budget had evicted is mapped as it is now alone.
 *
 * @example
 * ```ts
 * import { controllerOwnerKeys } from "./relations.ts";
 * import { DEPLOYMENTS } from "../../kube/mod.ts";
 * const ownerOf = controllerOwnerKeys({ ...DEPLOYMENTS, kind: "WebApp", group: "kinglet.dev" });
 * ownerOf({
 *   metadata: {
 *     namespace: "shop",
 *     name: "web",
 *     ownerReferences: [{
 *       apiVersion: "kinglet.dev/v1alpha1", kind: "WebApp", name: "web", uid: "1", controller: true,
 *     }],
 *   },
 * }); // ["shop/web"]
 * ```
 *
 * @module
 */
import { keyOf } from "../../kube/object_key.ts";
import type { KubeObject, ObjectKey, Resource } from "../../kube/types.ts";
import type { StoreChange } from "../cache/store.ts";
import type { AddOptions } from "../queue/queue.ts";
import type { Revision } from "../scheduling/retries.ts";
import { labelledOwnerKey } from "../children/owner_labels.ts";

/** Where a trigger sends the keys it finds: the controller's queue. */
export interface KeyQueue {
  add(key: ObjectKey, options: AddOptions): void;
}

/** A relist's changes queue behind fresh ones; a watch event's are fresh. */
function laneOf(change: StoreChange<KubeObject>): AddOptions {
  return change.type !== "replace" && change.relist ? BACKLOG : FRESH;
}
const BACKLOG: AddOptions = { backlog: true };
const MISSED: AddOptions = { missed: true };
const FRESH: AddOptions = {};

/** The generation of `meta`, or its resourceVersion for kinds without a generation. */
export function revision(
  meta: { generation?: number | undefined; resourceVersion?: string | undefined } | undefined,
): Revision {
  return meta?.generation ?? meta?.resourceVersion;
}

/** Whether a change of the primary asks for a reconcile of its key. */
export function primaryChanged(change: StoreChange<KubeObject>): boolean {
  if (change.type === "replace") return false;
  if (change.type === "delete") return true;
  const before = change.previous;
  const meta = change.object.metadata;
  return !before || revision(before) !== revision(meta) ||
    before.deleting !== (meta?.deletionTimestamp !== undefined);
}

/** The related object whose change should be mapped to primary keys, if it changed. */
export function changedRelated(change: StoreChange<KubeObject>): KubeObject | undefined {
  if (change.type === "replace") return undefined;
  if (change.type === "upsert") {
    const rv = change.object.metadata?.resourceVersion;
    if (change.previous && rv !== undefined && change.previous.resourceVersion === rv) {
      return undefined;
    }
  }
  return change.object;
}

/**
 * Maps an object to the key of its controller owner, when that owner is of
 * `primary`'s kind: the one its controller owner reference names, or else
 * the one its owner labels name (a child in another namespace, or
 * cluster-scoped; see ../children/owner_labels.ts).
 */
export function controllerOwnerKeys(primary: Resource): (object: KubeObject) => ObjectKey[] {
  const { group, kind } = primary;
  return (object) => {
    const owner = object.metadata?.ownerReferences?.find((o) =>
      o.controller && o.kind === kind && apiGroup(o.apiVersion) === group
    );
    // A cluster-scoped owner's key has no namespace, whatever its child's.
    const namespace = primary.namespaced ? object.metadata?.namespace : undefined;
    if (owner) return [keyOf(namespace, owner.name)];
    const labelled = labelledOwnerKey(primary, object);
    return labelled === undefined ? [] : [labelled];
  };
}

function apiGroup(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

/**
 * Whether no controller has reconciled `object` at its generation yet: its
 * `status.observedGeneration`, where it has one, is behind
 * `metadata.generation`. Such an object carries a change someone made,
 * e.g. while no operator ran or while the Lease changed hands.
 */
export function unobserved(object: KubeObject | undefined): boolean {
  const generation = object?.metadata?.generation;
  const observed = (object as { status?: { observedGeneration?: unknown } } | undefined)?.status
    ?.observedGeneration;
  return typeof generation === "number" && typeof observed === "number" && observed < generation;
}

/**
 * The listener of the primary's store: adds the key of each change that
 * {@link primaryChanged} counts to `queue`, and tells `failures` of each
 * deletion first (a terminal error of a deleted key is forgotten). A
 * relist's changes join the backlog, but for objects whose change no
 * controller has observed yet ({@link unobserved}): those are missed, so an
 * edit made while no operator ran is served ahead of the relisted rest, and
 * a change seen as it happens ahead of both.
 */
export function primaryTrigger(
  queue: KeyQueue,
  failures: { deleted(key: ObjectKey): void },
): (change: StoreChange<KubeObject>) => void {
  return (change) => {
    if (change.type === "replace" || !primaryChanged(change)) return;
    if (change.type === "delete") failures.deleted(change.key);
    const lane = laneOf(change);
    queue.add(change.key, lane === BACKLOG && unobserved(change.object) ? MISSED : lane);
  };
}

/**
 * The listener of an owned or watched store: adds to `queue` the primary
 * keys `map` gives for each change that {@link changedRelated} counts, for the object
 * as it is now and, on an update, as the store held it before (each key
 * once), to the backlog when a relist told it. A `map` that throws adds
 * nothing and is reported to `failed` with the object's key; the other
 * changes go on.
 */
export function relatedTrigger(
  map: (object: KubeObject) => ObjectKey[],
  queue: KeyQueue,
  failed: (key: ObjectKey, error: unknown) => void,
): (change: StoreChange<KubeObject>) => void {
  return (change) => {
    const object = changedRelated(change);
    if (!object || change.type === "replace") return;
    const before = change.type === "upsert" ? change.previousObject : undefined;
    let keys: ObjectKey[];
    try {
      keys = map(object);
      if (before) keys = union(keys, map(before));
    } catch (error) {
      failed(change.key, error);
      return;
    }
    const lane = laneOf(change);
    for (const key of keys) queue.add(key, lane);
  };
}

/** `now` and whatever of `was` it lacks; `now` itself when it lacks nothing, as it mostly does. */
function union(now: ObjectKey[], was: ObjectKey[]): ObjectKey[] {
  return was.every((key) => now.includes(key)) ? now : [...new Set([...now, ...was])];
}
