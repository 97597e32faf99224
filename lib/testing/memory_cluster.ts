/**
 * An in-memory stand-in for the API server, for unit tests of a controller:
 * it is a client a `Manager` or a `Controller` takes as it takes a
 * `KubeClient`, so a test drives the real pipeline (watch, cache, queue,
 * reconcile, children, status, finalizers, Events) without a cluster, on a
 * fake clock, in milliseconds.
 *
 * What it models: objects by resource with increasing resourceVersions and a
 * `metadata.generation` that moves when anything but metadata and status
 * changes; watches from any resourceVersion, streaming lists
 * (`sendInitialEvents`) and metadata-only views; namespaces and
 * equality-based label selectors (`k=v`, `k!=v`, `k`, `!k`); create (409 when
 * the object exists), replace (409 on a stale resourceVersion), server-side
 * apply (the applied object replaces the stored one's fields; status only
 * through the status subresource), merge and JSON patches (a failed `test`
 * is the bare 422 the API server answers), and deletion that waits for
 * finalizers. Events are stored like any object (`objects(EVENTS)`).
 *
 * Namespaces: `default`, `kube-system`, `kube-public` and `kube-node-lease`
 * exist from the start, and {@link MemoryClusterOptions.namespaces} adds
 * more; a create or an apply into any other namespace fails with the API
 * server's 404 (`namespaces "shop" not found`) until a Namespace of that
 * name is stored.
 *
 * CRDs: once the cluster holds a kind's CRD (`installCrds` and a manager's
 * `crds` apply it, and find it `Established` at once; a test may `put` it),
 * the writes of the kind are checked against the structural schema of their
 * version, and refused with the API server's 422 Invalid, one cause per
 * field (`spec.keep: Invalid value: 0: spec.keep in body should be greater
 * than or equal to 1`): types, `required`, `enum`, bounds, lengths, patterns,
 * item counts and duplicate keys. A kind without its CRD is taken as it comes.
 *
 * Webhooks: given {@link MemoryClusterOptions.webhooks}, the writes of
 * their kinds are defaulted and validated by them, and a converted kind is
 * stored in one version and served in all, as the API server does with the
 * webhook server (see `@kinglet/kinglet/runtime/webhook`).
 *
 * What it does not: field ownership and apply conflicts, schema defaulting and
 * pruning, CEL rules, `format`, ratcheting, other admission, garbage
 * collection of children or of a deleted namespace's objects, pagination,
 * set-based label selectors and field selectors. Test those against a real
 * API server.
 *
 * {@link MemoryCluster.put} and {@link MemoryCluster.remove} are the test's
 * own hand: they store and delete as told, unchecked.
 *
 * @example
 * ```ts
 * import { MemoryCluster } from "./memory_cluster.ts";
 * import { CONFIG_MAPS } from "../kube/mod.ts";
 * const cluster = new MemoryCluster({ namespaces: ["ns"] });
 * cluster.put(CONFIG_MAPS, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "ns" } });
 * await cluster.patch(CONFIG_MAPS, "a", { data: { k: "v" } }, { type: "merge", namespace: "ns" });
 * cluster.object(CONFIG_MAPS, "ns/a")?.data; // { k: "v" }
 * cluster.changes; // ["ADDED configmaps ns/a", "MODIFIED configmaps ns/a"]
 * ```
 *
 * @module
 */
import type { Clock } from "../async/clock.ts";
import type {
  ApplyOptions,
  DeleteOptions,
  GetOptions,
  ListOptions,
  PatchOptions,
  WatchOptions,
  WriteOptions,
} from "../kube/client.ts";
import { ApiError, type StatusCause } from "../kube/errors.ts";
import { keyOf } from "../kube/object_key.ts";
import {
  CUSTOM_RESOURCE_DEFINITIONS,
  NAMESPACES,
  resourceName,
  resourcePath,
} from "../kube/resources.ts";
import type { KubeList, KubeObject, ObjectKey, Resource, WatchEvent } from "../kube/types.ts";
import type { ManagerClient } from "../runtime/manager/manager.ts";
import { sameJson } from "../runtime/objects/same_json.ts";
import { labelMatcher } from "./_label_selector.ts";
import { jsonPatch, mergePatch, type Operation } from "./_patches.ts";
import { crdSchema, crdStorageVersion, served } from "./_crds.ts";
import { InProcessWebhooks } from "./_webhooks.ts";
import type {
  AdmissionWebhook,
  Conversion,
  Operation as AdmissionOperation,
} from "../runtime/webhook/mod.ts";
import { invalidMessage, schemaErrors } from "./_schema_check.ts";
import { createTestNode, type TestNode, type TestNodeOptions } from "./nodes.ts";

