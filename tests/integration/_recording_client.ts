/**
 * A client for a manager over a real {@link KubeClient} that records every
 * list, watch and get request a cache makes, and every error a watch stream
 * ended with, so a test can tell a resumed watch from a relist and a cache
 * hit from a live GET. Writes go through unrecorded.
 *
 * @module
 */
import type { GetOptions, KubeClient, ListOptions, WatchOptions } from "../../lib/kube/client.ts";
import { ApiError } from "../../lib/kube/errors.ts";
import type { KubeList, KubeObject, Resource, WatchEvent } from "../../lib/kube/types.ts";
import type { ManagerClient } from "../../lib/runtime/manager/manager.ts";

/** One recorded request. */
export interface Recorded<O> {
  plural: string;
  options: O;
  at: number;
  /** A streaming list the server refused (no WatchList there): nothing was listed. */
  refused?: boolean;
}

/** What ended a watch stream with an error. */
export interface WatchFailure {
  plural: string;
  /** HTTP status of an API error (410 for Gone); undefined for a transport failure. */
  status: number | undefined;
  message: string;
}

/** Records and forwards; see the module documentation. */
export class RecordingClient implements ManagerClient {
  readonly lists: Recorded<ListOptions>[] = [];
  readonly watches: Recorded<WatchOptions>[] = [];
  readonly gets: Recorded<GetOptions & { name: string }>[] = [];
  readonly watchFailures: WatchFailure[] = [];
  readonly #inner: KubeClient;

  readonly create: KubeClient["create"];
  readonly apply: KubeClient["apply"];
  readonly patch: KubeClient["patch"];
  readonly replace: KubeClient["replace"];
  readonly delete: KubeClient["delete"];

  constructor(inner: KubeClient) {
    this.#inner = inner;
    this.create = inner.create.bind(inner);
    this.apply = inner.apply.bind(inner);
    this.patch = inner.patch.bind(inner);
    this.replace = inner.replace.bind(inner);
    this.delete = inner.delete.bind(inner);
  }

  list<T extends KubeObject>(res: Resource, opts: ListOptions = {}): Promise<KubeList<T>> {
    this.lists.push({ plural: res.plural, options: opts, at: Date.now() });
    return this.#inner.list<T>(res, opts);
  }

  get<T extends KubeObject>(res: Resource, name: string, opts: GetOptions = {}): Promise<T> {
    this.gets.push({ plural: res.plural, options: { ...opts, name }, at: Date.now() });
    return this.#inner.get<T>(res, name, opts);
  }

  async *watch<T extends KubeObject>(
    res: Resource,
    opts: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>, void, undefined> {
    const recorded: Recorded<WatchOptions> = { plural: res.plural, options: opts, at: Date.now() };
    this.watches.push(recorded);
    try {
      yield* this.#inner.watch<T>(res, opts);
    } catch (error) {
      if (opts.sendInitialEvents && error instanceof ApiError && error.status === 422) {
        recorded.refused = true;
      }
      this.watchFailures.push({
        plural: res.plural,
        status: error instanceof ApiError ? error.status : undefined,
        message: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
  }

  /**
   * Watch requests of `plural` that asked for the initial state and were not
   * refused, i.e. (re)lists by streaming.
   */
  streamingLists(plural: string): Recorded<WatchOptions>[] {
    return this.watches.filter((w) =>
      w.plural === plural && w.options.sendInitialEvents && !w.refused
    );
  }

  /** Requests that listed `plural` in full: first list pages and streaming lists. */
  fullLists(plural: string): number {
    return this.lists.filter((l) => l.plural === plural && !l.options.continue).length +
      this.streamingLists(plural).length;
  }
}
