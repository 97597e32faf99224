/**
 * The Backup operator: a Backup's controller writes the backup plan that a
 * backup job mounts (a ConfigMap it owns), says in a `Ready` condition
 * whether the source volume exists, looks again every minute, and records
 * an Event when the Backup is deleted.
 *
 * @module
 */
import { CONFIG_MAPS, PERSISTENT_VOLUME_CLAIMS } from "@kinglet/kinglet/kube";
import type { ControllerSpec } from "@kinglet/kinglet/runtime";
import { controllerReference, setCondition, tieredErrorPolicy } from "@kinglet/kinglet/runtime";
import { type Backup, BACKUPS } from "./kind.ts";

/** The label of the plans, which the controller's cache selects by. */
const LABELS = { "app.kubernetes.io/managed-by": "backup-operator" };

/** The ConfigMap holding a Backup's plan: a pure function of the Backup. */
export function renderPlan(backup: Backup) {
  const { metadata: { name, namespace }, spec: { destination, keep, ...spec } } = backup;
  // A controller reference: the plan's changes reconcile the Backup, and it goes with it.
  const metadata = { name: `${name}-backup-plan`, namespace, labels: LABELS };
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { ...metadata, ownerReferences: [controllerReference(backup)] },
    data: { ...spec, destination: `${destination}/${namespace}/${name}`, keep: `${keep}` },
  };
}

const READ_CLAIMS = { apiGroups: [""], resources: ["persistentvolumeclaims"], verbs: ["get"] };

/** The controller of Backups. */
export const backupController: ControllerSpec<Backup> = {
  name: "backup-operator", // in logs and metrics, and the field manager of its applies
  resource: BACKUPS,
  // Only the plans it labelled are cached, not every ConfigMap in the cluster.
  owns: [{ resource: CONFIG_MAPS, labelSelector: "app.kubernetes.io/managed-by=backup-operator" }],
  // What reconcile reads by client, beyond its caches: the RBAC derived from this spec grants it.
  rbac: [{ ...READ_CLAIMS, reason: "reconcile reads the claim a Backup copies" }],
  errorPolicy: tieredErrorPolicy(), // a failing Backup waits 30 s, 2 min, 5 min, then 10 min
  finalizer: {
    name: "example.kinglet.dev/backup",
    cleanup({ spec }, { events }) {
      // Stands for telling the backup store to stop: the copies themselves are kept.
      const note = `Stopped copying ${spec.source}; the copies in ${spec.destination} are kept`;
      events.publish({ type: "Normal", reason: "Stopped", action: "Finalize", note });
      return Promise.resolve({});
    },
  },
  async reconcile(backup, { client, clock, children, signal, status }) {
    const { metadata: { namespace, generation }, spec: { source, schedule } } = backup;
    const plan = await children.apply(CONFIG_MAPS, renderPlan(backup), signal);
    const claim = await client.getOptional(PERSISTENT_VOLUME_CLAIMS, source, { namespace, signal });
    const found = claim !== undefined;
    const ready = found
      ? { status: "True", reason: "Scheduled", message: `Copies ${source} at ${schedule}` } as const
      : { status: "False", reason: "SourceNotFound", message: `No claim ${source}` } as const;
    // lastTransitionTime moves only when the status does, read from the controller's clock.
    const conditions = setCondition(backup.status?.conditions, { type: "Ready", ...ready }, clock);
    await status({ observedGeneration: generation, plan: plan.metadata.name, conditions });
    if (!found) throw new Error(ready.message); // retried as the error policy says
    return { requeueAfterMs: 60_000 }; // the source is not watched: look again in a minute
  },
};
