/**
 * The caches one controller reads: registered once per `owns` and `watches`
 * entry (and the primary) in a shared {@link Caches}, and looked up by
 * resource for a reconcile's `context.cache`.
 *
 * @module
 */
import { resourceId } from "../../kube/resources.ts";
import type { KubeObject, Resource } from "../../kube/types.ts";
import type { CacheOptions, Caches } from "../cache/caches.ts";
import type { Reflector } from "../cache/reflector.ts";
import type { CacheReader } from "../cache/store.ts";

/** The reflectors of one controller; see the module documentation. */
export class ControllerCaches {
  /** Every reflector this controller reads, the primary's first. */
  readonly reflectors: Reflector[] = [];
  readonly #name: string;
  readonly #caches: Caches;
  /** What `cache` answers: the first cache registered per resource. */
  readonly #byResource = new Map<string, Reflector>();

  /** The caches of the controller called `name`, registered in `caches`. */
  constructor(name: string, caches: Caches) {
    this.#name = name;
    this.#caches = caches;
  }

  /** The reflector of `resource` shaped by `options`, shared with whoever registered the same. */
  register<T extends KubeObject = KubeObject>(
    resource: Resource,
    options: CacheOptions<T>,
  ): Reflector<T> {
    const reflector = this.#caches.reflector(resource, options) as unknown as Reflector;
    if (!this.reflectors.includes(reflector)) this.reflectors.push(reflector);
    const id = resourceId(resource);
    if (!this.#byResource.has(id)) this.#byResource.set(id, reflector);
    return reflector as unknown as Reflector<T>;
  }

  /**
   * The cache of `resource`, read-only: what `context.cache` answers. A
   * function of its own, so a context lends it as it is.
   *
   * @throws {TypeError} when the controller neither owns nor watches `resource`.
   */
  readonly cache = <C extends KubeObject>(resource: Resource): CacheReader<C> => {
    const reflector = this.#byResource.get(resourceId(resource));
    if (!reflector) {
      throw new TypeError(
        `Controller '${this.#name}' has no cache of ${resource.plural}: add it to 'owns' or 'watches'`,
      );
    }
    return reflector.store as unknown as CacheReader<C>;
  };

  /** Resolves when every cache registered has its first complete list. */
  get synced(): Promise<void> {
    return Promise.all(this.reflectors.map((r) => r.synced)).then(() => {});
  }
}
