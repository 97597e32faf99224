/**
 * The status of a DatabaseCluster: the state machine advanced by what the
 * reconciler observed, and the counts, conditions, Secret name and endpoint
 * that go with it. Pure: the reconciler passes in the observed StatefulSet
 * and the time, writes the status and records the transition, if any, as an
 * Event.
 *
 * Condition reasons name the state the cluster is in (`Creating`, `Scaling`,
 * `ClusterReady`, `ReplicasUnavailable`, `DeletionRequested`); Event reasons
 * name the edge taken (see `TRANSITIONS`).
 *
 * @example
 * ```ts
 * import { databaseStatus } from "./status.ts";
 * const { status, transition } = databaseStatus({
 *   apiVersion: "kinglet.dev/v1alpha1",
 *   kind: "DatabaseCluster",
 *   metadata: { name: "orders", namespace: "shop", generation: 1 },
 *   spec: { engine: "postgres", version: "17", replicas: 1, storage: { size: "1Gi" }, deletionPolicy: "Retain" },
 * }, undefined, new Date());
 * status.phase; // "Creating"
 * transition; // undefined
 * ```
 *
 * @module
 */
import type { V1StatefulSet } from "../models.ts";
import type { KubeObject } from "../../kube/mod.ts";
import { type Health, setStandardConditions } from "../conditions.ts";
import { credentialsSecretName, databaseEndpoint } from "./render.ts";
import type { DatabaseCluster, DatabaseStatus } from "./kind.ts";
import {
  DATABASE_PHASES,
  type DatabasePhase,
  describeObservation,
  nextState,
  type Observation,
  type Transition,
} from "./state.ts";

const HEALTH: Record<DatabasePhase, Health> = {
  Creating: "Progressing",
  Scaling: "Progressing",
  Ready: "Ready",
  Degraded: "Degraded",
  Terminating: "Terminating",
};

const REASON: Record<DatabasePhase, string> = {
  Creating: "Creating",
  Scaling: "Scaling",
  Ready: "ClusterReady",
  Degraded: "ReplicasUnavailable",
  Terminating: "DeletionRequested",
};

/** A status to write and the transition to record as an Event, if any. */
export interface DatabaseStatusUpdate {
  status: DatabaseStatus;
  transition?: Transition;
}

/**
 * What the state machine sees of a cluster and its StatefulSet.
 *
 * @example
 * ```ts
 * import { observeDatabase } from "./status.ts";
 * observeDatabase(
 *   { metadata: { name: "orders" }, spec: { replicas: 3 } },
 *   { spec: { replicas: 3, selector: {}, serviceName: "orders-headless", template: {} },
 *     status: { replicas: 3, readyReplicas: 2 } },
 * ).readyReplicas; // 2
 * ```
 */
export function observeDatabase(
  cluster: {
    metadata: DatabaseCluster["metadata"];
    spec: Pick<DatabaseCluster["spec"], "replicas">;
  },
  statefulSet: V1StatefulSet | undefined,
): Observation {
  return {
    deleting: cluster.metadata.deletionTimestamp !== undefined,
    desiredReplicas: cluster.spec.replicas,
    statefulSetExists: statefulSet !== undefined,
    currentReplicas: statefulSet?.status?.replicas ?? 0,
    readyReplicas: statefulSet?.status?.readyReplicas ?? 0,
  };
}

/**
 * The status of a cluster with a valid spec, given its StatefulSet as
 * observed (`undefined` when it does not exist yet). The current state is
 * `status.phase`, or Creating for a new cluster.
 *
 * @throws {TypeError} as `setCondition`.
 * @example
 * ```ts
 * import { databaseStatus } from "./status.ts";
 * const update = databaseStatus({
 *   apiVersion: "kinglet.dev/v1alpha1",
 *   kind: "DatabaseCluster",
 *   metadata: { name: "orders", namespace: "shop", generation: 1 },
 *   spec: { engine: "mysql", version: "8.4", replicas: 1, storage: { size: "1Gi" }, deletionPolicy: "Retain" },
 *   status: { phase: "Creating" },
 * }, {
 *   spec: { replicas: 1, selector: {}, serviceName: "orders-headless", template: {} },
 *   status: { replicas: 1, readyReplicas: 1 },
 * }, new Date());
 * update.transition?.reason; // "ClusterReady"
 * ```
 */
export function databaseStatus(
  cluster: DatabaseCluster,
  statefulSet: V1StatefulSet | undefined,
  now: Date,
): DatabaseStatusUpdate {
  const observation = observeDatabase(cluster, statefulSet);
  const step = nextState(currentPhase(cluster.status), observation);
  const observedGeneration = cluster.metadata.generation;
  const status: DatabaseStatus = {
    observedGeneration,
    phase: step.phase,
    replicas: observation.currentReplicas,
    readyReplicas: observation.readyReplicas,
    secretName: credentialsSecretName(cluster),
    endpoint: databaseEndpoint(cluster),
    conditions: setStandardConditions(cluster.status?.conditions, {
      health: HEALTH[step.phase],
      reason: REASON[step.phase],
      message: describeObservation(observation),
      observedGeneration,
    }, now),
  };
  return step.transition ? { status, transition: step.transition } : { status };
}

/**
 * The status of a cluster whose spec failed `validateDatabaseCluster`:
 * `InvalidSpec` True with `message`, the lifecycle phase and counts kept
 * (the children are left as they were).
 *
 * @throws {TypeError} as `setCondition`.
 * @example
 * ```ts
 * import { invalidDatabaseStatus } from "./status.ts";
 * invalidDatabaseStatus(
 *   { kind: "DatabaseCluster", metadata: { name: "orders", generation: 2 } },
 *   'spec.engine: "oracle" is not supported; use one of postgres, mysql',
 *   new Date(),
 * ).phase; // "Creating"
 * ```
 */
export function invalidDatabaseStatus(
  cluster: KubeObject & { status?: DatabaseStatus },
  message: string,
  now: Date,
): DatabaseStatus {
  const observedGeneration = cluster.metadata?.generation;
  return {
    ...cluster.status,
    observedGeneration,
    phase: currentPhase(cluster.status),
    conditions: setStandardConditions(cluster.status?.conditions, {
      health: "Invalid",
      reason: "InvalidSpec",
      message,
      observedGeneration,
    }, now),
  };
}

/** The stored phase, or Creating when there is none (or a stranger wrote one). */
function currentPhase(status: DatabaseStatus | undefined): DatabasePhase {
  const phase = status?.phase;
  return phase !== undefined && DATABASE_PHASES.includes(phase) ? phase : "Creating";
}
