/**
 * Feeds a {@link Store} from a {@link Watcher}: the cache half of the pipeline
 * (watcher → store), usable on its own.
 *
 * Note that the store is a cache: it may be stale by the latency of the
 * watch, and reconcilers must treat it as such (writes carry preconditions or
 * use server-side apply).
 *
 * @example
 * ```ts
 * import { Reflector } from "./reflector.ts";
 * import { Store } from "./store.ts";
 * import { listerWatcher, watcher } from "../watcher/watcher.ts";
 * import type { ListWatchClient } from "../watcher/watcher.ts";
 * import { CONFIG_MAPS } from "../../kube/resources.ts";
 * // Needs a cluster: `client` is usually a `KubeClient`.
 * async function example(client: ListWatchClient): Promise<void> {
 *   const reflector = new Reflector(new Store(), watcher(listerWatcher(client, CONFIG_MAPS)));
 *   const stop = new AbortController();
 *   const done = reflector.run(stop.signal);
 *   await reflector.synced;
 *   stop.abort();
 *   await done;
 * }
 * ```
 *
 * @module
 */
import type { KubeObject } from "../../kube/types.ts";
import type { Store, StoreBudget, StoreView } from "./store.ts";
import type { Watcher, WatcherEvent, WatcherFreshness } from "../watcher/watcher.ts";

/** Runs one watcher into one store. */
export class Reflector<T extends KubeObject = KubeObject> {
  /** The store this reflector fills, read-only: only the reflector writes it. */
  readonly store: StoreView<T>;
  /** The same store, writable: the one writer of the cache. */
  readonly #writer: Store<T>;
  readonly #watcher: Watcher<KubeObject>;
  readonly #synced: PromiseWithResolvers<void> = Promise.withResolvers();

  /** Feeds `store` from `watcher` once {@link Reflector.run} is called; `store` is its alone then. */
  constructor(store: Store<T>, watcher: Watcher<KubeObject>) {
    this.store = store;
    this.#writer = store;
    this.#watcher = watcher;
  }

  /**
   * Applies one watcher event to the store, as {@link Reflector.run} does for
   * each event of its watcher: for a tool or test that feeds a reflector by
   * hand. Do not call it while the reflector runs.
   */
  feed(event: WatcherEvent<KubeObject>): void {
    this.#writer.apply(event);
    if (event.type === "initDone") this.#synced.resolve();
  }

  /**
   * Changes the store's budget (a memory limit's level changed), evicting
   * down to it at once.
   *
   * @throws {TypeError} when the store was created without a budget.
   */
  setBudget(budget: StoreBudget | undefined): void {
    this.#writer.setBudget(budget);
  }

  /** Resolves after the first complete list is in the store. */
  get synced(): Promise<void> {
    return this.#synced.promise;
  }

  /** How current the store is, for readiness probes. */
  get freshness(): WatcherFreshness {
    return this.#watcher.freshness;
  }

  /**
   * Applies watch events to the store until `signal` aborts. Never throws on
   * watch errors: the watcher recovers from them itself.
   */
  async run(signal: AbortSignal): Promise<void> {
    const events = this.#watcher.events(signal);
    try {
      while (await this.#applyNext(events));
    } finally {
      await events.return();
    }
  }

  /**
   * Applies one event; false once the watcher ended. One call per event
   * because a `for await` loop would hold the last page of a list while the
   * next one is read.
   */
  async #applyNext(events: AsyncGenerator<WatcherEvent<KubeObject>, void>): Promise<boolean> {
    const next = await events.next();
    if (next.done) return false;
    this.feed(next.value);
    return true;
  }
}
