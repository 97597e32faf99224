/**
 * The Backup operator's admission webhook: a claim is copied by one Backup
 * at most, so a Backup whose source another Backup of its namespace already
 * copies is denied with a message `kubectl` prints. The CRD's schema cannot
 * say so (CEL sees one object); the API server calls this before it stores
 * a Backup, through the ValidatingWebhookConfiguration in `webhooks.yaml`.
 *
 * @module
 */
import type { AdmissionWebhook, WebhookServingOptions } from "@kinglet/kinglet/runtime/webhook";
import { allowed, denied } from "@kinglet/kinglet/runtime/webhook";
import { type Backup, BACKUPS } from "./kind.ts";

/** Validates the Backups created or updated: one Backup per claim. */
export const backupWebhook: AdmissionWebhook<Backup> = {
  resource: BACKUPS,
  // A webhook that cannot answer in 5 s fails the write: a duplicate never slips through.
  failurePolicy: "Fail",
  timeoutSeconds: 5,
  async validate({ object, oldObject, name, namespace }, { client, signal }) {
    const source = object?.spec.source;
    // An update that keeps the source was admitted with it: nothing to look up.
    if (source === undefined || oldObject?.spec.source === source) return allowed();
    const { items } = await client.list<Backup>(BACKUPS, { namespace, signal });
    const other = items.find((b) => b.spec.source === source && b.metadata.name !== name);
    if (other === undefined) return allowed();
    return denied(
      `spec.source: claim ${source} is already copied by Backup ${other.metadata.name}`,
    );
  },
};

/** Where every replica serves it: its CA and certificate in the Secret `backup-operator-webhook-tls`. */
export const webhookServing: WebhookServingOptions = {
  operator: "backup-operator", // names its configuration in webhooks.yaml and its Secret
  certificates: { namespace: "default" },
};
