/**
 * What the DatabaseCluster e2e tests read of a cluster: its Events, pods,
 * volume claims and Secret values.
 *
 * @module
 */
import type {
  V1PersistentVolumeClaim,
  V1Pod,
  V1Secret,
  V1StatefulSet,
} from "@kubernetes/client-node";
import type { KubeClient } from "../../lib/kube/client.ts";
import { PERSISTENT_VOLUME_CLAIMS, PODS } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { DATABASE_CLUSTERS } from "../../lib/operators/database/kind.ts";
import { eventsFor, getOrUndefined, waitFor } from "../_support/kube.ts";

/** A StatefulSet as the client returns it. */
export type StatefulSet = V1StatefulSet & KubeObject;
/** A PersistentVolumeClaim as the client returns it. */
export type Claim = V1PersistentVolumeClaim & KubeObject;
/** A Pod as the client returns it. */
export type Pod = V1Pod & KubeObject;

/** The status fields the tests read. */
export interface DatabaseStatus {
  phase?: string;
  replicas?: number;
  readyReplicas?: number;
  observedGeneration?: number;
  secretName?: string;
  endpoint?: string;
}

/** A DatabaseCluster to create, in the version kinglet reads (v1alpha2). */
export function databaseCluster(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): KubeObject {
  return {
    apiVersion: `${DATABASE_CLUSTERS.group}/${DATABASE_CLUSTERS.version}`,
    kind: "DatabaseCluster",
    metadata: { name, namespace },
    spec,
  };
}

/** Events about the DatabaseCluster itself, not its same-named StatefulSet or Service. */
export async function clusterEvents(
  client: KubeClient,
  namespace: string,
  name: string,
  reason?: string,
): Promise<KubeObject[]> {
  const events = await eventsFor(client, namespace, name, reason);
  return events.filter((e) => (e.regarding as { kind?: string }).kind === "DatabaseCluster");
}

/** Waits for an Event about the cluster with `reason` and `note`, and returns it. */
export function clusterEvent(
  client: KubeClient,
  namespace: string,
  name: string,
  reason: string,
  note: string,
): Promise<KubeObject> {
  return waitFor(`the ${reason} Event "${note}"`, async () => {
    const events = await clusterEvents(client, namespace, name, reason);
    return events.find((e) => e.note === note);
  });
}

/** The pods of a cluster that are not being deleted, by name. */
export async function clusterPods(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<Pod[]> {
  const list = await client.list<Pod>(PODS, {
    namespace,
    labelSelector: `app.kubernetes.io/instance=${name},app.kubernetes.io/name=databasecluster`,
  });
  return list.items.filter((p) => !p.metadata?.deletionTimestamp)
    .sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
}

/** Whether the pod's Ready condition is True. */
export const podReady = (pod: Pod) =>
  pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

/** The claims `data-<name>-<i>` for i below `replicas`; undefined where one does not exist. */
export function dataClaims(client: KubeClient, namespace: string, name: string, replicas: number) {
  return Promise.all(
    Array.from(
      { length: replicas },
      (_, i) =>
        getOrUndefined<Claim>(client, PERSISTENT_VOLUME_CLAIMS, `data-${name}-${i}`, namespace),
    ),
  );
}

/** A Secret value as text. */
export function decode(secret: V1Secret, key: string): string {
  const value = secret.data?.[key];
  if (value === undefined) throw new Error(`the Secret has no ${key}`);
  return new TextDecoder().decode(Uint8Array.from(atob(value), (c) => c.charCodeAt(0)));
}
