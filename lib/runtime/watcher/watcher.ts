/**
 * Watches a resource, with error recovery.
 *
 * A {@link Watcher} lists a resource, then watches it from the list's
 * resourceVersion, and keeps doing so for as long as the caller iterates
 * {@link Watcher.events}. It is an explicit state machine advanced by one
 * `step` function:
 *
 * ```
 *        init                initPage…     initDone
 * empty ──────► initListing(continue) ──────► listed(rv) ──────► initListed(rv) ──► watching(rv, stream)
 *   └─────────► initStreaming(stream, batch) ─► listed(rv, stream) ─────────────────────┘
 *        init                        initPage…               initDone
 * ```
 *
 * What the caller must know:
 *
 * - A list arrives in pieces, in kube-runtime's vocabulary: `init` when it
 *   begins, an `initPage` per page (for a streaming list, per `pageSize`
 *   initial events), then `initDone` with the resourceVersion the watch goes
 *   on from. Only the complete list replaces what was known, so a consumer
 *   builds the new view aside and swaps it in on `initDone` (the cache's
 *   store does). The watcher holds at most one page at a time: nothing of a
 *   page is kept once it is yielded. The first `initDone` is what "synced"
 *   means.
 * - A list can start over before its `initDone`: after an expired continue
 *   token (410), a streaming list that failed or that the server turned out
 *   not to support, another `init` comes, and what the unfinished list
 *   delivered must be dropped.
 * - It gives up only on a Deno permission denial, which it throws: no
 *   retry can widen the process's grants. Other errors are logged with the resource and what happens
 *   next (an unreachable server once per retry round through the shared
 *   {@link WatcherOptions.outage}, the rest of the round at debug), then retried after a backoff with jitter: a failed watch resumes from
 *   the last resourceVersion seen (after five failures in a row, it relists),
 *   a 410 Gone relists from scratch (the objects deleted meanwhile are those
 *   missing from the new list).
 * - A watch that delivers neither an event nor a bookmark, and is not ended
 *   by the server, within its stall deadline (by default the request's
 *   `timeoutSeconds` plus 30 s) is torn down and resumed over a new connection (see
 *   {@link ListerWatcher.reconnect}): half-open connections and proxies that
 *   swallow streams do not freeze the cache.
 * - Aborting the signal given to {@link Watcher.events} cancels the request in
 *   flight and ends the iteration without an error.
 *
 * @example
 * ```ts
 * import { watcher } from "./watcher.ts";
 * // Usually `listerWatcher(client, CONFIG_MAPS)`; here, an empty collection.
 * const configMaps = watcher({
 *   list: () => Promise.resolve({ metadata: { resourceVersion: "1" }, items: [] }),
 *   watch: async function* () {},
 * }, { streamingList: "off" });
 * const stop = new AbortController();
 * for await (const event of configMaps.events(stop.signal)) {
 *   if (event.type === "initDone") stop.abort(); // every initPage since the last init came before
 * }
 * ```
 *
 * @module
 */
import {
  ApiError,
  describeError,
  isForbidden,
  isGone,
  isTooManyRequests,
  isUnauthorized,
  TransportError,
} from "../../kube/errors.ts";
import type { KubeList, KubeObject } from "../../kube/types.ts";
import { logger } from "../../log.ts";
import { Backoff } from "../../async/backoff.ts";
import { type Clock, systemClock } from "../../async/clock.ts";
import { OutageReport } from "./outage.ts";
import { StreamingLists } from "./streaming_lists.ts";
import { type Pull, WatchStream } from "./_watch_stream.ts";

export {
  type ListerWatcher,
  listerWatcher,
  type ListerWatcherOptions,
  type ListPageOptions,
  type ListWatchClient,
  type WatchStreamOptions,
} from "./_lister_watcher.ts";
import type { ListerWatcher, WatchStreamOptions } from "./_lister_watcher.ts";

const log = logger("watcher");

