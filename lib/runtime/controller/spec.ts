/**
 * What an author declares: a {@link ControllerSpec} with its reconcile
 * function, the {@link Action} a reconcile returns, the
 * {@link ReconcileContext} it receives, and {@link TerminalError} for
 * failures retrying cannot fix. `Controller` (controller.ts) runs a spec.
 *
 * @example
 * ```ts
 * import { type ControllerSpec, TerminalError } from "./spec.ts";
 * import { CONFIG_MAPS, type KubeObject } from "../../kube/mod.ts";
 * const spec: ControllerSpec<KubeObject> = {
 *   name: "configmaps",
 *   resource: CONFIG_MAPS,
 *   reconcile(object) {
 *     if (!object.metadata?.name) throw new TerminalError("an object without a name");
 *     return Promise.resolve({ requeueAfterMs: 60_000 });
 *   },
 * };
 * ```
 *
 * @module
 */
import type { KubeObject, ObjectKey, Resource } from "../../kube/types.ts";
import type { CacheOptions } from "../cache/caches.ts";
import type { CacheReader } from "../cache/store.ts";
import type { ApplyChild, Children } from "./child_applier.ts";
import type { PacingOptions } from "./pacing.ts";

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

/** What a reconcile function receives besides the object. */
export interface ReconcileContext {
  /** Fires on the reconcile timeout and on shutdown; pass it to every request. */
  signal: AbortSignal;
  /** `namespace/name` of the object. */
  key: ObjectKey;
  /**
   * The cache of the primary or of an owned or watched resource, read-only,
   * to read children without a request.
   *
   * @throws {TypeError} when the controller neither owns nor watches `resource`.
   */
  cache<C extends KubeObject = KubeObject>(resource: Resource): CacheReader<C>;
  /** Writes the children the controller owns; see {@link ControllerSpec.applyChild}. */
  children: Children;
}

/** A resource the controller caches and maps to primary keys. */
export interface Watch extends CacheOptions {
  /** The resource to cache and map to primary keys. */
  resource: Resource;
  /**
   * Primary keys to reconcile when an object of this resource changes.
   * Defaults to the controller owner, when its kind is the primary's.
   */
  map?: (object: KubeObject) => ObjectKey[];
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
  reconcile(object: T, context: ReconcileContext): Promise<Action>;
  /**
   * Children whose controller owner is a primary object. Cached lean unless
   * an entry has a `transform`: Deployments and StatefulSets keep their
   * replica counts, other kinds only identity, owners and revision.
   */
  owns?: Watch[];
  /**
   * How a child is written, usually a server-side apply with the controller's
   * field manager. Needed to use {@link ReconcileContext.children}, which
   * skips writes of children already in place.
   */
  applyChild?: ApplyChild;
  /** Other resources, each with a `map` to primary keys. */
  watches?: Watch[];
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
}
