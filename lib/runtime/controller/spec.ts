/**
 * What an author declares: a {@link ControllerSpec} with its reconcile
 * function, the {@link Action} a reconcile returns, the
 * {@link ReconcileContext} it receives, and {@link TerminalError} for
 * failures retrying cannot fix. `Controller` (controller.ts) runs a spec.
 * These are the types the stages implement (the child applier and owner
 * labels in `../children/`, the context in `_reconciler.ts`): this file
 * imports no implementation.
 *
 * Everything a reconcile needs arrives through its context, as kube-rs'
 * `Context`: the client, the caches, the children, an event recorder bound to
 * the object, and a status write that skips an unchanged status.
 *
 * @example
 * ```ts
 * import { type ControllerSpec, TerminalError } from "./spec.ts";
 * import { CONFIG_MAPS, type KubeObject } from "../../kube/mod.ts";
 * const spec: ControllerSpec<KubeObject> = {
 *   name: "configmaps",
 *   resource: CONFIG_MAPS,
 *   reconcile(object, ctx) {
 *     if (!object.metadata?.name) throw new TerminalError("an object without a name");
 *     ctx.events.publish({ type: "Normal", reason: "Seen", action: "Reconcile", note: "seen" });
 *     return Promise.resolve({ requeueAfterMs: 60_000 });
 *   },
 * };
 * ```
 *
 * @module
 */
import type { Clock } from "../../async/clock.ts";
import type { KubeClient } from "../../kube/client.ts";
import type { KubeObject, ObjectKey, Resource } from "../../kube/types.ts";
import type { CacheOptions } from "../cache/caches.ts";
import type { CacheReader } from "../cache/store.ts";
import type { EventInit } from "../events/events.ts";
import type { PacingOptions } from "../scheduling/pacing.ts";
import type { RbacRule } from "../rbac/policy_rule.ts";

/** What a reconcile asks for next. `{}` means done until something changes. */
export interface Action {
  /**
   * Reconcile this key again after this many milliseconds, jittered by the
   * controller's `requeueJitter` (±10 % by default).
   */
  requeueAfterMs?: number;
}

/**
 * An error that retrying cannot fix, such as an invalid spec. The key is not
 * retried until the object's generation changes (its resourceVersion, for
 * kinds without a generation).
 */
export class TerminalError extends Error {
  /** Creates the error; the message is reported to the user as it is. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TerminalError";
  }
}

/**
 * The part of the client a controller lends its reconciles: reads, creates,
 * server-side apply, patches and deletes. A `KubeClient` is one; so is the
 * test kit's in-memory API server. A reconcile's
 * {@link ReconcileContext.client} adds `getOptional` on top of `get`.
 */
export type ReconcileClient = Pick<
  KubeClient,
  "get" | "list" | "create" | "apply" | "patch" | "delete"
>;

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
   * write was skipped. A child outside its owner's namespace, or
   * cluster-scoped under a namespaced owner, is applied with owner labels
   * instead of owner references, when its kind is owned `anywhere`.
   *
   * @throws {TypeError} when the controller does not own `resource`, or
   * `desired` lies out of its owner references' reach and `resource` is
   * not owned `anywhere`.
   * @throws {TerminalError} when such a child's owner has a name too long
   * for a label value.
   */
  apply<C extends KubeObject>(resource: Resource, desired: C, signal: AbortSignal): Promise<C>;
}

/** Events about the object being reconciled; see {@link ReconcileContext.events}. */
export interface ReconcileEvents {
  /**
   * Records that something happened to the object being reconciled. Returns
   * at once and never throws: Events are written in the background, folded
   * into series and rate-limited, and a lost Event is counted, not raised.
   */
  publish(init: EventInit): void;
}