/** Options of {@link MemoryCluster}. */
export interface MemoryClusterOptions {
  /** Stamps `creationTimestamp` and `deletionTimestamp`. Defaults to the system time. */
  clock?: Pick<Clock, "now">;
  /**
   * Namespaces that exist from the start, beside those every cluster has
   * (`default`, `kube-system`, `kube-public`, `kube-node-lease`). Defaults to none.
   */
  namespaces?: readonly string[];
  /**
   * Admission webhooks and conversions run as the API server would call
   * them: each create, update (but of status) and delete of their kind is
   * defaulted, then validated, and refused with the webhook's message
   * (`admission webhook "vwebapps.example.com" denied the request: ...`);
   * objects of a converted kind are stored in its storage version (the
   * CRD's, else the hub) and read and written in any version a request
   * names. Defaults to none.
   */
  webhooks?: readonly (AdmissionWebhook | Conversion)[];
}

interface Change {
  rv: number;
  id: string;
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: KubeObject;
  before?: KubeObject;
}

const INITIAL_EVENTS_END = "k8s.io/initial-events-end";
/** The namespaces a new cluster has. */
const CLUSTER_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"];

/** Objects by resource, a log of changes, and watches that follow the log. */
export class MemoryCluster implements ManagerClient {
  #rv = 0;
  readonly #now: () => number;
  readonly #objects = new Map<string, Map<ObjectKey, KubeObject>>();
  readonly #log: Change[] = [];
  readonly #wake = new Set<() => void>();
  /** Every change, in order, as `TYPE plural namespace/name`. */
  readonly changes: string[] = [];
  /** Every apply, in order, as `plural namespace/name` (`plural/status` for status). */
  readonly applies: string[] = [];
  readonly #webhooks: InProcessWebhooks | undefined;

