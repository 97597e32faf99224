/**
 * A store's memory budget, in one place: its limits, the eviction that keeps
 * the full objects within them (least recently read first), and the live
 * read that brings an evicted object back. How the limits are chosen under
 * a process memory limit is `memory/`'s part (`memory/cache_shares.ts`);
 * what a key keeps once evicted is the store's entry (`_store_state.ts`).
 *
 * @module
 */
import { describeError } from "../../kube/errors.ts";
import type { ObjectKey } from "../../kube/types.ts";
import { SingleFlight } from "../../async/single_flight.ts";
import { logger } from "../../log.ts";
import type { StoreState } from "./_store_state.ts";

/** Why a full object left the cache while its key stayed known. */
export type EvictionReason = "budget-objects" | "budget-bytes";

/** Limits on what the store keeps in full; unset means unlimited. */
export interface StoreBudget {
  /** Most full objects kept at once. */
  maxObjects?: number;
  /** Most bytes of full objects kept at once, by `estimateBytes`. */
  maxBytes?: number;
}

/** What a {@link Budget} needs of its store. */
export interface BudgetOptions<T> {
  /** Reads an object live (a GET); `undefined` when it is gone. */
  fetch?: (key: ObjectKey, signal?: AbortSignal) => Promise<unknown>;
  /** Takes a live answer into the store and returns it as the store's readers see it. */
  recache: (key: ObjectKey, raw: unknown) => T;
  /** Told each time a full object is evicted, and why. */
  onEvict?: (key: ObjectKey, reason: EvictionReason) => void;
}

/** A store's limits, eviction and read-back; see the module documentation. */
export class Budget<T> {
  #maxObjects: number;
  #maxBytes: number;
  /** Whether the store keeps LRU links: only a budget evicts, so only a budget needs them. */
  readonly linked: boolean;
  /** Live GETs of evicted objects, one per key, shared by concurrent readers. */
  readonly #fetches: SingleFlight<ObjectKey, T | undefined> | undefined;
  readonly #onEvict: BudgetOptions<T>["onEvict"];
  #evictions = 0;

  /**
   * @throws {RangeError} when a limit is not a positive integer.
   * @throws {TypeError} when limits are set without `fetch`.
   */
  constructor(limits: StoreBudget | undefined, options: BudgetOptions<T>) {
    this.#maxObjects = positive("create the store", "maxObjects", limits?.maxObjects);
    this.#maxBytes = positive("create the store", "maxBytes", limits?.maxBytes);
    this.linked = this.#maxObjects !== Infinity || this.#maxBytes !== Infinity;
    const { fetch, recache } = options;
    this.#fetches = fetch && new SingleFlight(async (key, signal) => {
      const raw = await fetch(key, signal);
      return raw === undefined ? undefined : recache(key, raw);
    });
    this.#onEvict = options.onEvict;
    if (limits && !fetch) {
      throw new TypeError(
        "Cannot create the store: a memory budget needs 'fetch' to read evicted objects back",
      );
    }
  }

  /** Full objects evicted so far. */
  get evictions(): number {
    return this.#evictions;
  }

  /** Whether evicted objects can be read back (the store was given `fetch`). */
  get canReadBack(): boolean {
    return this.#fetches !== undefined;
  }

  /**
   * Replaces the limits; the caller then {@link enforce}s them.
   *
   * @throws {TypeError} when the store was created without a budget.
   * @throws {RangeError} when a limit is not a positive integer.
   */
  set(limits: StoreBudget | undefined): void {
    if (!this.linked) {
      throw new TypeError(
        "Cannot set the store's budget: it was created without one; " +
          "give it a budget (and 'fetch') when creating it",
      );
    }
    const maxObjects = positive("set the store's budget", "maxObjects", limits?.maxObjects);
    const maxBytes = positive("set the store's budget", "maxBytes", limits?.maxBytes);
    this.#maxObjects = maxObjects;
    this.#maxBytes = maxBytes;
  }

  /**
   * Evicts from `state`, least recently read first, until it is within the
   * limits; `keep` is told each evicted object first (a list under way
   * holds them for its listeners).
   */
  enforce(state: StoreState<T>, keep?: (key: ObjectKey, object: T) => void): void {
    while (state.objects > this.#maxObjects) this.#evict(state, "budget-objects", keep);
    while (state.bytes > this.#maxBytes && state.objects > 0) {
      this.#evict(state, "budget-bytes", keep);
    }
  }

  /** Reads `key` back live; concurrent reads of one key share one GET. */
  readBack(key: ObjectKey, signal?: AbortSignal): Promise<T | undefined> {
    return this.#fetches!.do(key, signal);
  }

  #evict(
    state: StoreState<T>,
    reason: EvictionReason,
    keep: ((key: ObjectKey, object: T) => void) | undefined,
  ): void {
    const oldest = state.oldest!;
    keep?.(oldest.key, oldest.object!);
    state.uncache(oldest);
    this.#evictions++;
    try {
      this.#onEvict?.(oldest.key, reason);
    } catch (error) {
      logger("store").error("eviction callback failed for {key}: {error}", {
        key: oldest.key,
        error: describeError(error),
      });
    }
  }
}

function positive(action: string, name: string, value: number | undefined): number {
  if (value === undefined) return Infinity;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(
      `Cannot ${action}: budget '${name}' must be a positive integer, got ${value}`,
    );
  }
  return value;
}
