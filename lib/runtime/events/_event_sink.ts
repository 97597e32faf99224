/**
 * Where an event recorder writes, behind one small interface, and its
 * adapter over the Kubernetes client.
 *
 * @module
 */
import type { KubeClient } from "../../kube/client.ts";
import { EVENTS } from "../../kube/resources.ts";
import type { EventSeries, KubeEvent } from "./_event_object.ts";

/** Where Events are written; the seam tests replace. */
export interface EventSink {
  /** Creates an Event. */
  create(event: KubeEvent, signal?: AbortSignal): Promise<unknown>;
  /** Merge-patches an Event, to update its series. */
  patch(
    namespace: string,
    name: string,
    patch: { series: EventSeries },
    signal?: AbortSignal,
  ): Promise<unknown>;
}

/** The part of {@link KubeClient} an {@link eventSink} uses. */
export type EventClient = Pick<KubeClient, "create" | "patch">;

/**
 * An {@link EventSink} over the Kubernetes client; series updates are merge
 * patches.
 *
 * @example
 * ```ts
 * import { EventRecorder, eventSink } from "./events.ts";
 * import { KubeClient } from "../../kube/client.ts";
 * import { staticToken } from "../../kube/token_source.ts";
 * const client = new KubeClient({
 *   server: "https://127.0.0.1:6443",
 *   auth: staticToken("example"),
 *   namespace: "default",
 *   source: "example",
 * });
 * const recorder = new EventRecorder(eventSink(client), { reportingInstance: "node-a" });
 * recorder.stats.created; // 0
 * client.close();
 * ```
 */
export function eventSink(client: EventClient): EventSink {
  return {
    create: (event, signal) => client.create(EVENTS, event, { signal }),
    patch: (namespace, name, patch, signal) =>
      client.patch(EVENTS, name, patch, { type: "merge", namespace, signal }),
  };
}
