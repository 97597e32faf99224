/**
 * The DatabaseCluster controller: a StatefulSet, a headless and a client
 * Service, and a credentials Secret created once, driven through the
 * lifecycle state machine of `state.ts` with an Event on every transition.
 *
 * The finalizer `kinglet.dev/cleanup` holds deletion until cleanup ran:
 * with `deletionPolicy: Delete` the StatefulSet's PersistentVolumeClaims are
 * deleted; with `Retain` (the default) they stay, and so does the credentials
 * Secret that unlocks them (released from the cluster's ownership). The Secret's contents are
 * never read back, logged or put in an Event: its cache holds metadata only.
 *
 * @example
 * ```ts
 * import { databaseClusterController } from "./reconcile.ts";
 * databaseClusterController().finalizer?.name; // "kinglet.dev/cleanup"
 * ```
 *
 * @module
 */
import type { V1StatefulSet } from "../models.ts";
import {
  isAlreadyExists,
  isNotFound,
  keyOf,
  type KubeObject,
  objectKey,
  PERSISTENT_VOLUME_CLAIMS,
  SECRETS,
  SERVICES,
  STATEFUL_SETS,
  STORAGE_CLASSES,
} from "../../kube/mod.ts";
import {
  type ControllerSpec,
  OWNER_LABELS,
  ownerKind,
  projectPrimary,
  type ReconcileContext,
  tieredErrorPolicy,
} from "../../runtime/mod.ts";
import { guardChildren } from "../child_errors.ts";
import {
  FIELD_MANAGER,
  FINALIZER,
  labelSelector,
  MANAGED_SELECTOR,
  selectorLabels,
} from "../labels.ts";
import { rejectSpec } from "../status_writes.ts";
import { generatePassword } from "./password.ts";
import { credentialsSecretName, renderCredentialsSecret, renderDatabaseCluster } from "./render.ts";
import { DATABASE_CLUSTERS, type DatabaseCluster, validateDatabaseCluster } from "./kind.ts";
import { databaseStatus, invalidDatabaseStatus } from "./status.ts";

/** Options of {@link databaseClusterController}. */
export interface DatabaseClusterControllerOptions {
  /** How long after a reconcile a Ready cluster is looked at again. Defaults to 300 s. */
  readyRequeueAfterMs?: number;
  /** How long after a reconcile a cluster not Ready is looked at again. Defaults to 60 s. */
  notReadyRequeueAfterMs?: number;
  /** The clock of the conditions' transition times. Defaults to `new Date()`. */
  now?: () => Date;
}

/**
 * The DatabaseCluster controller. A failed reconcile is retried after 30 s,
 * 2 min, 5 min, then every 10 min until it succeeds; at most 100 reconciles
 * start per minute (a burst of 100, refilled over 60 s).
 */