/** What a {@link Watcher} yields. */
export type WatcherEvent<T extends KubeObject = KubeObject> =
  /**
   * A list begins; what it delivers up to `initDone` replaces everything
   * known. Comes again when the list starts over: drop what the unfinished
   * one delivered.
   */
  | { type: "init" }
  /** Objects of the list begun by the last `init`, at most `pageSize` of them. */
  | { type: "initPage"; objects: T[] }
  /** The list begun by the last `init` is complete, as of `resourceVersion`. */
  | { type: "initDone"; resourceVersion: string }
  /** An object was created or changed. */
  | { type: "applied"; object: T }
  /** An object is gone; `object` is its last state. */
  | { type: "deleted"; object: T }
  /** Nothing changed up to `resourceVersion`; proof that the watch is alive. */
  | { type: "bookmark"; resourceVersion: string };

/** Options of {@link watcher}. */
export interface WatcherOptions {
  /**
   * Objects per page of a paginated list, and per `initPage` of a streaming
   * one. Defaults to 500.
   */
  pageSize?: number;
  /**
   * `"auto"` first tries a streaming list (a watch with `sendInitialEvents`)
   * and, if the server rejects it, falls back to paginated lists for as long
   * as {@link WatcherOptions.streamingLists} lives. `"off"` always lists in
   * pages. Defaults to `"auto"`.
   */
  streamingList?: "auto" | "off";
  /**
   * What the server answered to streaming lists. Share one among the
   * watchers of a client, so that a server without them is asked, and told
   * about, once. Defaults to one of this watcher's own.
   */
  streamingLists?: StreamingLists;
  /**
   * Server-side timeout of each watch request, in seconds. Defaults to a
   * random value in [300, 600) per request, as client-go does, so that many
   * watchers do not reconnect in step.
   */
  timeoutSeconds?: number;
  /**
   * A watch that delivers no event nor bookmark, and is not ended by the
   * server, for this long is restarted from the last resourceVersion.
   * Defaults to what the server promises: it ends every watch after the
   * request's `timeoutSeconds` (sending a last bookmark first where it sends
   * bookmarks), so a watch silent for `timeoutSeconds` plus 30 s is stalled,
   * whatever it watches. Bookmarks alone promise nothing: a label-filtered
   * watch of a resource nobody writes may hear none for minutes. Set it
   * shorter to notice a half-open connection sooner, at the price of
   * restarting quiet watches.
   */
  stallTimeoutMs?: number;
  /** Delays between retries; reset by every success. Defaults to `new Backoff()`. */
  backoff?: Backoff;
  /** Defaults to {@link systemClock}. */
  clock?: Clock;
  /**
   * Where failures to reach the API server at all are reported. Share one
   * among the watchers of a client, so that an unreachable server is logged
   * once per retry round rather than once per watcher. Defaults to one of
   * this watcher's own.
   */
  outage?: OutageReport;
}

/** How current a {@link Watcher}'s view is; read by readiness probes. */
export interface WatcherFreshness {
  /** Whether a complete list was delivered. Stays true across relists. */
  synced: boolean;
  /**
   * `clock.now()` when the watcher last had proof that its view was current:
   * a completed list, an event, a bookmark, or a watch the server closed
   * normally. Undefined before the first.
   */
  lastActivityAt: number | undefined;
  /** Recoveries so far: failed requests, 410 Gone answers and stalls. */
  restarts: number;
  /** Where the next watch resumes; undefined before the first list. */
  resourceVersion: string | undefined;
  /** Why the last request failed; absent once a list, event or bookmark arrived since. */
  lastError?: string;
}

const DEFAULT_PAGE_SIZE = 500;
/** How long past its `timeoutSeconds` a watch may stay open and silent before it counts as stalled. */
const STALL_GRACE_MS = 30_000;
const MIN_WATCH_TIMEOUT_SECONDS = 300;
/** A watch the server closes sooner than this, having sent nothing, is treated as a failure. */
const QUICK_CLOSE_MS = 1_000;
const INITIAL_EVENTS_END = "k8s.io/initial-events-end";
/** Failed watches in a row, resumed at the same resourceVersion, before a relist instead. */
const RELIST_AFTER_FAILURES = 5;

