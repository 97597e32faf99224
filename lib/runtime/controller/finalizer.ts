/**
 * Finalizers: keep an object from disappearing until its controller has
 * cleaned up after it.
 *
 * {@link addFinalizer} and {@link removeFinalizer} change the finalizer list
 * with a JSON patch guarded by a `test` op, never by writing the whole list:
 * if another writer changed the list since the object was read, the patch
 * fails instead of undoing their change. That failure is an {@link ApiError}
 * 409 Conflict (`isConflict`); re-read the object and try again, which is what
 * a controller's requeue does.
 *
 * {@link finalizer} is the whole protocol in one call, after kube-rs: it adds
 * the finalizer before the first `apply`, and on deletion runs `cleanup` and
 * removes the finalizer only once cleanup succeeded. A controller whose spec
 * declares a `finalizer` runs this protocol itself; the helper is for
 * reconciles that decide on their own.
 *
 * @example
 * ```ts
 * import { finalizer } from "./finalizer.ts";
 * import type { Action } from "./spec.ts";
 * import { CONFIG_MAPS, type KubeClient } from "../../kube/mod.ts";
 * // Needs a cluster: `client` is usually a `KubeClient`.
 * async function reconcile(client: KubeClient, signal: AbortSignal): Promise<Action> {
 *   const obj = await client.get(CONFIG_MAPS, "settings", { namespace: "shop", signal });
 *   return await finalizer(client, CONFIG_MAPS, obj, "kinglet.dev/cleanup", {
 *     apply: () => Promise.resolve({ requeueAfterMs: 60_000 }),
 *     cleanup: () => Promise.resolve({}),
 *   }, signal);
 * }
 * ```
 *
 * @module
 */
import type { KubeClient } from "../../kube/client.ts";
import { ApiError, isNotFound } from "../../kube/errors.ts";
import { keyOf } from "../../kube/object_key.ts";
import type { KubeObject, Resource } from "../../kube/types.ts";
import { checkFinalizerName as checkName } from "./_finalizer_name.ts";
import type { Action } from "./spec.ts";

/** The part of {@link KubeClient} finalizers use. */
export type FinalizerClient = Pick<KubeClient, "patch">;

/** What {@link finalizer} runs; both may run again for the same object, so make them idempotent. */
export interface FinalizerHandlers<T extends KubeObject> {
  /** Reconciles an object that is not being deleted; it carries the finalizer. */
  apply(obj: T): Promise<Action>;
  /** Releases what the object held; the finalizer is removed only if this resolves. */
  cleanup(obj: T): Promise<Action>;
}

/** A JSON patch operation (RFC 6902), the ones used here. */
type Operation =
  | { op: "test" | "add"; path: string; value: unknown }
  | { op: "remove"; path: string };

/**
 * Adds finalizer `name` to `obj` unless it is there already. Resolves to the
 * object as the API server returned it (or `obj` when nothing changed).
 *
 * @throws {ApiError} 409 Conflict when the object changed since `obj` was
 * read; other API errors as they come.
 * @throws {TypeError} when `name` is not a qualified name, or `obj` lacks a
 * name or (with no finalizers yet) a resourceVersion.
 *
 * @example
 * ```ts
 * import { addFinalizer } from "./finalizer.ts";
 * import { CONFIG_MAPS, type KubeClient, type KubeObject } from "../../kube/mod.ts";
 * // Needs a cluster: `client` is usually a `KubeClient`.
 * async function guard(client: KubeClient): Promise<KubeObject> {
 *   const obj = await client.get(CONFIG_MAPS, "settings", { namespace: "shop" });
 *   return await addFinalizer(client, CONFIG_MAPS, obj, "kinglet.dev/cleanup");
 * }
 * ```
 */
export async function addFinalizer<T extends KubeObject>(
  client: FinalizerClient,
  resource: Resource,
  obj: T,
  name: string,
  signal?: AbortSignal,
): Promise<T> {
  checkName(name);
  const finalizers = obj.metadata?.finalizers ?? [];
  if (finalizers.includes(name)) return obj;
  // The API server omits an empty list, so only a non-empty one can be tested.
  let patch: Operation[];
  if (finalizers.length > 0) {
    patch = [
      { op: "test", path: "/metadata/finalizers", value: finalizers },
      { op: "add", path: "/metadata/finalizers/-", value: name },
    ];
  } else {
    const resourceVersion = obj.metadata?.resourceVersion;
    if (!resourceVersion) {
      throw new TypeError(
        `Cannot add finalizer "${name}" to ${describe(resource, obj)}: it has no ` +
          "metadata.resourceVersion; pass the object as read from the API server",
      );
    }
    patch = [
      { op: "test", path: "/metadata/resourceVersion", value: resourceVersion },
      { op: "add", path: "/metadata/finalizers", value: [name] },
    ];
  }
  return await send(client, resource, obj, patch, `add finalizer "${name}"`, signal);
}