/** What a reconcile function receives besides the object. */
export interface ReconcileContext<T extends KubeObject = KubeObject> {
  /** Fires on the reconcile timeout and on shutdown; pass it to every request. */
  signal: AbortSignal;
  /** `namespace/name` of the object. */
  key: ObjectKey;
  /**
   * The controller's client, for what the caches and children do not cover.
   * Whatever client the controller was given, `getOptional` reads an object
   * that is not there as `undefined`, and `delete(..., { ignoreNotFound: true })`
   * resolves for an object already gone.
   */
  client: ReconcileClient & Pick<KubeClient, "getOptional">;
  /**
   * The controller's clock: pass it to `setCondition`, so that a condition's
   * `lastTransitionTime` is the fake time in a test on a `FakeClock`.
   */
  clock: Clock;
  /**
   * Events about the object being reconciled, written by the manager's
   * event recorder (flushed when the manager stops).
   */
  events: ReconcileEvents;
  /**
   * Writes `status` to the object's status subresource by server-side apply
   * with the controller's field manager (forced), unless the object already
   * has that status, whatever the key order (the API server sorts keys).
   * Resolves to whether it wrote; an object deleted meanwhile resolves to
   * false. A later call in the same reconcile compares with what the earlier
   * one wrote.
   *
   * @throws {ApiError} when the API server refuses the write (other than 404).
   */
  status(status: T["status"], signal?: AbortSignal): Promise<boolean>;
  /**
   * The cache of the primary or of an owned or watched resource, read-only,
   * to read children without a request.
   *
   * @throws {TypeError} when the controller neither owns nor watches `resource`.
   */
  cache<C extends KubeObject = KubeObject>(resource: Resource): CacheReader<C>;
  /**
   * Writes children of the object being reconciled, of the kinds the
   * controller owns; see {@link ControllerSpec.applyChild}, and
   * {@link Owned.anywhere} for children outside the object's namespace.
   */
  children: Children;
}

/**
 * A finalizer the controller keeps on every object it reconciles, so that
 * `cleanup` runs before the object goes; see {@link ControllerSpec.finalizer}.
 */
export interface FinalizerSpec<T extends KubeObject = KubeObject> {
  /** A qualified name, e.g. `example.com/cleanup`. */
  name: string;
  /**
   * Releases what the object held (what the garbage collector cannot do for
   * its children). The finalizer is removed only once this resolves; a
   * throw is retried as a failed reconcile. May run again for the same
   * object: make it idempotent.
   */
  cleanup(object: T, context: ReconcileContext<T>): Promise<Action>;
}

/**
 * What a `map` may read of the primary cache: every key, evicted under a
 * memory limit or not, found by name or by one of the spec's
 * {@link ControllerSpec.indexes}. `get` returns `undefined` for an evicted
 * object; there is no `list`, which would see only the objects in memory.
 */
export type PrimaryView<T extends KubeObject = KubeObject> = Pick<
  CacheReader<T>,
  "has" | "keys" | "entry" | "get" | "byIndex"
>;

/** A resource the controller caches and maps to primary keys. */
export interface Watch<P extends KubeObject = KubeObject> extends Omit<CacheOptions, "memo"> {
  /** The resource to cache and map to primary keys. */
  resource: Resource;
  /**
   * Primary keys to reconcile when an object of this resource changes,
   * given the object as cached (see below) and a view of the primary cache
   * that sees every key (e.g. `primary.byIndex("bySource", key)`).
   * Defaults to the controller owner, when its kind is the primary's, or
   * the owner that the child's owner labels name (see {@link Owned.anywhere}).
   *
   * The object is what this entry caches: whole (less `managedFields`) for
   * a watched kind; for an owned kind, lean by default, which keeps
   * identity, labels, annotations, owners and revision (and replica counts
   * of workloads), so a map by label or annotation needs no `transform`.
   *
   * An update is mapped twice, as the object is now and as it was cached
   * before, and the keys of both answers are reconciled: a Node relabelled
   * from one site to another reconciles both. An object a memory budget had
   * evicted is mapped as it is now alone (see the guide's "Relations").
   */
  map?: (object: KubeObject, primary: PrimaryView<P>) => ObjectKey[];
  /**
   * Instead of `map`: reconcile the primaries that the spec's index of this
   * name holds under the changed object's key (`namespace/name`, or `name`
   * when cluster-scoped), e.g. `index: "bySource"` with
   * `indexes: { bySource: (m) => [\`${m.metadata.namespace}/${m.spec.source}\`] }`.
   * An index the spec does not declare is refused at registration.
   */
  index?: string;
}