/** `count` is the number of objects the list delivered so far, for the log. */
type State<T extends KubeObject> =
  | { kind: "empty" }
  | { kind: "initListing"; continueToken: string | undefined; count: number }
  /** `batch` collects initial events up to a page. */
  | { kind: "initStreaming"; stream: WatchStream<T>; batch: T[]; count: number }
  /** A list has delivered its last page; a streaming list keeps its stream to watch on. */
  | {
    kind: "listed";
    resourceVersion: string;
    count: number;
    how: string;
    stream?: WatchStream<T>;
  }
  | { kind: "initListed"; resourceVersion: string }
  | { kind: "watching"; resourceVersion: string; stream: WatchStream<T> }
  | { kind: "backingOff"; delayMs: number; then: State<T> };

interface Step<T extends KubeObject> {
  event?: WatcherEvent<T>;
  next: State<T>;
}

const EMPTY = { kind: "empty" } as const;

/**
 * Lists and watches one resource forever, recovering from every error; see
 * the module documentation for the guarantees.
 */
export class Watcher<T extends KubeObject = KubeObject> {
  readonly #lw: ListerWatcher<T>;
  readonly #what: string;
  readonly #pageSize: number;
  readonly #timeoutSeconds: number | undefined;
  readonly #stallTimeoutMs: number | undefined;
  readonly #backoff: Backoff;
  readonly #clock: Clock;
  readonly #outage: OutageReport;
  /** False when the caller turned streaming lists off. */
  readonly #streaming: boolean;
  readonly #streamingLists: StreamingLists;
  #running = false;
  #synced = false;
  #lastActivityAt: number | undefined;
  #restarts = 0;
  #resourceVersion: string | undefined;
  #lastError: string | undefined;

