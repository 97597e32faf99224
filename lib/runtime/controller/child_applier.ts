/**
 * The owned children of a controller, applied through one component: a
 * controller declares what it owns (`owns`) and how a child is written
 * (`applyChild`, usually a server-side apply with its field manager) once, and
 * every reconcile gets the same {@link Children} in its context.
 *
 * The applier skips the write when the cached child is exactly as this
 * controller last applied it: same desired content, and no change by anyone
 * since (its `metadata.generation`, or `resourceVersion` for kinds without
 * one, is what the last apply returned). Most reconciles are triggered by a
 * child's status moving, and need no write at all.
 *
 * Note: the record is in memory, so a restarted controller applies every
 * child once; and a change by someone else to a child's metadata alone (which
 * does not move its generation) is repaired with the next change of its spec.
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
import type { KubeObject, Resource } from "../../kube/types.ts";
import { objectKey } from "../../kube/object_key.ts";
import type { CacheReader, Store } from "../cache/store.ts";

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
   * write was skipped.
   *
   * @throws {TypeError} when the controller does not own `resource` or declares no `applyChild`.
   */
  apply<C extends KubeObject>(resource: Resource, desired: C, signal: AbortSignal): Promise<C>;
}

interface Applied {
  hash: number;
  revision: string;
}

/** Applies children and remembers what it applied; one per controller. */
export class ChildApplier {
  readonly #write: ApplyChild;
  /** By `plural/namespace/name`: what was applied last and the revision it produced. */
  readonly #applied = new Map<string, Applied>();

  /** Creates an applier that writes with `write`. */
  constructor(write: ApplyChild) {
    this.#write = write;
  }

  /** Children with a record. */
  get size(): number {
    return this.#applied.size;
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
    const id = `${resource.plural}/${key}`;
    const hash = hashJson(desired);
    const cached = cache.get(key);
    const record = this.#applied.get(id);
    if (cached && record?.hash === hash && revision(cached) === record.revision) {
      return cached as C;
    }
    const applied = await this.#write(resource, desired, signal);
    this.#applied.set(id, { hash, revision: revision(applied) });
    return applied as C;
  }

  /** Keeps the records in step with `store`: a deleted child loses its record. */
  track(resource: Resource, store: Store): void {
    store.subscribe((change) => {
      if (change.type === "delete") this.#applied.delete(`${resource.plural}/${change.key}`);
    });
  }
}

function revision(object: KubeObject): string {
  const m = object.metadata;
  return m?.generation !== undefined ? `g${m.generation}` : `r${m?.resourceVersion}`;
}

/** A 53-bit hash of the object's JSON (cyrb53): enough to tell desired states apart. */
function hashJson(value: unknown): number {
  const text = JSON.stringify(value);
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