/** A kind the controller owns: cached, mapped to owners, and written by {@link ReconcileContext.children}. */
export interface Owned<P extends KubeObject = KubeObject> extends Watch<P> {
  /**
   * Whether children of this kind may live where no owner reference reaches:
   * in another namespace than their owner, or cluster-scoped under a
   * namespaced owner. Such a child is recorded to its owner by the labels
   * `OWNER_LABELS` instead (owner references to the owner are dropped from
   * it), its changes reconcile the owner through them, and the runtime
   * deletes it, listing by those labels across namespaces, before it lets
   * the owner go: under the spec's `finalizer`, or its own
   * `<group>/children` when the spec declares none. Without it, an apply of
   * such a child is refused.
   *
   * Note: a manager confined to one namespace caches that namespace only, so
   * a change to a child elsewhere is seen at the owner's next reconcile (a
   * requeue or a resync), not at once; deleting the children still works,
   * given the right to list and delete the kind in every namespace.
   *
   * @default false: every child lives in its owner's namespace, no finalizer
   */
  anywhere?: boolean;
}

/**
 * What a controller does; see the module documentation for the semantics,
 * and {@link PacingOptions} for the requeue, resync, error and rate options.
 */
export interface ControllerSpec<T extends KubeObject = KubeObject> extends PacingOptions {
  /** Names the controller in logs and metrics. */
  name: string;
  /** The primary resource. */
  resource: Resource;
  /** Drives the object toward its spec; called with the cached object, never with an event. */
  reconcile(object: T, context: ReconcileContext<T>): Promise<Action>;
  /**
   * Children whose controller owner is a primary object (or, for an entry
   * with `anywhere: true`, whose owner labels name one). Cached lean unless
   * an entry has a `transform`: Deployments and StatefulSets keep their
   * replica counts, other kinds only identity, labels, owners and revision.
   * Give each a `labelSelector` that only your children match, or its cache
   * holds every object of the kind in the cluster. A restarted controller
   * writes no child it finds as its field manager's last apply left it (read
   * from the child's `managedFields` as it is cached), unless the kind is
   * cached `metadataOnly` or the spec has an `applyChild` of its own.
   */
  owns?: Owned<T>[];
  /**
   * The field manager of the controller's server-side applies: of its
   * children (unless {@link ControllerSpec.applyChild} says otherwise) and of
   * {@link ReconcileContext.status}.
   *
   * @default the controller's {@link ControllerSpec.name}
   */
  fieldManager?: string;
  /**
   * How {@link ReconcileContext.children} writes a child. Defaults to a
   * server-side apply with {@link ControllerSpec.fieldManager}, forced (the
   * controller takes over fields someone else set).
   */
  applyChild?: ApplyChild;
  /**
   * A finalizer the controller runs itself, after kube-rs' `finalizer()`:
   * it adds the finalizer (with a precondition-safe patch) before the first
   * reconcile of an object; when the object is being deleted, it calls
   * `cleanup` instead of `reconcile`, then removes the finalizer. An object
   * being deleted without the finalizer is not reconciled. A spec that owns
   * a kind `anywhere` deletes those children under it, after `cleanup`.
   * Defaults to none: `reconcile` also sees objects being deleted (unless a
   * kind is owned `anywhere`, which brings the runtime's own finalizer).
   */
  finalizer?: FinalizerSpec<T>;
  /** Other resources, each with a `map` (or an `index`) to primary keys. */
  watches?: Watch<T>[];
  /**
   * Named indexes of the primary cache, for the `map` of a watch or an
   * owned kind: each a function from a primary to the values it is found
   * under, e.g. `{ bySource: (m) => [\`${m.metadata.namespace}/${m.spec.source}\`] }`,
   * read with `primary.byIndex("bySource", key)` or named by an entry's
   * `index`. An index keeps its values for every key, also when a memory
   * limit evicted the object. An index function that throws indexes that
   * object under nothing; the failure is counted and logged once for its
   * key, as is a `map`'s. Defaults to none.
   */
  indexes?: Record<string, (primary: T) => readonly string[]>;
  /** Shapes cached primaries; defaults to the store's strip transform. */
  transform?: (object: KubeObject) => T;
  /** Longest a reconcile may take before its signal aborts. Defaults to 60 000 ms. */
  reconcileTimeoutMs?: number;
  /**
   * Reconciles of this controller running at once, within the manager's
   * limit across all controllers, so that one slow controller cannot take
   * every slot. Defaults to the manager's limit.
   */
  maxConcurrentReconciles?: number;
  /**
   * Rules for what reconcile reads or writes by client beyond its caches
   * (and what it reads back from a cache with `getOrFetch`, a GET when a
   * memory limit evicted the object), each with its reason. `controllerRules`
   * adds them to what it derives from the rest of the spec. Defaults to none.
   */
  rbac?: RbacRule[];
}