  /**
   * Creates a watcher; nothing is requested before {@link Watcher.events} is iterated.
   *
   * @throws {RangeError} when an option is out of range.
   */
  constructor(lw: ListerWatcher<T>, options: WatcherOptions = {}) {
    this.#lw = lw;
    this.#what = lw.description ?? "a resource";
    this.#pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    this.#timeoutSeconds = options.timeoutSeconds;
    this.#stallTimeoutMs = options.stallTimeoutMs;
    this.#backoff = options.backoff ?? new Backoff();
    this.#clock = options.clock ?? systemClock;
    this.#outage = options.outage ?? new OutageReport();
    this.#streaming = (options.streamingList ?? "auto") === "auto";
    this.#streamingLists = options.streamingLists ?? new StreamingLists();
    const fail = (what: string) => {
      throw new RangeError(`Cannot create the watcher of ${this.#what}: ${what}`);
    };
    if (!Number.isSafeInteger(this.#pageSize) || this.#pageSize < 1) {
      fail(`'pageSize' must be a positive integer, got ${this.#pageSize}`);
    }
    const timeout = this.#timeoutSeconds;
    if (timeout !== undefined && (!Number.isSafeInteger(timeout) || timeout < 1)) {
      fail(`'timeoutSeconds' must be a positive integer, got ${timeout}`);
    }
    if (this.#stallTimeoutMs !== undefined && !(this.#stallTimeoutMs > 0)) {
      fail(`'stallTimeoutMs' must be positive, got ${this.#stallTimeoutMs}`);
    }
    if (options.streamingList !== undefined && !["auto", "off"].includes(options.streamingList)) {
      fail(`'streamingList' must be "auto" or "off", got ${JSON.stringify(options.streamingList)}`);
    }
  }

  /** A snapshot of how current this watcher is. */
  get freshness(): WatcherFreshness {
    return {
      synced: this.#synced,
      lastActivityAt: this.#lastActivityAt,
      restarts: this.#restarts,
      resourceVersion: this.#resourceVersion,
      ...(this.#lastError !== undefined && { lastError: this.#lastError }),
    };
  }

  /**
   * Lists, then watches, yielding what changes, until `signal` aborts or the
   * caller stops iterating. Only one iteration may run at a time.
   *
   * @throws {TypeError} when another iteration of this watcher is running.
   */
  async *events(signal?: AbortSignal): AsyncGenerator<WatcherEvent<T>, void, undefined> {
    if (this.#running) {
      throw new TypeError(
        `Cannot watch ${this.#what}: this watcher is already being iterated; create another one`,
      );
    }
    this.#running = true;
    const stop = signal ?? new AbortController().signal;
    let state: State<T> = EMPTY;
    try {
      while (!stop.aborted) {
        let step: Step<T>;
        try {
          step = await this.#step(state, stop);
        } catch (error) {
          if (stop.aborted) return;
          throw error;
        }
        state = step.next;
        if (step.event) yield step.event;
      }
    } finally {
      if ("stream" in state) state.stream?.close();
      this.#running = false;
    }
  }

  /** Advances the state machine by one request or one event. */
  async #step(state: State<T>, signal: AbortSignal): Promise<Step<T>> {
    switch (state.kind) {
      case "empty": {
        const event = { type: "init" } as const;
        if (!this.#streaming || !this.#streamingLists.worth) {
          return { event, next: { kind: "initListing", continueToken: undefined, count: 0 } };
        }
        return {
          event,
          next: {
            kind: "initStreaming",
            batch: [],
            count: 0,
            stream: this.#open({
              sendInitialEvents: true,
              resourceVersionMatch: "NotOlderThan",
              allowWatchBookmarks: true,
            }, signal),
          },
        };
      }
      case "initListing":
        return await this.#listPage(state, signal);
      case "initStreaming":
        return await this.#streamInitialEvents(state, signal);
      case "listed":
        return this.#listed(state);
      case "initListed": {
        const { resourceVersion } = state;
        const stream = this.#open({ resourceVersion, allowWatchBookmarks: true }, signal);
        return { next: { kind: "watching", resourceVersion, stream } };
      }
      case "watching":
        return await this.#watch(state, signal);
      case "backingOff":
        await this.#clock.sleep(state.delayMs, signal);
        return { next: state.then };
    }
  }

  async #listPage(
    state: Extract<State<T>, { kind: "initListing" }>,
    signal: AbortSignal,
  ): Promise<Step<T>> {
    let page: KubeList<T>;
    try {
      page = await this.#lw.list({ limit: this.#pageSize, continue: state.continueToken, signal });
    } catch (error) {
      signal.throwIfAborted();
      // An expired continue token is a 410 too: the only way on is a new list.
      return isGone(error)
        ? this.#retry(error, EMPTY, "listing again from the start")
        : this.#retry(error, state, "retrying the same page");
    }
    const count = state.count + page.items.length;
    const event = page.items.length > 0
      ? { type: "initPage" as const, objects: page.items }
      : undefined;
    if (page.metadata.continue) {
      return { event, next: { kind: "initListing", continueToken: page.metadata.continue, count } };
    }
    const resourceVersion = page.metadata.resourceVersion;
    if (!resourceVersion) {
      const error = new TypeError("the list has no metadata.resourceVersion to watch from");
      return this.#retry(error, EMPTY, "listing again");
    }
    return { event, next: { kind: "listed", resourceVersion, count, how: "list" } };
  }

  async #streamInitialEvents(
    state: Extract<State<T>, { kind: "initStreaming" }>,
    signal: AbortSignal,
  ): Promise<Step<T>> {
    const pull = await this.#pull(state.stream, signal);
    if (pull.kind !== "event") {
      state.stream.close();
      if (pull.kind === "error" && rejectsStreamingList(pull.error)) {
        return this.#fallBackToPages(`HTTP ${pull.error.status}`);
      }
      if (pull.kind === "stall") this.#lw.reconnect?.();
      const error = pull.kind === "error"
        ? pull.error
        : pull.kind === "stall"
        ? new Error(`no initial event within ${state.stream.stallMs} ms`)
        : new Error("the stream ended before the end of its initial events");
      return this.#retry(error, EMPTY, "starting the streaming list again");
    }
    const { type, object } = pull.event;
    const { stream, batch, count } = state;
    if (type === "ADDED") {
      batch.push(object);
      if (batch.length < this.#pageSize) return { next: state };
      return {
        event: { type: "initPage", objects: batch },
        next: { kind: "initStreaming", stream, batch: [], count: count + batch.length },
      };
    }
    if (type === "BOOKMARK") {
      if (object.metadata?.annotations?.[INITIAL_EVENTS_END] !== "true") return { next: state };
      const resourceVersion = object.metadata.resourceVersion;
      if (resourceVersion) {
        return {
          event: batch.length > 0 ? { type: "initPage", objects: batch } : undefined,
          next: {
            kind: "listed",
            resourceVersion,
            count: count + batch.length,
            how: "streaming list",
            stream,
          },
        };
      }
    }
    // A server that ignores `sendInitialEvents` streams live changes without the end marker.
    state.stream.close();
    return this.#fallBackToPages(`a ${type} event came before the end of the initial events`);
  }

  async #watch(
    state: Extract<State<T>, { kind: "watching" }>,
    signal: AbortSignal,
  ): Promise<Step<T>> {
    const { stream, resourceVersion } = state;
    const pull = await this.#pull(stream, signal);
    const resume: State<T> = { kind: "initListed", resourceVersion };
    switch (pull.kind) {
      case "event": {
        this.#backoff.reset();
        const { type, object } = pull.event;
        const rv = object.metadata?.resourceVersion || resourceVersion;
        this.#resourceVersion = rv;
        const next: State<T> = rv === resourceVersion ? state : { ...state, resourceVersion: rv };
        if (type === "BOOKMARK") return { event: { type: "bookmark", resourceVersion: rv }, next };
        if (type === "DELETED") return { event: { type: "deleted", object }, next };
        return { event: { type: "applied", object }, next };
      }
      case "end":
        stream.close();
        if (!stream.delivered && this.#clock.now() - stream.openedAt < QUICK_CLOSE_MS) {
          const error = new Error("the API server closed the watch as soon as it opened");
          return this.#retry(
            error,
            resume,
            `watching again from resourceVersion ${resourceVersion}`,
          );
        }
        this.#lastActivityAt = this.#clock.now();
        log.debug("Watch of {resource} closed by the server; resuming from {resourceVersion}", {
          resource: this.#what,
          resourceVersion,
        });
        return { next: resume };
      case "error":
        stream.close();
        if (isGone(pull.error)) {
          return this.#retry(pull.error, EMPTY, `relisting, since ${resourceVersion} is too old`);
        }
        if (this.#backoff.attempts + 1 >= RELIST_AFTER_FAILURES) {
          // Some failures recur at the same resourceVersion (the API server answers a watch
          // resumed at a compaction boundary with 500 "PrevKv=nil"): a relist gets past them.
          return this.#retry(pull.error, EMPTY, `relisting after repeated failures`);
        }
        return this.#retry(pull.error, resume, `resuming from resourceVersion ${resourceVersion}`);
      case "stall": {
        stream.close();
        this.#lw.reconnect?.();
        const error = new Error(`no event nor bookmark for ${stream.stallMs} ms`);
        return this.#retry(error, resume, `restarting the watch from ${resourceVersion}`);
      }
    }
  }

  #listed(state: Extract<State<T>, { kind: "listed" }>): Step<T> {
    const { resourceVersion, count, how, stream } = state;
    this.#backoff.reset();
    this.#synced = true;
    this.#lastActivityAt = this.#clock.now();
    this.#lastError = undefined;
    this.#resourceVersion = resourceVersion;
    this.#outage.recovered();
    log.debug("Listed {count} {resource} by {how} at resourceVersion {resourceVersion}", {
      count,
      resource: this.#what,
      how,
      resourceVersion,
    });
    return {
      event: { type: "initDone", resourceVersion },
      next: stream
        ? { kind: "watching", resourceVersion, stream }
        : { kind: "initListed", resourceVersion },
    };
  }

  #fallBackToPages(answer: string): Step<T> {
    this.#streamingLists.refused(answer);
    // Through `empty`, whose `init` drops any initial events already delivered.
    return { next: EMPTY };
  }

  #retry(error: unknown, then: State<T>, action: string): Step<T> {
    // Deno's permissions are fixed for the life of the process: no retry can succeed.
    if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
      throw error;
    }
    this.#restarts++;
    this.#lastError = describeError(error);
    const delayMs = Math.round(this.#backoff.next());
    const unreachable = error instanceof TransportError && error.server !== undefined &&
      error.reason !== undefined;
    if (unreachable) {
      this.#outage.failed(
        { server: error.server!, reason: error.reason! },
        this.#backoff.attempts,
        delayMs,
      );
    }
    const level = unreachable || isInitializing(error)
      ? "debug"
      : isForbidden(error) || isUnauthorized(error)
      ? "error"
      : isGone(error)
      ? "info"
      : "warn";
    log[level]("Watcher of {resource} failed: {error}; {action} in {delayMs} ms", {
      resource: this.#what,
      error: describeError(error),
      action,
      delayMs,
    });
    return { next: { kind: "backingOff", delayMs, then } };
  }

  #open(options: Omit<WatchStreamOptions, "signal">, signal: AbortSignal): WatchStream<T> {
    const timeoutSeconds = this.#timeoutSeconds ??
      Math.floor(MIN_WATCH_TIMEOUT_SECONDS * (1 + Math.random()));
    return new WatchStream(
      (bounded) => this.#lw.watch({ ...options, timeoutSeconds, signal: bounded }),
      signal,
      this.#clock,
      this.#stallTimeoutMs ?? timeoutSeconds * 1000 + STALL_GRACE_MS,
    );
  }

  async #pull(stream: WatchStream<T>, signal: AbortSignal): Promise<Pull<T>> {
    const pull = await stream.pull(signal);
    if (pull.kind === "event") {
      this.#lastActivityAt = this.#clock.now();
      this.#lastError = undefined;
      this.#outage.recovered();
    }
    return pull;
  }
}

