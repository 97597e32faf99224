/**
 * The failures of an author's relation functions (a watch's or an owned
 * kind's `map`, an index of the primary cache): each one counted, and logged
 * once per function and object key, so that a `map` that throws on one
 * object does not fill the log at every event while the other keys go on.
 *
 * @module
 */
import { describeError } from "../../kube/errors.ts";
import type { ObjectKey } from "../../kube/types.ts";
import type { Logger } from "../../log.ts";
import type { ControllerMetrics } from "../metrics/metrics.ts";

/** Which of the author's functions failed: a `map`, or an index of the spec's `indexes`. */
export type RelationFunction = "map" | "index";

/** How many distinct failing keys are logged one by one; past it failures are only counted. */
const LOGGED_KEYS = 1_024;

/** Counts and logs the failures of relation functions; see the module documentation. */
export class RelationErrors {
  readonly #log: Logger;
  readonly #metrics: Pick<ControllerMetrics, "relationFailed"> | undefined;
  /** `function resource key` of each failure logged so far; at most {@link LOGGED_KEYS}. */
  readonly #logged = new Set<string>();

  /** `metrics` counts every failure; `log` gets the first of each key. */
  constructor(log: Logger, metrics?: Pick<ControllerMetrics, "relationFailed">) {
    this.#log = log;
    this.#metrics = metrics;
  }

  /** What a trigger tells when the `map` of `resource` throws on the object under a key. */
  mapFailed(resource: string): (key: ObjectKey, error: unknown) => void {
    return (key, error) => this.failed("map", resource, key, error);
  }

  /**
   * Records that `fn` of `resource` (the index called `index`, for an index)
   * threw `error` on the object under `key`.
   */
  failed(
    fn: RelationFunction,
    resource: string,
    key: ObjectKey | undefined,
    error: unknown,
    index?: string,
  ): void {
    this.#metrics?.relationFailed?.(fn, resource);
    const id = `${fn} ${resource} ${index ?? ""} ${key ?? ""}`;
    if (this.#logged.has(id) || this.#logged.size > LOGGED_KEYS) return;
    this.#logged.add(id);
    if (this.#logged.size > LOGGED_KEYS) {
      this.#log.error(
        "more than {limit} objects failed their {fn} functions; further failures are only counted",
        { limit: LOGGED_KEYS, fn },
      );
      return;
    }
    const what = fn === "map"
      ? `mapping ${resource} {key} to primaries`
      : `indexing ${resource} {key} by '${index}'`;
    this.#log.error(`${what} failed (logged once per object, every failure counted): {error}`, {
      key: key ?? "",
      error: describeError(error),
    });
  }
}
