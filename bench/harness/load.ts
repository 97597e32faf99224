/**
 * The load a scenario puts on the operator: create objects at a fixed rate,
 * update a share of them, delete them all. Each request is marked on the
 * {@link ReadinessTracker} just before it is sent, so latencies start when
 * a client would start waiting.
 *
 * Requests are paced and retried as bench/harness/pace.ts says.
 *
 * @example
 * ```ts ignore
 * import { createObjects, objectNames } from "./load.ts";
 * await createObjects(workload, objectNames(1000), { ratePerSecond: 50 });
 * ```
 *
 * @module
 */
import type { KubeClient } from "../../lib/kube/client.ts";
import { isAlreadyExists, isNotFound } from "../../lib/kube/errors.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { type Pace, paced, retrying } from "./pace.ts";
import type { ReadinessTracker } from "../measure/readiness_tracker.ts";
import { objectScope, renderObject, type Target } from "./target.ts";

/** What the load steps act with. */
export interface Workload {
  client: KubeClient;
  target: Target;
  /** The run's namespace: the objects' unless their kind is cluster-scoped. */
  namespace: string;
  tracker: ReadinessTracker;
  /** Replicas in the object template. */
  replicas: number;
  signal?: AbortSignal;
}

/** Share of the objects the update step patches. */
export const UPDATE_SHARE = 0.1;

/** `count` object names that sort in creation order: `app-00001`, `app-00002`, … */
export function objectNames(count: number): string[] {
  const width = Math.max(5, String(count).length);
  return Array.from({ length: count }, (_, i) => `app-${String(i + 1).padStart(width, "0")}`);
}

/** Every tenth name (at least one), spread evenly over `names`. */
export function updateShare(names: readonly string[]): string[] {
  const step = Math.round(1 / UPDATE_SHARE);
  const picked = names.filter((_, i) => i % step === 0);
  return picked.length > 0 || names.length === 0 ? picked : [names[0]!];
}

/** Creates one object per name from the target's template. */
export async function createObjects(
  w: Workload,
  names: readonly string[],
  pace: Pace,
): Promise<void> {
  await paced(names, pace, w.signal, async (name, index) => {
    const object = renderObject(w.target, {
      name,
      namespace: w.namespace,
      index,
      replicas: w.replicas,
    });
    w.tracker.created(name);
    await retrying(async () => {
      try {
        await w.client.create(w.target.resource, object, signalOf(w));
      } catch (error) {
        // The name is the run's own: the object exists because an earlier try landed.
        if (!isAlreadyExists(error)) throw error;
      }
    }, w.signal);
  });
}

/** Applies the target's update patch to each name. */
export async function updateObjects(
  w: Workload,
  names: readonly string[],
  pace: Pace,
): Promise<void> {
  await paced(names, pace, w.signal, async (name) => {
    w.tracker.updated(name);
    const patched = await retrying(
      () =>
        w.client.patch<KubeObject>(w.target.resource, name, w.target.update, {
          type: "merge",
          ...objectScope(w.target, w.namespace),
          ...signalOf(w),
        }),
      w.signal,
    );
    w.tracker.updatedTo(name, patched.metadata?.generation);
  });
}

/** Deletes each name; an object already gone counts as deleted. */
export async function deleteObjects(
  w: Workload,
  names: readonly string[],
  pace: Pace,
): Promise<void> {
  await paced(names, pace, w.signal, async (name) => {
    w.tracker.deleted(name);
    await retrying(async () => {
      try {
        await w.client.delete(w.target.resource, name, {
          ...objectScope(w.target, w.namespace),
          ...signalOf(w),
        });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }, w.signal);
  });
}

/**
 * Deletes each name without pacing or tracking, as a run on a shared cluster
 * leaves: objects of a cluster-scoped kind would otherwise meet the next
 * run's creates under the same names.
 */
export async function removeObjects(
  client: KubeClient,
  target: Target,
  names: readonly string[],
): Promise<void> {
  for (const name of names) {
    await client.delete(target.resource, name).catch((error) => {
      if (!isNotFound(error)) throw error;
    });
  }
}

function signalOf(w: Workload): { signal?: AbortSignal } {
  return w.signal ? { signal: w.signal } : {};
}
