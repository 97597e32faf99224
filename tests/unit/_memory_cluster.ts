/**
 * An in-memory stand-in for the API server's list, watch, get and apply, for
 * unit tests of the controller, caches, reflector and manager: pure logic
 * driven by a fake clock. Objects get increasing resourceVersions; a watch
 * delivers every change after the version it starts from. Deleting an object
 * with finalizers marks it, and removing its last finalizer deletes it. Label
 * selectors, pagination, streaming lists and all but the finalizer paths of
 * JSON patches are not modelled (use `streamingList: "off"`).
 *
 * @module
 */
import {
  ApiError,
  keyOf,
  type KubeList,
  type KubeObject,
  type Resource,
  resourcePath,
  type WatchEvent,
} from "../../lib/kube/mod.ts";
import type { CacheClient } from "../../lib/runtime/mod.ts";
import { Happenings } from "./_until.ts";

interface Change {
  rv: number;
  plural: string;
  event: WatchEvent;
}

/** Objects by resource, a log of changes, and watches that follow the log. */
export class MemoryCluster implements CacheClient {
  #rv = 0;
  readonly #objects = new Map<string, Map<string, KubeObject>>();
  readonly #log: Change[] = [];
  readonly #wake = new Set<() => void>();
  /** Every change, in order, as `TYPE plural namespace/name`. */
  readonly changes: Happenings<string> = new Happenings();
  /** Every apply, in order, as `plural namespace/name` (`plural/status` for status). */
  readonly applies: string[] = [];