  /**
   * Creates a cluster holding nothing but its namespaces, which are there
   * before any watch starts (no change records them).
   */
  constructor(options: MemoryClusterOptions = {}) {
    const clock = options.clock;
    this.#now = clock ? () => clock.now() : Date.now;
    if (options.webhooks?.length) this.#webhooks = new InProcessWebhooks(options.webhooks, this);
    for (const name of new Set([...CLUSTER_NAMESPACES, ...options.namespaces ?? []])) {
      const namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name } };
      this.put(NAMESPACES, { ...namespace, status: { phase: "Active" } });
    }
    // They were there before anything could watch: no change tells of them.
    this.#log.length = 0;
    this.changes.length = 0;
  }

  /**
   * Stores `object` as it is, creating or replacing it (keeping its uid), and
   * tells the watches: what another writer, or the test, does.
   *
   * @throws {TypeError} when the object has no `metadata.name`.
   */
  put<T extends KubeObject>(resource: Resource, object: T): T {
    const name = object.metadata?.name;
    if (!name) throw new TypeError(`Cannot store ${resource.plural}: the object has no name`);
    const key = keyOf(object.metadata?.namespace, name);
    const objects = this.#of(resource);
    const before = objects.get(key);
    const { metadata: _m, status: _s, ...content } = object;
    const { metadata: _bm, status: _bs, ...was } = before ?? {};
    const moved = !before || !sameJson(content, was);
    const stored = {
      ...object,
      metadata: {
        uid: before?.metadata?.uid ?? crypto.randomUUID(),
        creationTimestamp: before?.metadata?.creationTimestamp ?? this.#stamp(),
        ...object.metadata,
        generation: (before?.metadata?.generation ?? 0) + (moved ? 1 : 0),
        resourceVersion: String(++this.#rv),
      },
    } as T;
    objects.set(key, stored);
    this.#record(resource, before ? "MODIFIED" : "ADDED", stored, before);
    return structuredClone(stored);
  }

  /**
   * Creates a Node with `options.labels`, Ready unless `options.ready` is
   * false, whose readiness and labels the test then sets through the
   * {@link TestNode} returned: see nodes.ts.
   *
   * @throws {ApiError} 409 AlreadyExists when a Node of that name exists.
   */
  node(name: string, options: TestNodeOptions = {}): Promise<TestNode> {
    return createTestNode(this, { now: this.#now }, name, options);
  }

  /** Deletes the object under `key` at once, finalizers or not. */
  remove(resource: Resource, key: ObjectKey): void {
    const object = this.#of(resource).get(key);
    if (!object) return;
    this.#of(resource).delete(key);
    const gone = {
      ...object,
      metadata: { ...object.metadata, resourceVersion: String(++this.#rv) },
    };
    this.#record(resource, "DELETED", gone, object);
  }

  /** The stored object under `key` (`namespace/name`), a copy. */
  object<T extends KubeObject>(resource: Resource, key: ObjectKey): T | undefined {
    const object = this.#of(resource).get(key);
    return object && structuredClone(object) as T;
  }

  /** Every stored object of `resource`, copies, in the order they were created. */
  objects<T extends KubeObject>(resource: Resource): T[] {
    return [...this.#of(resource).values()].map((o) => structuredClone(o) as T);
  }

  /** The objects of `resource` in the namespace and with the labels `options` select. */
  list<T extends KubeObject>(resource: Resource, options: ListOptions = {}): Promise<KubeList<T>> {
    return settled(() => {
      const selected = this.#selector(options);
      const items = [...this.#of(resource).values()].filter(selected)
        .map((o) => this.#view(resource, o, options.metadataOnly) as T);
      return Promise.resolve({ metadata: { resourceVersion: String(this.#rv) }, items });
    });
  }

  /**
   * Changes after `resourceVersion` (or from now), as the API server streams
   * them; with `sendInitialEvents`, the current objects first, then a
   * bookmark marking their end. Never ends on its own: abort `signal`.
   */
  async *watch<T extends KubeObject>(
    resource: Resource,
    options: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>, void, undefined> {
    const selected = this.#selector(options);
    const id = resourceName(resource);
    let seen = Number(options.resourceVersion || this.#rv);
    if (options.sendInitialEvents) {
      seen = this.#rv;
      for (const object of [...this.#of(resource).values()].filter(selected)) {
        yield { type: "ADDED", object: this.#view(resource, object, options.metadataOnly) as T };
      }
      const metadata = {
        resourceVersion: String(seen),
        annotations: { [INITIAL_EVENTS_END]: "true" },
      };
      yield { type: "BOOKMARK", object: { metadata } as KubeObject as T };
    }
    const signal = options.signal;
    while (!signal?.aborted) {
      const change = this.#log.find((c) => c.rv > seen && c.id === id);
      if (!change) {
        await this.#changed(signal);
        continue;
      }
      seen = change.rv;
      const now = selected(change.object);
      const was = change.before !== undefined && selected(change.before);
      // A label change moves an object into or out of the selection: ADDED or DELETED.
      const type = change.type === "DELETED"
        ? (was ? "DELETED" : undefined)
        : now
        ? (was ? "MODIFIED" : "ADDED")
        : (was ? "DELETED" : undefined);
      if (type) {
        yield { type, object: this.#view(resource, change.object, options.metadataOnly) as T };
      }
    }
  }

  /** The object; 404 when there is none. */
  get<T extends KubeObject>(
    resource: Resource,
    name: string,
    options: GetOptions = {},
  ): Promise<T> {
    return settled(() => {
      const object = this.#of(resource).get(keyOf(options.namespace, name));
      if (!object) return this.#fail(404, "NotFound", "GET", resource, name, options.namespace);
      return Promise.resolve(this.#view(resource, object, options.metadataOnly) as T);
    });
  }

  /** The object, or `undefined` when there is none. */
  getOptional<T extends KubeObject>(
    resource: Resource,
    name: string,
    options: GetOptions = {},
  ): Promise<T | undefined> {
    return settled(() => {
      const object = this.#of(resource).get(keyOf(options.namespace, name));
      return Promise.resolve(object && this.#view(resource, object, options.metadataOnly) as T);
    });
  }

  /**
   * Creates `object`; 409 AlreadyExists when it exists, 404 when its
   * namespace does not, 422 when its CRD's schema refuses it, the webhook's
   * error when its admission denies it.
   */
  create<T extends KubeObject>(
    resource: Resource,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    return settled(() => {
      const { name = "", namespace = options.namespace } = object.metadata ?? {};
      const { uid: _, ...metadata } = object.metadata ?? {};
      const created = { ...object, metadata: { ...metadata, namespace } };
      return this.#admitted(
        resource,
        "POST",
        { operation: "CREATE", object: created },
        (admitted) => {
          const refused = this.#refusal<T>("POST", resource, admitted, { namespaced: true });
          if (refused) return refused;
          if (this.#of(resource).has(keyOf(namespace, name))) {
            return this.#fail(409, "AlreadyExists", "POST", resource, name, namespace);
          }
          return Promise.resolve(this.#store(resource, served(resource, admitted)) as T);
        },
      );
    });
  }

  /**
   * Replaces `object`; 409 Conflict when its resourceVersion is not the
   * stored one, 422 when its CRD's schema refuses it, the webhook's error
   * when its admission denies it (the status subresource is not admitted).
   */
  replace<T extends KubeObject>(
    resource: Resource,
    object: T,
    options: WriteOptions & { subresource?: "status" } = {},
  ): Promise<T> {
    return settled(() => {
      const { name = "", namespace = options.namespace, resourceVersion } = object.metadata ?? {};
      const stored = this.#stored(resource, keyOf(namespace, name));
      if (!stored) return this.#fail(404, "NotFound", "PUT", resource, name, namespace);
      if (resourceVersion && resourceVersion !== stored.metadata?.resourceVersion) {
        return this.#fail(409, "Conflict", "PUT", resource, name, namespace);
      }
      const next = options.subresource ? { ...stored, status: object.status } : {
        ...object,
        status: stored.status,
        metadata: { ...stored.metadata, ...object.metadata },
      };
      const operation = options.subresource ? undefined : "UPDATE";
      return this.#admitted(
        resource,
        "PUT",
        { operation, object: next, oldObject: stored },
        (admitted) =>
          this.#refusal("PUT", resource, admitted) ??
            Promise.resolve(this.#store(resource, admitted) as T),
      );
    });
  }

  /**
   * Server-side apply, simplified: the applied fields replace the stored
   * ones; the main resource keeps the stored status, and the status
   * subresource changes status alone (404 when the object does not exist).
   * An apply that creates is refused as a create is (404 for a namespace
   * that does not exist); any is refused when its CRD's schema says so (422)
   * or, but for status, when its admission denies it.
   */
  apply<T extends KubeObject>(resource: Resource, object: T, options: ApplyOptions): Promise<T> {
    return settled(() => {
      const { name = "", namespace } = object.metadata ?? {};
      const key = keyOf(namespace, name);
      this.applies.push(`${resource.plural}${options.subresource ? "/status" : ""} ${key}`);
      const stored = this.#stored(resource, key);
      if (options.subresource) {
        if (!stored) return this.#fail(404, "NotFound", "PATCH", resource, name, namespace);
        const next = { ...stored, status: object.status };
        return this.#refusal("PATCH", resource, next) ??
          Promise.resolve(this.#store(resource, next) as T);
      }
      const metadata = { ...stored?.metadata, ...object.metadata };
      const next = { ...object, status: stored?.status, metadata };
      const write = { operation: stored ? "UPDATE" as const : "CREATE" as const, object: next };
      return this.#admitted(
        resource,
        "PATCH",
        { ...write, oldObject: stored },
        (admitted) =>
          this.#refusal("PATCH", resource, admitted, { namespaced: !stored }) ??
            Promise.resolve(this.#store(resource, served(resource, admitted)) as T),
      );
    });
  }

  /**
   * A merge patch (also for `strategic`), a JSON patch, or an apply, admitted
   * as an update but for status. An object being deleted goes once its last
   * finalizer is removed.
   */
  patch<T extends KubeObject>(
    resource: Resource,
    name: string,
    patch: unknown,
    options: PatchOptions,
  ): Promise<T> {
    return settled(() => {
      if (options.type === "apply") {
        const fieldManager = options.fieldManager ?? "";
        const object = mergePatch({ metadata: { name, namespace: options.namespace } }, patch);
        return this.apply(resource, object as T, { ...options, fieldManager });
      }
      const key = keyOf(options.namespace, name);
      const stored = this.#stored(resource, key);
      if (!stored) return this.#fail(404, "NotFound", "PATCH", resource, name, options.namespace);
      const patched = options.type === "json"
        ? jsonPatch(stored, patch as Operation[])
        : mergePatch(stored, patch);
      if (patched === "failed test") {
        return this.#fail(422, "Invalid", "PATCH", resource, name, options.namespace);
      }
      const next = patched as KubeObject;
      const kept = options.subresource
        ? { ...stored, status: next.status }
        : { ...next, status: stored.status };
      const operation = options.subresource ? undefined : "UPDATE";
      return this.#admitted(
        resource,
        "PATCH",
        { operation, object: kept, oldObject: stored },
        (admitted) => {
          const refused = this.#refusal<T>("PATCH", resource, admitted);
          if (refused) return refused;
          if (admitted.metadata?.deletionTimestamp && !admitted.metadata.finalizers?.length) {
            this.remove(resource, key);
            return Promise.resolve(structuredClone(admitted) as KubeObject as T);
          }
          return Promise.resolve(this.#store(resource, admitted) as T);
        },
      );
    });
  }

  /**
   * Deletes, or marks for deletion while finalizers remain; 404 when there is
   * nothing, unless `ignoreNotFound`; the webhook's error when its admission
   * validates deletes and denies this one.
   */
  delete(resource: Resource, name: string, options: DeleteOptions = {}): Promise<void> {
    return settled(() => {
      const key = keyOf(options.namespace, name);
      const stored = this.#stored(resource, key);
      if (!stored) {
        if (options.ignoreNotFound) return Promise.resolve();
        return this.#fail(404, "NotFound", "DELETE", resource, name, options.namespace);
      }
      const webhooks = this.#webhooks;
      if (!webhooks?.admits(resource)) return Promise.resolve(this.#deleteNow(resource, key));
      const namespace = options.namespace;
      const path = resourcePath(resource, { ...(namespace && { namespace }), name });
      return webhooks.admit(resource, {
        operation: "DELETE",
        oldObject: stored,
        verb: "DELETE",
        path,
      })
        .then(() => this.#deleteNow(resource, key));
    });
  }

  #deleteNow(resource: Resource, key: ObjectKey): void {
    const stored = this.#of(resource).get(key);
    if (!stored) return;
    if (!stored.metadata?.finalizers?.length) this.remove(resource, key);
    else if (!stored.metadata.deletionTimestamp) {
      const deletionTimestamp = this.#stamp();
      this.put(resource, { ...stored, metadata: { ...stored.metadata, deletionTimestamp } });
    }
  }

  /**
   * Runs `resource`'s admission on a write (none without an `operation`: a
   * status write), then `then` with the object to store.
   */
  #admitted<T>(
    resource: Resource,
    verb: string,
    write: { operation?: AdmissionOperation; object: KubeObject; oldObject?: KubeObject },
    then: (object: KubeObject) => Promise<T>,
  ): Promise<T> {
    const webhooks = this.#webhooks;
    const operation = write.operation;
    if (!operation || !webhooks?.admits(resource)) return then(write.object);
    const { name = "", namespace } = write.object.metadata ?? {};
    const path = resourcePath(resource, { ...(namespace && { namespace }), name });
    return webhooks.admit(resource, { ...write, operation, verb, path })
      .then((admitted) => then(admitted ?? write.object));
  }

  /** The stored object under `key`, in the version `resource` names. */
  #stored(resource: Resource, key: ObjectKey): KubeObject | undefined {
    const object = this.#of(resource).get(key);
    return object && this.#served(resource, object);
  }

  /** A stored object in the version `resource` names, converted when its kind has a conversion. */
  #served(resource: Resource, object: KubeObject): KubeObject {
    return this.#webhooks?.convert(resource, object, resource.version) ?? object;
  }

  /**
   * Stores `object`, written in the version `resource` names, in its kind's
   * storage version (the CRD's, else the conversion's hub); returns it as
   * stored, in the version written.
   */
  #store(resource: Resource, object: KubeObject): KubeObject {
    const webhooks = this.#webhooks;
    const hub = webhooks?.hub(resource);
    if (!webhooks || hub === undefined) return this.put(resource, object);
    const requested = resource.group ? `${resource.group}/${resource.version}` : resource.version;
    const written = { ...object, apiVersion: object.apiVersion ?? requested };
    const storage = crdStorageVersion(this.#crd(resource)) ?? hub;
    return this.#served(resource, this.put(resource, webhooks.convert(resource, written, storage)));
  }

  /** The CRD of `resource`, when the cluster holds it. */
  #crd(resource: Resource): KubeObject | undefined {
    return this.#of(CUSTOM_RESOURCE_DEFINITIONS).get(resourceName(resource));
  }

  /** RFC 3339 at second precision, as the API server writes `metav1.Time`. */
  #stamp(): string {
    return new Date(this.#now()).toISOString().replace(/\.\d+Z$/, "Z");
  }

  #selector(options: { namespace?: string; labelSelector?: string }): (o: KubeObject) => boolean {
    const labels = labelMatcher(options.labelSelector);
    const namespace = options.namespace;
    return (object) =>
      (namespace === undefined || object.metadata?.namespace === namespace) &&
      labels(object.metadata?.labels ?? {});
  }

  /**
   * A copy of `object` in the version `resource` names, or of its metadata
   * alone as `PartialObjectMetadata`.
   */
  #view(resource: Resource, object: KubeObject, metadataOnly: boolean | undefined): KubeObject {
    if (!metadataOnly) return structuredClone(this.#served(resource, object));
    const metadata = structuredClone(object.metadata);
    return { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata };
  }

  #changed(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        this.#wake.delete(wake);
        signal?.removeEventListener("abort", wake);
        resolve();
      };
      this.#wake.add(wake);
      signal?.addEventListener("abort", wake, { once: true });
    });
  }

  /**
   * Why the API server would refuse to store `object`, as the rejected
   * promise of the write; `undefined` when it would store it. With
   * `namespaced`, the write creates, and its namespace must exist.
   */
  #refusal<T>(
    verb: string,
    resource: Resource,
    object: KubeObject,
    { namespaced = false } = {},
  ): Promise<T> | undefined {
    const { name = "", namespace } = object.metadata ?? {};
    const crd = this.#crd(resource);
    const schema = crd && crdSchema(crd, resource.version);
    const errors = schema ? schemaErrors(schema, object) : [];
    if (errors.length > 0) {
      const message = invalidMessage(resource.kind, resource.group, name, errors);
      return this.#fail(422, "Invalid", verb, resource, name, namespace, {
        message,
        causes: errors,
      });
    }
    if (namespaced && resource.namespaced && namespace && !this.#of(NAMESPACES).has(namespace)) {
      const message = `namespaces "${namespace}" not found`;
      return this.#fail(404, "NotFound", verb, resource, name, namespace, { message });
    }
    return undefined;
  }

  #fail<T>(
    status: number,
    reason: string,
    verb: string,
    resource: Resource,
    name: string,
    namespace?: string,
    details: { message?: string; causes?: StatusCause[] } = {},
  ): Promise<T> {
    const message = details.message ??
      (reason === "Conflict"
        ? `the object has been modified; please apply your changes to the latest version`
        : `${resource.plural} "${name}" ${FAILURES[reason] ?? reason}`);
    return Promise.reject(
      new ApiError({
        status,
        reason,
        message,
        ...(details.causes && { causes: details.causes }),
        verb,
        path: resourcePath(resource, { ...(namespace && { namespace }), name }),
      }),
    );
  }

  #of(resource: Resource): Map<ObjectKey, KubeObject> {
    const id = resourceName(resource);
    let objects = this.#objects.get(id);
    if (!objects) this.#objects.set(id, objects = new Map());
    return objects;
  }

  #record(resource: Resource, type: Change["type"], object: KubeObject, before?: KubeObject) {
    this.#log.push({
      rv: this.#rv,
      id: resourceName(resource),
      type,
      object,
      ...(before && { before }),
    });
    const m = object.metadata!;
    this.changes.push(`${type} ${resource.plural} ${keyOf(m.namespace, m.name!)}`);
    for (const wake of [...this.#wake]) wake();
  }
}

/**
 * What `body` returns, or a rejection with the API error it throws (a failed
 * conversion): the API server's answers reject, while misuse still throws.
 */
function settled<T>(body: () => Promise<T>): Promise<T> {
  try {
    return body();
  } catch (error) {
    if (error instanceof ApiError) return Promise.reject(error);
    throw error;
  }
}

/** The end of the API server's message for a refusal, after `plural "name"`. */
const FAILURES: Record<string, string> = {
  NotFound: "not found",
  AlreadyExists: "already exists",
  Invalid: "failed a test",
};
