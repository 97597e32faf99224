/**
 * The Greeting operator: a Greeting's controller renders a ConfigMap that
 * greets the one it names, reports the message in status, records an Event
 * when the message changes, and keeps a finalizer so that it says goodbye
 * before the Greeting goes.
 *
 * @module
 */
import { CONFIG_MAPS, type KubeObject } from "@kinglet/kinglet/kube";
import { controllerReference, type ControllerSpec } from "@kinglet/kinglet/runtime";
import { type Greeting, GREETINGS } from "./kind.ts";

/** The label on every ConfigMap the operator renders, and the selector of its cache. */
const MANAGED_BY = "app.kubernetes.io/managed-by";

/** A ConfigMap with a name and a message. */
export type ConfigMap = KubeObject & { metadata: { name: string }; data: { message: string } };

/** The ConfigMap a Greeting renders: a pure function of the Greeting. */
export function renderConfigMap(greeting: Greeting): ConfigMap {
  const { name, namespace } = greeting.metadata;
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `${name}-greeting`,
      namespace,
      labels: { [MANAGED_BY]: "greeting-operator" },
      // A controller reference: its changes reconcile the Greeting, and it goes with it.
      ownerReferences: [controllerReference(greeting)],
    },
    data: { message: `${greeting.spec.greeting}, ${greeting.spec.name}!` },
  };
}

/** The controller of Greetings. */
export const greetingController: ControllerSpec<Greeting> = {
  name: "greeting-operator", // in logs and metrics, and the field manager of its applies
  resource: GREETINGS,
  // Only the ConfigMaps it labelled are cached, not every one in the cluster.
  owns: [{ resource: CONFIG_MAPS, labelSelector: `${MANAGED_BY}=greeting-operator` }],
  // Added before the first reconcile; on deletion, cleanup runs, then the finalizer goes.
  finalizer: {
    name: "example.kinglet.dev/farewell",
    cleanup(greeting, { events }) {
      // Stands for cleanup the garbage collector cannot do (something outside the cluster).
      const note = `Goodbye, ${greeting.spec.name}!`;
      events.publish({ type: "Normal", reason: "Farewell", action: "Finalize", note });
      return Promise.resolve({});
    },
  },
  async reconcile(greeting, { signal, children, events, status }) {
    const desired = renderConfigMap(greeting);
    const { metadata: { name: configMap }, data: { message } } = desired;
    // Skips the write when the cached ConfigMap is as this controller last applied it.
    await children.apply(CONFIG_MAPS, desired, signal);
    if (greeting.status?.message !== message) {
      const note = `ConfigMap ${configMap} says "${message}"`;
      events.publish({ type: "Normal", reason: "Rendered", action: "Reconcile", note });
    }
    // Written only when it differs from the Greeting's status, whatever the key order.
    await status({ message, configMap, observedGeneration: greeting.metadata.generation });
    return {}; // done until the Greeting or its ConfigMap changes
  },
};
