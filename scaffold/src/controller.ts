/**
 * The Widget operator: a Widget's controller writes the ConfigMap that
 * holds its message (a child it owns, repaired when changed or deleted) and
 * says in a `Ready` condition that it did.
 *
 * @module
 */
import { CONFIG_MAPS, type KubeObject } from "@kinglet/kinglet/kube";
import { controllerReference, type ControllerSpec, setCondition } from "@kinglet/kinglet/runtime";
import { type Widget, WIDGETS } from "./kind.ts";

/** The controller's name: in logs and metrics, its field manager, and its children's label. */
export const OPERATOR = "widget-operator";

/** The label on every ConfigMap the operator writes, which its cache selects by. */
export const MANAGED_BY = "app.kubernetes.io/managed-by";

/** A ConfigMap with a name and data. */
export type ConfigMap = KubeObject & { metadata: { name: string }; data: Record<string, string> };

/** The ConfigMap a Widget renders: a pure function of the Widget. */
export function renderConfigMap(widget: Widget): ConfigMap {
  const { name, namespace } = widget.metadata;
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `${name}-widget`,
      namespace,
      labels: { [MANAGED_BY]: OPERATOR },
      // A controller reference: its changes reconcile the Widget, and it goes with it.
      ownerReferences: [controllerReference(widget)],
    },
    data: { message: widget.spec.message },
  };
}

/** The controller of Widget objects. */
export const widgetController: ControllerSpec<Widget> = {
  name: OPERATOR,
  resource: WIDGETS,
  // Only the ConfigMaps it labelled are cached, not every one in the cluster.
  owns: [{ resource: CONFIG_MAPS, labelSelector: `${MANAGED_BY}=${OPERATOR}` }],
  async reconcile(widget, { children, clock, signal, status }) {
    const desired = renderConfigMap(widget);
    // Skips the write when the cached ConfigMap is as this controller last applied it.
    const { metadata: { name } } = await children.apply(CONFIG_MAPS, desired, signal);
    const ready = { type: "Ready", status: "True", reason: "Rendered" } as const;
    const message = `ConfigMap ${name} holds the message`;
    const { metadata: { generation }, status: observed } = widget;
    // lastTransitionTime moves only when the status does, read from the controller's clock.
    const conditions = setCondition(observed?.conditions, { ...ready, message }, clock);
    // Written only when it differs from the Widget's status, whatever the key order.
    await status({ observedGeneration: generation, configMap: name, conditions });
    return {}; // done until the Widget or its ConfigMap changes
  },
};
