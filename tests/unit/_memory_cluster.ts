/**
 * An in-memory stand-in for the API server's list, watch, get and apply, for
 * unit tests of the controller, caches, reflector and manager: pure logic
 * driven by a fake clock. Objects get increasing resourceVersions; a watch
 * delivers every change after the version it starts from. Label selectors,
 * pagination and streaming lists are not modelled (use `streamingList: "off"`).
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
  /** Every apply, in order, as `plural namespace/name`. */
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

  /** Server-side apply, simplified: the applied object replaces the stored one. */
  apply<T extends KubeObject>(resource: Resource, object: T): Promise<T> {
    const m = object.metadata!;
    this.applies.push(`${resource.plural} ${keyOf(m.namespace, m.name!)}`);
    return Promise.resolve(this.put(resource, object));
  }

  #of(resource: Resource): Map<string, KubeObject> {
    let objects = this.#objects.get(resource.plural);
    if (!objects) this.#objects.set(resource.plural, objects = new Map());
    return objects;
  }

  #record(resource: Resource, event: WatchEvent): void {
    this.#log.push({ rv: this.#rv, plural: resource.plural, event });
    for (const wake of [...this.#wake]) wake();
  }
}
