/**
 * The Greeting operator: a `Greeting` (`greetings.example.kinglet.dev`)
 * names someone; its controller renders a ConfigMap that greets them, reports
 * the message in status, records an Event when the message changes, and
 * keeps a finalizer so that it says goodbye before the Greeting goes.
 *
 * @module
 */
import {
  CONFIG_MAPS,
  type KubeClient,
  type KubeObject,
  type Resource,
} from "../../lib/kube/mod.ts";
import { type ControllerSpec, type EventRecorder, finalizer } from "../../lib/runtime/mod.ts";

/** Where Greetings live in the API. */
export const GREETINGS: Resource = {
  group: "example.kinglet.dev",
  version: "v1",
  plural: "greetings",
  kind: "Greeting",
  namespaced: true,
};

/** A Greeting as the API server stores it. */
export interface Greeting extends KubeObject {
  spec?: { name?: string; greeting?: string };
  status?: { message?: string; configMap?: string; observedGeneration?: number };
}

const MANAGER = "greeting-operator";
const FINALIZER = "example.kinglet.dev/farewell";

/** The ConfigMap a Greeting renders: a pure function of the Greeting. */
export function renderConfigMap(greeting: Greeting): KubeObject {
  const { name, namespace, uid } = greeting.metadata ?? {};
  const message = `${greeting.spec?.greeting ?? "Hello"}, ${greeting.spec?.name ?? "world"}!`;
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `${name}-greeting`,
      namespace,
      // The controller owner reference makes the ConfigMap a child: its changes
      // reconcile this Greeting, and the garbage collector deletes it with it.
      ownerReferences: [{
        apiVersion: `${GREETINGS.group}/${GREETINGS.version}`,
        kind: GREETINGS.kind,
        name: name!,
        uid: uid!,
        controller: true,
        blockOwnerDeletion: true,
      }],
    },
    data: { message },
  };
}

/** The controller of Greetings, writing with `client` and recording with `events`. */
export function greetingController(
  client: KubeClient,
  events: EventRecorder,
): ControllerSpec<Greeting> {
  return {
    name: "greeting",
    resource: GREETINGS,
    owns: [{ resource: CONFIG_MAPS }],
    // Server-side apply is idempotent: it sends the fields we own, every time.
    applyChild: (resource, desired, signal) =>
      client.apply(resource, desired, { fieldManager: MANAGER, force: true, signal }),
    reconcile: (greeting, { signal, children }) =>
      finalizer(client, GREETINGS, FINALIZER, greeting, {
        async apply(greeting) {
          const desired = renderConfigMap(greeting);
          const message = (desired.data as { message: string }).message;
          // Skips the write when the cached ConfigMap is as this controller last applied it.
          await children.apply(CONFIG_MAPS, desired, signal);
          if (greeting.status?.message !== message) {
            events.publish(greeting, {
              type: "Normal",
              reason: "Rendered",
              action: "Reconcile",
              note: `ConfigMap ${desired.metadata!.name} says "${message}"`,
            });
          }
          const status = {
            message,
            configMap: desired.metadata!.name,
            observedGeneration: greeting.metadata?.generation,
          };
          if (JSON.stringify(greeting.status) !== JSON.stringify(status)) {
            await client.apply(GREETINGS, {
              apiVersion: `${GREETINGS.group}/${GREETINGS.version}`,
              kind: GREETINGS.kind,
              metadata: { name: greeting.metadata!.name, namespace: greeting.metadata!.namespace },
              status,
            }, { fieldManager: MANAGER, force: true, subresource: "status", signal });
          }
          return {}; // done until the Greeting or its ConfigMap changes
        },
        cleanup(greeting) {
          // Stands for cleanup the garbage collector cannot do (something outside the cluster).
          events.publish(greeting, {
            type: "Normal",
            reason: "Farewell",
            action: "Finalize",
            note: `Goodbye, ${greeting.spec?.name ?? "world"}!`,
          });
          return Promise.resolve({});
        },
      }, signal).then((action) => action ?? {}),
  };
}