export function databaseClusterController(
  options: DatabaseClusterControllerOptions = {},
): ControllerSpec<KubeObject> {
  const now = options.now ?? (() => new Date());

  /** Resolves to the phase written to status. */
  async function apply(
    stored: DatabaseCluster,
    ctx: ReconcileContext,
  ): Promise<string | undefined> {
    const { signal } = ctx;
    const valid = validateDatabaseCluster(stored.spec);
    if (!valid.ok) {
      const status = invalidDatabaseStatus(stored, valid.message, now());
      return await rejectSpec(ctx, stored, valid.message, status);
    }
    const cluster: DatabaseCluster = { ...stored, spec: valid.spec };
    const desired = renderDatabaseCluster(cluster);
    const { children } = ctx;
    const [statefulSet] = await guardChildren(
      ctx,
      stored,
      async () => {
        await ensureCredentials(cluster, ctx);
        return await Promise.all([
          children.apply(STATEFUL_SETS, desired.statefulSet as KubeObject, signal),
          children.apply(SERVICES, desired.headlessService as KubeObject, signal),
          children.apply(SERVICES, desired.clientService as KubeObject, signal),
        ]);
      },
      (message) => invalidDatabaseStatus(stored, message, now()),
      now,
    );
    return await record(ctx, cluster, statefulSet as V1StatefulSet);
  }

  /** Creates the Secret if it does not exist; never updates it, so the password is stable. */
  async function ensureCredentials(cluster: DatabaseCluster, ctx: ReconcileContext) {
    const key = keyOf(cluster.metadata.namespace, credentialsSecretName(cluster));
    if (ctx.cache(SECRETS).has(key)) return;
    const secret = renderCredentialsSecret(cluster, generatePassword());
    try {
      await ctx.client.create(SECRETS, secret as KubeObject, { signal: ctx.signal });
      ctx.events.publish({
        type: "Normal",
        reason: "CredentialsCreated",
        action: "Create",
        note: `created Secret ${credentialsSecretName(cluster)}`,
      });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  }

  /** Writes status and publishes the lifecycle transition, if one happened; resolves to the phase. */
  async function record(
    ctx: ReconcileContext,
    cluster: DatabaseCluster,
    statefulSet: V1StatefulSet | undefined,
  ): Promise<string | undefined> {
    const update = databaseStatus(cluster, statefulSet, now());
    await ctx.status(update.status);
    const t = update.transition;
    if (t) {
      ctx.events.publish({
        type: t.to === "Degraded" ? "Warning" : "Normal",
        reason: t.reason,
        action: "Reconcile",
        note: `${t.from} → ${t.to}: ${t.message}`,
      });
    }
    return update.status.phase;
  }

  /**
   * Releases the Secret from the cluster's ownership, so the garbage collector
   * leaves it with the volumes it unlocks: a cluster recreated under the same
   * name finds both, and the password still matches its data. The owner
   * labels keep it kinglet's, which kinglet's ownership policy requires of
   * every object it writes.
   */
  async function keepCredentials(stored: DatabaseCluster, ctx: ReconcileContext) {
    const { signal } = ctx;
    const labels = {
      [OWNER_LABELS.kind]: ownerKind(DATABASE_CLUSTERS),
      [OWNER_LABELS.namespace]: stored.metadata.namespace,
      [OWNER_LABELS.name]: stored.metadata.name,
    };
    try {
      await ctx.client.patch(SECRETS, credentialsSecretName(stored), {
        metadata: { ownerReferences: null, labels },
      }, { type: "merge", namespace: stored.metadata.namespace, signal });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async function cleanup(stored: DatabaseCluster, ctx: ReconcileContext): Promise<void> {
    const { signal } = ctx;
    // Read back from the API server when a memory limit evicted it from the cache.
    const statefulSet = await ctx.cache<V1StatefulSet & KubeObject>(STATEFUL_SETS)
      .getOrFetch(objectKey(stored), signal);
    const valid = validateDatabaseCluster(stored.spec);
    if (valid.ok) await record(ctx, { ...stored, spec: valid.spec }, statefulSet);
    if (stored.spec?.deletionPolicy !== "Delete") {
      await keepCredentials(stored, ctx);
      return;
    }
    const claims = await ctx.client.list(PERSISTENT_VOLUME_CLAIMS, {
      namespace: stored.metadata.namespace,
      labelSelector: labelSelector(selectorLabels(stored)),
      signal,
    });
    for (const claim of claims.items) {
      await ctx.client.delete(PERSISTENT_VOLUME_CLAIMS, claim.metadata?.name ?? "", {
        namespace: stored.metadata.namespace,
        ignoreNotFound: true,
        signal,
      });
    }
    ctx.events.publish({
      type: "Normal",
      reason: "VolumesDeleted",
      action: "Cleanup",
      note: `deleted ${claims.items.length} PersistentVolumeClaims (deletionPolicy: Delete)`,
    });
  }

  return {
    name: "databasecluster",
    resource: DATABASE_CLUSTERS,
    transform: projectPrimary,
    errorPolicy: tieredErrorPolicy(),
    reconcileRateLimit: { qps: 100 / 60, burst: 100 },
    owns: [
      { resource: STATEFUL_SETS, labelSelector: MANAGED_SELECTOR },
      { resource: SERVICES, labelSelector: MANAGED_SELECTOR },
      { resource: SECRETS, metadataOnly: true, labelSelector: MANAGED_SELECTOR },
    ],
    fieldManager: FIELD_MANAGER,
    rbac: [
      {
        apiGroups: [""],
        resources: ["secrets"],
        verbs: ["create", "patch"],
        reason: "the credentials Secret, created once by client (never applied, so its " +
          "password stays), released from the cluster by a merge patch under deletionPolicy Retain",
      },
      {
        apiGroups: [""],
        resources: ["persistentvolumeclaims"],
        verbs: ["list", "delete"],
        reason: "under deletionPolicy Delete, cleanup lists the volumes of the cluster by label " +
          "and deletes each",
      },
      {
        apiGroups: [STORAGE_CLASSES.group],
        resources: [STORAGE_CLASSES.plural],
        verbs: ["list"],
        clusterScoped: true,
        reason: "the admission webhook served beside this controller lists the StorageClasses " +
          "to refuse a DatabaseCluster naming one the cluster does not have",
      },
      {
        apiGroups: ["apps"],
        resources: ["statefulsets"],
        verbs: ["get"],
        reason: "cleanup reads the StatefulSet back when a memory limit evicted it from the cache",
      },
    ],
    finalizer: {
      name: FINALIZER,
      cleanup: (object, ctx) => cleanup(object as DatabaseCluster, ctx).then(() => ({})),
    },
    async reconcile(object, ctx) {
      const phase = await apply(object as DatabaseCluster, ctx);
      return {
        requeueAfterMs: phase === "Ready"
          ? options.readyRequeueAfterMs ?? 300_000
          : options.notReadyRequeueAfterMs ?? 60_000,
      };
    },
  };
}
