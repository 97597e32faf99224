/**
 * One key's reconcile, from the queue's key to what came of it: read the
 * object from the primary cache, skip it while a terminal error stands at
 * its revision, call the spec (its `reconcile`, or under a finalizer its
 * `cleanup`) with a fresh {@link ReconcileContext}, and hand the outcome to
 * the retries, which say what it does to the key.
 *
 * The context is made here and nowhere else: the signal and key, the client
 * through one adapter made once per controller, the clock, the caches, the
 * children of the object, Events bound to it, and a status write that
 * skips an unchanged status.
 *
 * @module
 */
import type { Clock } from "../../async/clock.ts";
import type { GetOptions } from "../../kube/client.ts";
import { isNotFound } from "../../kube/errors.ts";
import type { KubeObject, ObjectKey, Resource } from "../../kube/types.ts";
import type { Logger } from "../../log.ts";
import type { CacheReader } from "../cache/store.ts";
import { type ChildApplier, controllerChildren } from "../children/child_applier.ts";
import { deleteLabelledChildren, finalizerOf, ownedAnywhere } from "../children/owner_labels.ts";
import type { EventPublisher } from "../events/events.ts";
import { sameJson } from "../objects/same_json.ts";
import { checkFinalizerName } from "./_finalizer_name.ts";
import { finalizer } from "./finalizer.ts";
import { revision } from "./relations.ts";
import type { Outcome, Retries } from "../scheduling/retries.ts";
import {
  type Action,
  type Children,
  type ControllerSpec,
  type ReconcileClient,
  type ReconcileContext,
  TerminalError,
} from "./spec.ts";

/** What a {@link Reconciler} works with and lends each context. */
export interface ReconcilerParts<T extends KubeObject> {
  client: ReconcileClient;
  clock: Clock;
  log: Logger;
  events: EventPublisher;
  /** Where the object of a key is read, read back live when evicted. */
  primary: Pick<CacheReader<T>, "getOrFetch">;
  /** The cache of an owned, watched or primary resource (`ControllerCaches.cache`). */
  cache<C extends KubeObject>(resource: Resource): CacheReader<C>;
  /** Writes the children of every reconcile of the controller. */
  applier: ChildApplier;
  /** The field manager of the status writes. */
  fieldManager: string;
  /** Holds the terminal errors and settles each outcome. */
  retries: Pick<Retries, "isTerminal" | "settle">;
}

/** Reconciles the keys of one spec; see the module documentation. */
export class Reconciler<T extends KubeObject> {
  readonly #spec: ControllerSpec<T>;
  readonly #parts: ReconcilerParts<T>;
  readonly #client: ReconcileContext["client"];
  /** The spec's finalizer, or the runtime's for children anywhere; none for neither. */
  readonly #finalizer: string | undefined;
  /** The kinds owned `anywhere`, whose children go before the finalizer. */
  readonly #anywhere: Resource[];

  /** @throws {TypeError} when the spec's finalizer has no qualified name. */
  constructor(spec: ControllerSpec<T>, parts: ReconcilerParts<T>) {
    this.#spec = spec;
    this.#parts = parts;
    this.#client = contextClient(parts.client);
    if (spec.finalizer) checkFinalizerName(spec.finalizer.name);
    this.#anywhere = ownedAnywhere(spec);
    this.#finalizer = finalizerOf(spec);
  }

  /**
   * Reconciles `key` and settles what came of it; never throws. A function
   * of its own, so the runner is lent it as it is.
   */
  readonly handle = async (key: ObjectKey, signal: AbortSignal): Promise<void> => {
    const { clock, retries, log } = this.#parts;
    const started = clock.now();
    let outcome: Outcome;
    try {
      outcome = await this.#reconcile(key, signal);
    } catch (error) {
      outcome = { kind: "error", error };
    }
    const ms = clock.now() - started;
    retries.settle(key, outcome, ms / 1000);
    log.debug("reconciled {key} in {ms} ms: {outcome}", { key, ms, outcome: outcome.kind });
  };

  /** The children a reconcile of `owner` writes: recorded to it by owner reference or labels. */
  children(owner: KubeObject): Children {
    const spec = this.#spec as unknown as ControllerSpec<KubeObject>;
    return controllerChildren(spec, owner, this.#parts.applier);
  }

  async #reconcile(key: ObjectKey, signal: AbortSignal): Promise<Outcome> {
    const object = await this.#parts.primary.getOrFetch(key, signal);
    if (!object) return { kind: "gone" };
    const current = revision(object.metadata);
    if (this.#parts.retries.isTerminal(key, current)) return { kind: "skipped" };
    try {
      const action = await this.#run(object, key, signal);
      return { kind: "success", action };
    } catch (error) {
      if (error instanceof TerminalError) return { kind: "terminal", error, revision: current };
      return { kind: "error", error, revision: current };
    }
  }

  /**
   * Reconciles `object`. With a finalizer (declared, or the runtime's for
   * kinds owned `anywhere`): adds it first; when the object is being
   * deleted, runs `cleanup`, deletes the children labelled with it, then
   * removes the finalizer; and resolves to `{}` without reconciling an
   * object being deleted without it.
   */
  #run(object: T, key: ObjectKey, signal: AbortSignal): Promise<Action> {
    const spec = this.#spec;
    const name = this.#finalizer;
    if (name === undefined) return spec.reconcile(object, this.#context(object, key, signal));
    const { client } = this.#parts;
    return finalizer(client, spec.resource, object, name, {
      apply: (current) => spec.reconcile(current, this.#context(current, key, signal)),
      cleanup: async (current) => {
        const declared = spec.finalizer;
        const action = declared
          ? await declared.cleanup(current, this.#context(current, key, signal))
          : {};
        await deleteLabelledChildren(client, spec.resource, current, this.#anywhere, signal);
        return action;
      },
    }, signal);
  }

  #context(object: T, key: ObjectKey, signal: AbortSignal): ReconcileContext<T> {
    const { client, clock, events, cache, fieldManager } = this.#parts;
    const resource = this.#spec.resource;
    let current: unknown = object.status;
    return {
      signal,
      key,
      client: this.#client,
      clock,
      cache,
      children: this.children(object),
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
