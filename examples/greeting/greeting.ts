/**
 * The Greeting operator: a `Greeting` (`greetings.example.kinglet.dev`)
 * names someone; its controller renders a ConfigMap that greets them, reports
 * the message in status, records an Event when the message changes, and
 * keeps a finalizer so that it says goodbye before the Greeting goes.
 *
 * @module
 */
import { CONFIG_MAPS, type KubeObject, type Resource } from "../../lib/kube/mod.ts";
import { controllerReference, type ControllerSpec } from "../../lib/runtime/mod.ts";

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

/** The field manager of the operator's server-side applies, and its children's label. */
export const MANAGER = "greeting-operator";

/** The ConfigMap a Greeting renders: a pure function of the Greeting. */
export function renderConfigMap(greeting: Greeting): KubeObject {
  const { name, namespace } = greeting.metadata ?? {};
  const message = `${greeting.spec?.greeting ?? "Hello"}, ${greeting.spec?.name ?? "world"}!`;
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `${name}-greeting`,
      namespace,
      labels: { "app.kubernetes.io/managed-by": MANAGER },
      // The controller owner reference makes the ConfigMap a child: its changes
      // reconcile this Greeting, and the garbage collector deletes it with it.
      ownerReferences: [controllerReference(greeting)],
    },
    data: { message },
  };
}

/** The controller of Greetings. */
export const greetingController: ControllerSpec<Greeting> = {
  name: "greeting",
  resource: GREETINGS,
  fieldManager: MANAGER, // children and status are server-side applied as this manager
  // Only the ConfigMaps the operator labelled are cached, not every one in the cluster.
  owns: [{ resource: CONFIG_MAPS, labelSelector: `app.kubernetes.io/managed-by=${MANAGER}` }],
  // Added before the first reconcile; on deletion, cleanup runs, then the finalizer goes.
  finalizer: {
    name: "example.kinglet.dev/farewell",
    cleanup(greeting, { events }) {
      // Stands for cleanup the garbage collector cannot do (something outside the cluster).
      events.publish({
        type: "Normal",
        reason: "Farewell",
        action: "Finalize",
        note: `Goodbye, ${greeting.spec?.name ?? "world"}!`,
      });
      return Promise.resolve({});
    },
  },
  async reconcile(greeting, { signal, children, events, status }) {
    const desired = renderConfigMap(greeting);
    const message = (desired.data as { message: string }).message;
    // Skips the write when the cached ConfigMap is as this controller last applied it.
    await children.apply(CONFIG_MAPS, desired, signal);
    if (greeting.status?.message !== message) {
      events.publish({
        type: "Normal",
        reason: "Rendered",
        action: "Reconcile",
        note: `ConfigMap ${desired.metadata!.name} says "${message}"`,
      });
    }
    // Written only when it differs from the Greeting's status, whatever the key order.
    await status({
      message,
      configMap: desired.metadata!.name,
      observedGeneration: greeting.metadata?.generation,
    });
    return {}; // done until the Greeting or its ConfigMap changes
  },
};
