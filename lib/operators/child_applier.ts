/**
 * Server-side applies children, skipping the request when the cached child
 * is exactly as kinglet last applied it: same desired content, and no change
 * by anyone since (its `metadata.generation`, or `resourceVersion` for kinds
 * without one, is what the last apply returned). Most reconciles are
 * triggered by a child's status moving, and need no write at all.
 *
 * Note: the record is in memory, so a restarted operator applies every child
 * once; and a change by someone else to a child's metadata alone (which does
 * not move its generation) is repaired with the next change of its spec.
 *
 * @example
 * ```ts
 * import { ChildApplier } from "./child_applier.ts";
 * import type { OperatorDeps } from "./reconcile_support.ts";
 * declare const deps: OperatorDeps;
 * const children = new ChildApplier(deps);
 * children.size; // 0
 * ```
 *
 * @module
 */
import type { KubeObject, Resource } from "../kube/mod.ts";
import type { Store } from "../runtime/mod.ts";
import { applyChild, type OperatorDeps } from "./reconcile_support.ts";

interface Applied {
  hash: number;
  revision: string;
}

/** Applies children and remembers what it applied; one per controller. */
export class ChildApplier {
  readonly #deps: OperatorDeps;
  /** By `plural/namespace/name`: what was applied last and the revision it produced. */
  readonly #applied = new Map<string, Applied>();

  constructor(deps: OperatorDeps) {
    this.#deps = deps;
  }

  /** Children with a record. */
  get size(): number {
    return this.#applied.size;
  }

  /**
   * Applies `desired` unless `cache` shows it already in place; resolves to
   * the child as applied, or as cached when the apply was skipped.
   */
  async apply(
    resource: Resource,
    desired: KubeObject,
    cache: Store<KubeObject>,
    signal: AbortSignal,
  ): Promise<KubeObject> {
    const { name, namespace } = desired.metadata ?? {};
    const id = `${resource.plural}/${namespace}/${name}`;
    const hash = hashJson(desired);
    const cached = cache.get(namespace ? `${namespace}/${name}` : `${name}`);
    const record = this.#applied.get(id);
    if (cached && record?.hash === hash && revision(cached) === record.revision) return cached;
    const applied = await applyChild(this.#deps, resource, desired, signal);
    this.#applied.set(id, { hash, revision: revision(applied) });
    return applied;
  }

  /** Drops the records of children that are gone; call from the child cache's delete events. */
  forget(resource: Resource, namespace: string | undefined, name: string): void {
    this.#applied.delete(`${resource.plural}/${namespace}/${name}`);
  }

  /** Keeps the records in step with `cache`: a deleted child loses its record. */
  track(resource: Resource, cache: Store<KubeObject>): void {
    cache.subscribe((change) => {
      if (change.type !== "delete") return;
      const m = change.object?.metadata;
      if (m?.name) this.forget(resource, m.namespace, m.name);
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