/**
 * Creates a {@link Watcher} over `lw`.
 *
 * @example
 * ```ts
 * import { listerWatcher, watcher } from "./watcher.ts";
 * import { SECRETS } from "../../kube/resources.ts";
 * import { KubeClient } from "../../kube/client.ts";
 * import { staticToken } from "../../kube/token_source.ts";
 * const client = new KubeClient({
 *   server: "https://127.0.0.1:6443",
 *   auth: staticToken("example"),
 *   namespace: "default",
 *   source: "example",
 * });
 * const secrets = watcher(listerWatcher(client, SECRETS, { metadataOnly: true }), { pageSize: 100 });
 * secrets.freshness.synced; // false until the first list is delivered
 * client.close();
 * ```
 *
 * @throws {RangeError} when an option is out of range.
 */
export function watcher<T extends KubeObject>(
  lw: ListerWatcher<T>,
  options: WatcherOptions = {},
): Watcher<T> {
  return new Watcher(lw, options);
}

/** True when the server refuses `sendInitialEvents` (feature off, or a server too old). */
function rejectsStreamingList(error: unknown): error is ApiError {
  return error instanceof ApiError && (error.status === 400 || error.status === 422);
}

/**
 * True for the 429 the API server answers while a resource's storage starts,
 * e.g. right after its CRD is installed: expected, and over in a moment.
 */
function isInitializing(error: unknown): boolean {
  return isTooManyRequests(error) && /storage is \(re\)initializing/.test(describeError(error));
}