  /** Creates or replaces `object`, bumping its resourceVersion (and its generation when `spec` changed). */
  put<T extends KubeObject>(resource: Resource, object: T): T {
    const objects = this.#of(resource);
    const key = keyOf(object.metadata?.namespace, object.metadata!.name!);
    const before = objects.get(key);
    const specChanged = JSON.stringify(before?.spec) !== JSON.stringify(object.spec);
    const generation = (before?.metadata?.generation ?? 0) + (before && !specChanged ? 0 : 1);
    const stored = {
      ...object,
      metadata: {
        uid: before?.metadata?.uid ?? `uid-${key}`,
        ...object.metadata,
        generation,
        resourceVersion: String(++this.#rv),
      },
    } as T;
    objects.set(key, stored);
    this.#record(resource, { type: before ? "MODIFIED" : "ADDED", object: stored });
    return stored;
  }

  /** Deletes the object under `key`, if any. */
  remove(resource: Resource, key: string): void {
    const object = this.#of(resource).get(key);
    if (!object) return;
    this.#of(resource).delete(key);
    const gone = {
      ...object,
      metadata: { ...object.metadata, resourceVersion: String(++this.#rv) },
    };
    this.#record(resource, { type: "DELETED", object: gone });
  }

  /** The stored object under `key`. */
  object<T extends KubeObject>(resource: Resource, key: string): T | undefined {
    return this.#of(resource).get(key) as T | undefined;
  }

  list<T extends KubeObject>(resource: Resource): Promise<KubeList<T>> {
    return Promise.resolve({
      metadata: { resourceVersion: String(this.#rv) },
      items: [...this.#of(resource).values()] as T[],
    });
  }

  async *watch<T extends KubeObject>(
    resource: Resource,
    options: { resourceVersion?: string; signal?: AbortSignal } = {},
  ): AsyncGenerator<WatchEvent<T>, void, undefined> {
    let seen = Number(options.resourceVersion ?? this.#rv);
    const signal = options.signal;
    while (!signal?.aborted) {
      const next = this.#log.find((c) => c.rv > seen && c.plural === resource.plural);
      if (next) {
        seen = next.rv;
        yield next.event as WatchEvent<T>;
        continue;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#wake.delete(wake);
          signal?.removeEventListener("abort", wake);
          resolve();
        };
        this.#wake.add(wake);
        signal?.addEventListener("abort", wake, { once: true });
      });
    }
  }

  get<T extends KubeObject>(
    resource: Resource,
    name: string,
    options: { namespace?: string } = {},
  ): Promise<T> {
    const object = this.#of(resource).get(keyOf(options.namespace, name));
    if (object) return Promise.resolve(object as T);
    return Promise.reject(
      new ApiError({
        status: 404,
        message: `${resource.plural} "${name}" not found`,
        verb: "GET",
        path: resourcePath(resource, { ...options, name }),
      }),
    );
  }

  /**
   * Server-side apply, simplified: the applied object replaces the stored
   * one, or only its status for the status subresource (which moves no
   * generation).
   */
  apply<T extends KubeObject>(
    resource: Resource,
    object: T,
    options: { subresource?: "status" } = {},
  ): Promise<T> {
    const m = object.metadata!;
    const key = keyOf(m.namespace, m.name!);
    const what = options.subresource ? `${resource.plural}/status` : resource.plural;
    this.applies.push(`${what} ${key}`);
    if (!options.subresource) return Promise.resolve(this.put(resource, object));
    const stored = this.#of(resource).get(key);
    if (!stored) return this.get(resource, m.name!, { namespace: m.namespace });
    return Promise.resolve(
      this.put<KubeObject>(resource, { ...stored, status: object.status }) as T,
    );
  }

  /** Creates `object`; 409 when it exists. */
  create<T extends KubeObject>(resource: Resource, object: T): Promise<T> {
    const m = object.metadata!;
    if (this.#of(resource).has(keyOf(m.namespace, m.name!))) {
      return Promise.reject(this.#error(409, "AlreadyExists", resource, m.name!, m.namespace));
    }
    return Promise.resolve(this.put(resource, object));
  }

  /** A merge patch, or a JSON patch of `/metadata/finalizers` (with its `test` ops). */
  patch<T extends KubeObject>(
    resource: Resource,
    name: string,
    patch: unknown,
    options: { type: string; namespace?: string },
  ): Promise<T> {
    const key = keyOf(options.namespace, name);
    const stored = this.#of(resource).get(key);
    if (!stored) {
      return Promise.reject(this.#error(404, "NotFound", resource, name, options.namespace));
    }
    let next: KubeObject;
    if (options.type === "json") {
      const finalizers = [...(stored.metadata?.finalizers ?? [])];
      for (const op of patch as { op: string; path: string; value?: unknown }[]) {
        const at = op.path.replace("/metadata/finalizers", "").replace(/^\//, "");
        if (op.op === "test") {
          const actual = op.path === "/metadata/resourceVersion"
            ? stored.metadata?.resourceVersion
            : at === ""
            ? finalizers
            : finalizers[Number(at)];
          if (JSON.stringify(actual) !== JSON.stringify(op.value)) {
            return Promise.reject(this.#error(422, "Invalid", resource, name, options.namespace));
          }
        } else if (op.op === "add") {
          if (at === "") finalizers.splice(0, finalizers.length, ...(op.value as string[]));
          else {finalizers.splice(
              at === "-" ? finalizers.length : Number(at),
              0,
              op.value as string,
            );}
        } else if (op.op === "remove") finalizers.splice(Number(at), 1);
      }
      next = { ...stored, metadata: { ...stored.metadata, finalizers } };
    } else {
      const p = patch as KubeObject;
      next = { ...stored, ...p, metadata: { ...stored.metadata, ...p.metadata } } as KubeObject;
    }
    if (next.metadata?.deletionTimestamp && !next.metadata.finalizers?.length) {
      this.remove(resource, key);
      return Promise.resolve(next as T);
    }
    return Promise.resolve(this.put(resource, next) as T);
  }

  /** Deletes, or marks for deletion while finalizers remain. */
  delete(resource: Resource, name: string, options: { namespace?: string } = {}): Promise<void> {
    const key = keyOf(options.namespace, name);
    const stored = this.#of(resource).get(key);
    if (!stored) {
      return Promise.reject(this.#error(404, "NotFound", resource, name, options.namespace));
    }
    if (!stored.metadata?.finalizers?.length) this.remove(resource, key);
    else {
      const deletionTimestamp = new Date(0).toISOString();
      this.put(resource, { ...stored, metadata: { ...stored.metadata, deletionTimestamp } });
    }
    return Promise.resolve();
  }

  #error(status: number, reason: string, resource: Resource, name: string, namespace?: string) {
    return new ApiError({
      status,
      reason,
      message: `${resource.plural} "${name}": ${reason}`,
      verb: "TEST",
      path: resourcePath(resource, { ...(namespace && { namespace }), name }),
    });
  }

  #of(resource: Resource): Map<string, KubeObject> {
    let objects = this.#objects.get(resource.plural);
    if (!objects) this.#objects.set(resource.plural, objects = new Map());
    return objects;
  }

  #record(resource: Resource, event: WatchEvent): void {
    this.#log.push({ rv: this.#rv, plural: resource.plural, event });
    const m = event.object.metadata!;
    this.changes.push(`${event.type} ${resource.plural} ${keyOf(m.namespace, m.name!)}`);
    for (const wake of [...this.#wake]) wake();
  }
}
