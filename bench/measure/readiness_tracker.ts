/**
 * Watches the benchmark's objects and records, per object, when the harness
 * acted on it and when the operator's answer became visible: first Ready
 * after creation, Ready at the new generation after an update, gone after
 * deletion. The watch resumes from its last resourceVersion when the server
 * ends it and relists after 410 Gone, so no transition is missed on long runs.
 *
 * Latencies are measured as a client sees them: from sending the request to
 * receiving the watch event, on the harness' clock.
 *
 * @example
 * ```ts ignore
 * import { ReadinessTracker } from "./readiness_tracker.ts";
 * const tracker = new ReadinessTracker({ client, resource, namespace, rule, now });
 * const watching = tracker.run(signal);
 * tracker.created("app-1"); // then send the create request
 * await tracker.waitAll("ready", { timeoutMs: 60_000 });
 * ```
 *
 * @module
 */
import type { KubeClient } from "../../lib/kube/client.ts";
import { isGone } from "../../lib/kube/errors.ts";
import type { KubeObject, Resource, WatchEvent } from "../../lib/kube/types.ts";
import { hasObserved, isReady, type ReadyRule } from "./ready_rule.ts";
import type { ObjectTiming } from "./results.ts";

/** What {@link ReadinessTracker.waitAll} can wait for. */
export type Milestone = "ready" | "updateReady" | "gone";

/** Options of {@link ReadinessTracker}. */
export interface TrackerOptions {
  client: KubeClient;
  resource: Resource;
  /** Where the objects are; omit for a cluster-scoped kind. */
  namespace?: string;
  rule: ReadyRule;
  /** Milliseconds since the run started. */
  now: () => number;
  /** Told about watch failures, which are retried. */
  onError?: (message: string) => void;
}

/** How many objects reached each step. */
export interface TrackerCounts {
  created: number;
  ready: number;
  updated: number;
  updateReady: number;
  deleted: number;
  gone: number;
}

/** Records per-object timings from a watch; see the module documentation. */
export class ReadinessTracker {
  readonly #options: TrackerOptions;
  readonly #timings = new Map<string, ObjectTiming>();
  /** Generation an updated object must be observed at; only for objects updated. */
  readonly #wanted = new Map<string, number>();
  readonly #generations = new Map<string, number>();

  constructor(options: TrackerOptions) {
    this.#options = options;
  }

  /** Marks `name` as about to be created; call before sending the request. */
  created(name: string): void {
    this.#timings.set(name, { name, createdMs: this.#options.now() });
  }

  /**
   * Marks `name` as about to be updated; call before sending the patch.
   * Without an observedGeneration path in the rule the update's effect
   * cannot be seen, so it is recorded as sent and never awaited.
   */
  updated(name: string): void {
    const timing = this.#timing(name);
    timing.updatedMs = this.#options.now();
    if (this.#options.rule.observedGenerationPath === undefined) return;
    this.#wanted.set(name, (this.#generations.get(name) ?? 1) + 1);
  }

  /** Records the generation the update produced, as the patch's answer reports it. */
  updatedTo(name: string, generation: number | undefined): void {
    if (generation !== undefined && this.#wanted.has(name)) this.#wanted.set(name, generation);
  }

  /** Marks `name` as about to be deleted; call before sending the request. */
  deleted(name: string): void {
    this.#timing(name).deletedMs = this.#options.now();
  }

  /** Every object's timings, in creation order. */
  timings(): ObjectTiming[] {
    return [...this.#timings.values()].map((t) => ({ ...t }));
  }

  /** How far the objects have come. */
  counts(): TrackerCounts {
    const counts = { created: 0, ready: 0, updated: 0, updateReady: 0, deleted: 0, gone: 0 };
    for (const t of this.#timings.values()) {
      counts.created++;
      if (t.readyMs !== undefined) counts.ready++;
      if (t.updatedMs !== undefined) counts.updated++;
      if (t.updateReadyMs !== undefined) counts.updateReady++;
      if (t.deletedMs !== undefined) counts.deleted++;
      if (t.goneMs !== undefined) counts.gone++;
    }
    return counts;
  }

  /**
   * Resolves once every object that went through the step before `milestone`
   * has reached it, polling every 200 ms and calling `onTick` each time.
   *
   * @throws {Error} after `timeoutMs`, saying how many are missing.
   */
  async waitAll(
    milestone: Milestone,
    options: { timeoutMs: number; signal?: AbortSignal; onTick?: () => void },
  ): Promise<void> {
    const deadline = performance.now() + options.timeoutMs;
    for (;;) {
      options.signal?.throwIfAborted();
      options.onTick?.();
      const missing = this.#missing(milestone);
      if (missing.length === 0) return;
      if (performance.now() > deadline) {
        throw new Error(
          `${missing.length} objects did not reach '${milestone}' within ${options.timeoutMs} ms, ` +
            `e.g. ${missing.slice(0, 3).join(", ")}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Lists, then watches, until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { client, resource, namespace } = this.#options;
    const scope = namespace === undefined ? {} : { namespace };
    let resourceVersion: string | undefined;
    while (!signal.aborted) {
      try {
        if (resourceVersion === undefined) {
          const list = await client.list(resource, { ...scope, signal });
          for (const item of list.items) this.#observe({ type: "ADDED", object: item });
          resourceVersion = list.metadata.resourceVersion;
        }
        const events = client.watch(resource, {
          ...scope,
          signal,
          timeoutSeconds: 300,
          ...(resourceVersion ? { resourceVersion } : {}),
        });
        for await (const event of events) {
          resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
          if (event.type !== "BOOKMARK") this.#observe(event);
        }
      } catch (error) {
        if (signal.aborted) return;
        if (isGone(error)) {
          resourceVersion = undefined;
          continue;
        }
        this.#options.onError?.(
          `watch of ${resource.plural} failed, retrying: ${(error as Error).message}`,
        );
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  }

  #observe(event: WatchEvent<KubeObject>): void {
    const name = event.object.metadata?.name;
    const timing = name === undefined ? undefined : this.#timings.get(name);
    if (name === undefined || timing === undefined) return;
    const now = this.#options.now();
    if (event.type === "DELETED") {
      timing.goneMs ??= now;
      return;
    }
    const generation = event.object.metadata?.generation;
    if (generation !== undefined) this.#generations.set(name, generation);
    const { rule } = this.#options;
    if (timing.readyMs === undefined && isReady(event.object, rule)) timing.readyMs = now;
    const wanted = this.#wanted.get(name);
    if (
      wanted !== undefined && timing.updateObservedMs === undefined &&
      hasObserved(event.object, rule, wanted)
    ) {
      timing.updateObservedMs = now;
    }
    if (
      wanted !== undefined && timing.updateReadyMs === undefined &&
      isReady(event.object, rule, wanted)
    ) {
      timing.updateReadyMs = now;
    }
  }

  #missing(milestone: Milestone): string[] {
    const missing: string[] = [];
    for (const t of this.#timings.values()) {
      const due = milestone === "ready"
        ? t.readyMs === undefined
        : milestone === "updateReady"
        ? this.#wanted.has(t.name) && t.updateReadyMs === undefined
        : t.deletedMs !== undefined && t.goneMs === undefined;
      if (due) missing.push(t.name);
    }
    return missing;
  }

  #timing(name: string): ObjectTiming {
    const timing = this.#timings.get(name);
    if (!timing) throw new RangeError(`Cannot track '${name}': it was never created`);
    return timing;
  }
}
