/**
 * How a controller calls its spec: the {@link ReconcileContext} of each
 * reconcile (signal, key, client, clock, caches, children and events bound
 * to the object, a status write that skips an unchanged status), and the
 * finalizer protocol of a spec that declares one or owns a kind `anywhere`.
 *
 * @module
 */
import type { Clock } from "../../async/clock.ts";
import type { GetOptions } from "../../kube/client.ts";
import { isNotFound } from "../../kube/errors.ts";
import type { KubeObject, ObjectKey, Resource } from "../../kube/types.ts";
import type { CacheReader } from "../cache/store.ts";
import type { EventPublisher } from "../events/events.ts";
import { sameJson } from "../objects/same_json.ts";
import type { ApplyChild, Children } from "./child_applier.ts";
import { finalizer } from "./finalizer.ts";
import { checkFinalizerName } from "./_finalizer_name.ts";
import { deleteLabelledChildren, finalizerOf, ownedAnywhere } from "./owner_labels.ts";
import type { Action, ControllerSpec, ReconcileClient, ReconcileContext } from "./spec.ts";

/** What a {@link Reconciler} lends each context. */
export interface ReconcilerParts {
  client: ReconcileClient;
  clock: Clock;
  events: EventPublisher;
  cache<C extends KubeObject>(resource: Resource): CacheReader<C>;
  /** The children of `owner`, the object being reconciled. */
  children(owner: KubeObject): Children;
}

/** The API server's limit on a field manager's length. */
const FIELD_MANAGER_LIMIT = 128;

/**
 * The field manager of a spec: its own, or its name.
 *
 * @throws {RangeError} when `fieldManager` is empty or longer than 128 characters.
 */
export function fieldManagerOf(spec: ControllerSpec<KubeObject>): string {
  const manager = spec.fieldManager ?? spec.name;
  if (!manager || manager.length > FIELD_MANAGER_LIMIT) {
    throw new RangeError(
      `Cannot create controller '${spec.name}': 'fieldManager' must be 1 to ` +
        `${FIELD_MANAGER_LIMIT} characters, got ${JSON.stringify(manager)}`,
    );
  }
  return manager;
}

/** Server-side apply as `fieldManager`, forced: the default way a child is written. */
export function applyAs(client: ReconcileClient, fieldManager: string): ApplyChild {
  return (resource, desired, signal) =>
    client.apply(resource, desired, { fieldManager, force: true, signal });
}

/** Calls one spec's reconcile (or its finalizer's cleanup) with a fresh context. */
export class Reconciler<T extends KubeObject> {
  readonly #spec: ControllerSpec<T>;
  readonly #parts: ReconcilerParts;
  readonly #client: ReconcileContext["client"];
  readonly #fieldManager: string;
  /** The spec's finalizer, or the runtime's for children anywhere; none for neither. */
  readonly #finalizer: string | undefined;
  /** The kinds owned `anywhere`, whose children go before the finalizer. */
  readonly #anywhere: Resource[];

  /**
   * @throws {RangeError} as {@link fieldManagerOf}.
   * @throws {TypeError} when the spec's finalizer has no qualified name.
   */
  constructor(spec: ControllerSpec<T>, parts: ReconcilerParts) {
    this.#spec = spec;
    this.#parts = parts;
    this.#client = contextClient(parts.client);
    this.#fieldManager = fieldManagerOf(spec as unknown as ControllerSpec<KubeObject>);
    if (spec.finalizer) checkFinalizerName(spec.finalizer.name);
    this.#anywhere = ownedAnywhere(spec);
    this.#finalizer = finalizerOf(spec);
  }

  /**
   * Reconciles `object`. With a finalizer (declared, or the runtime's for
   * kinds owned `anywhere`): adds it first; when the object is being
   * deleted, runs `cleanup`, deletes the children labelled with it, then
   * removes the finalizer; and resolves to `{}` without reconciling an
   * object being deleted without it.
   */
  run(object: T, key: ObjectKey, signal: AbortSignal): Promise<Action> {
    const spec = this.#spec;
    const name = this.#finalizer;
    if (name === undefined) return spec.reconcile(object, this.#context(object, key, signal));
    return finalizer(this.#parts.client, spec.resource, object, name, {
      apply: (current) => spec.reconcile(current, this.#context(current, key, signal)),
      cleanup: async (current) => {
        const declared = spec.finalizer;
        const action = declared
          ? await declared.cleanup(current, this.#context(current, key, signal))
          : {};
        const { client } = this.#parts;
        await deleteLabelledChildren(client, spec.resource, current, this.#anywhere, signal);
        return action;
      },
    }, signal);
  }

  #context(object: T, key: ObjectKey, signal: AbortSignal): ReconcileContext<T> {
    const { client, clock, events, cache } = this.#parts;
    const resource = this.#spec.resource;
    const fieldManager = this.#fieldManager;
    let current: unknown = object.status;
    return {
      signal,
      key,
      client: this.#client,
      clock,
      cache,
      children: this.#parts.children(object),
      events: { publish: (init) => events.publish(object, init) },
      async status(status, statusSignal = signal) {
        if (sameJson(current, status)) return false;
        const { name, namespace } = object.metadata ?? {};
        const group = resource.group ? `${resource.group}/` : "";
        try {
          await client.apply(resource, {
            apiVersion: object.apiVersion ?? `${group}${resource.version}`,
            kind: object.kind ?? resource.kind,
            metadata: { name, namespace },
            status,
          }, { fieldManager, force: true, subresource: "status", signal: statusSignal });
        } catch (error) {
          // Deleted while we reconciled: there is no status left to write.
          if (isNotFound(error)) return false;
          throw error;
        }
        current = status;
        return true;
      },
    };
  }
}

/**
 * `client` with `getOptional` made from its `get`, and `ignoreNotFound` kept
 * by its `delete`, so that every reconcile has both whatever client its
 * controller was given. Each call looks the method up on `client` then, so a
 * test that swaps one out is still heard.
 */
function contextClient(client: ReconcileClient): ReconcileContext["client"] {
  return {
    get: (res, name, opts) => client.get(res, name, opts),
    getOptional: <T extends KubeObject>(res: Resource, name: string, opts?: GetOptions) =>
      client.get<T>(res, name, opts).catch(undefinedIfNotFound),
    list: (res, opts) => client.list(res, opts),
    create: (res, object, opts) => client.create(res, object, opts),
    apply: (res, object, opts) => client.apply(res, object, opts),
    patch: (res, name, patch, opts) => client.patch(res, name, patch, opts),
    delete: async (res, name, opts) => {
      const deleting = client.delete(res, name, opts);
      await (opts?.ignoreNotFound ? deleting.catch(undefinedIfNotFound) : deleting);
    },
  };
}

/** A rejection handler: 404 NotFound becomes `undefined`, anything else is thrown again. */
function undefinedIfNotFound(error: unknown): undefined {
  if (isNotFound(error)) return undefined;
  throw error;
}