/**
 * Removes finalizer `name` from `obj` if it is there, testing that it is still
 * at the index where `obj` has it. Resolves to the object as the API server
 * returned it (or `obj` when nothing changed).
 *
 * @throws {ApiError} 409 Conflict when the list changed since `obj` was read;
 * other API errors as they come.
 * @throws {TypeError} when `obj` has no name.
 *
 * @example
 * ```ts
 * import { removeFinalizer } from "./finalizer.ts";
 * import { CONFIG_MAPS, type KubeClient } from "../../kube/mod.ts";
 * // Needs a cluster: `client` is usually a `KubeClient`.
 * async function release(client: KubeClient): Promise<void> {
 *   const obj = await client.get(CONFIG_MAPS, "settings", { namespace: "shop" });
 *   await removeFinalizer(client, CONFIG_MAPS, obj, "kinglet.dev/cleanup");
 * }
 * ```
 */
export async function removeFinalizer<T extends KubeObject>(
  client: FinalizerClient,
  resource: Resource,
  obj: T,
  name: string,
  signal?: AbortSignal,
): Promise<T> {
  const index = obj.metadata?.finalizers?.indexOf(name) ?? -1;
  if (index < 0) return obj;
  const patch: Operation[] = [
    { op: "test", path: `/metadata/finalizers/${index}`, value: name },
    { op: "remove", path: `/metadata/finalizers/${index}` },
  ];
  return await send(client, resource, obj, patch, `remove finalizer "${name}"`, signal);
}

/**
 * Runs `handlers` under finalizer `name`:
 *
 * - not being deleted, finalizer absent: adds it, then `apply`;
 * - not being deleted, finalizer present: `apply`;
 * - being deleted, finalizer present: `cleanup`, then removes the finalizer
 *   (only if cleanup resolved; an object already gone counts as removed);
 * - being deleted, finalizer absent: nothing, resolves to `{}`.
 *
 * Resolves to the {@link Action} the handler returned. The arguments come in
 * {@link addFinalizer}'s order.
 *
 * @throws what the handlers throw, and the errors of {@link addFinalizer} and
 * {@link removeFinalizer}.
 * @throws {TypeError} when `name` is not a qualified name.
 * @example
 * ```ts
 * import { finalizer } from "./finalizer.ts";
 * import { CONFIG_MAPS } from "../../kube/mod.ts";
 * const gone = {
 *   apiVersion: "v1", kind: "ConfigMap",
 *   metadata: { name: "settings", namespace: "shop", deletionTimestamp: "2025-01-01T00:00:00Z" },
 * };
 * const client = { patch: () => Promise.reject(new Error("nothing to patch")) };
 * // Being deleted without the finalizer: neither handler runs.
 * await finalizer(client, CONFIG_MAPS, gone as never, "example.com/cleanup", {
 *   apply: () => Promise.reject(new Error("not called")),
 *   cleanup: () => Promise.reject(new Error("not called")),
 * }); // {}
 * ```
 */
export async function finalizer<T extends KubeObject>(
  client: FinalizerClient,
  resource: Resource,
  obj: T,
  name: string,
  handlers: FinalizerHandlers<T>,
  signal?: AbortSignal,
): Promise<Action> {
  checkName(name);
  const present = obj.metadata?.finalizers?.includes(name) ?? false;
  if (!obj.metadata?.deletionTimestamp) {
    const current = present ? obj : await addFinalizer(client, resource, obj, name, signal);
    return await handlers.apply(current);
  }
  if (!present) return {};
  const result = await handlers.cleanup(obj);
  try {
    await removeFinalizer(client, resource, obj, name, signal);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  return result;
}

async function send<T extends KubeObject>(
  client: FinalizerClient,
  resource: Resource,
  obj: T,
  patch: Operation[],
  what: string,
  signal: AbortSignal | undefined,
): Promise<T> {
  const objectName = obj.metadata?.name;
  if (!objectName) {
    throw new TypeError(`Cannot ${what} on ${resource.plural}: the object has no metadata.name`);
  }
  const namespace = resource.namespaced ? obj.metadata?.namespace : undefined;
  try {
    return await client.patch<T>(resource, objectName, patch, { type: "json", namespace, signal });
  } catch (error) {
    if (!failedTest(error)) throw error;
    throw new ApiError({
      status: 409,
      reason: "Conflict",
      message: `cannot ${what}: ${describe(resource, obj)} changed since it was read, ` +
        "so the precondition (a JSON patch test) failed",
      verb: error.verb,
      path: error.path,
      hint: "re-read the object and try again",
    });
  }
}

/**
 * The API server answers a failed `test` op with a bare 422 ("the server
 * rejected our request due to an error in our request"), without the field
 * causes that every validation error of the patched object carries.
 */
function failedTest(error: unknown): error is ApiError {
  return error instanceof ApiError && error.status === 422 && !error.causes.some((c) => c.field);
}

function describe(resource: Resource, obj: KubeObject): string {
  return `${resource.kind} ${keyOf(obj.metadata?.namespace, obj.metadata?.name ?? "(unnamed)")}`;
}
