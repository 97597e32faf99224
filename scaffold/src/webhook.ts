/**
 * The Widget's admission webhook, which the API server calls before it
 * stores a Widget (written by `kinglet init --webhook`): defaulting trims the
 * message, then validation denies a Widget whose ConfigMap is already there
 * and another's, which the controller could never write. The CRD's schema
 * cannot say so: CEL sees one object. main.ts serves it and src/operator.ts
 * declares it, so that `deno task deploy` writes its configurations; the
 * `rbac` of src/controller.ts grants the ConfigMap's `get` it reads with.
 *
 * @module
 */
import { CONFIG_MAPS, isNotFound } from "@kinglet/kinglet/kube";
import { type AdmissionWebhook, allowed, denied } from "@kinglet/kinglet/runtime/webhook";
import { type Widget, WIDGETS } from "./kind.ts";

/** Defaults and validates the Widgets created or updated. */
export const widgetWebhook: AdmissionWebhook<Widget> = {
  resource: WIDGETS,
  // The API server refuses the write when the webhook cannot answer in 5 s.
  failurePolicy: "Fail",
  timeoutSeconds: 5,
  default(widget) {
    widget.spec.message = widget.spec.message.trim();
    return widget;
  },
  async validate({ object }, { client, signal }) {
    if (object === undefined) return allowed();
    const { name: widget, namespace } = object.metadata;
    const name = `${widget}-widget`; // as renderConfigMap names it
    const found = await client.get(CONFIG_MAPS, name, { namespace, signal }).catch((e) => {
      if (isNotFound(e)) return undefined;
      throw e; // under failurePolicy Fail, a denial that says the webhook failed
    });
    const owner = found?.metadata?.ownerReferences?.find((o) => o.controller);
    if (!found || (owner?.kind === WIDGETS.kind && owner.name === widget)) {
      return allowed();
    }
    return denied(`ConfigMap ${namespace}/${name} exists and is not this Widget's to write`);
  },
};
