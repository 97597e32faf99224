/**
 * The lifecycle of a DatabaseCluster as an explicit state machine:
 *
 * ```text
 * Creating ─ClusterReady─▶ Ready ─ScalingStarted───▶ Scaling
 *                          ▲  │  ◀─ScalingCompleted─┘   ▲
 *                Recovered │  │ ReplicasUnavailable     │
 *                          │  ▼                         │
 *                         Degraded ─ScalingStarted──────┘
 *
 * Creating, Scaling, Ready, Degraded ─DeletionRequested─▶ Terminating
 * ```
 *
 * Every allowed edge is one row of {@link TRANSITIONS}, with the reason the
 * reconciler records as an Event. {@link nextState} is pure: it looks only
 * at the current state and an {@link Observation}, and a state with no
 * matching row stays as it is. The guards of one state's rows are mutually
 * exclusive (the tests check this), so the table's order does not matter.
 *
 * A cluster stays Creating until its first full start, and Scaling until
 * every replica of the new size is ready: pods of a StatefulSet come up one
 * after another, and calling that Degraded would raise an alarm on every
 * scale-up.
 *
 * @example
 * ```ts
 * import { nextState } from "./state.ts";
 * const step = nextState("Creating", {
 *   deleting: false, desiredReplicas: 1, statefulSetExists: true, currentReplicas: 1, readyReplicas: 1,
 * });
 * step.phase; // "Ready"
 * step.transition?.reason; // "ClusterReady"
 * ```
 *
 * @module
 */

/** The lifecycle states, in the order a cluster usually meets them. */
export const DATABASE_PHASES = ["Creating", "Scaling", "Ready", "Degraded", "Terminating"] as const;

/** One of {@link DATABASE_PHASES}. */
export type DatabasePhase = typeof DATABASE_PHASES[number];

/** What the reconciler saw, the only input to {@link nextState} besides the state. */
export interface Observation {
  /** The DatabaseCluster has a `deletionTimestamp`. */
  deleting: boolean;
  /** `spec.replicas` of the DatabaseCluster. */
  desiredReplicas: number;
  /** The StatefulSet exists (in the cache). */
  statefulSetExists: boolean;
  /** `status.replicas` of the StatefulSet: pods that exist; 0 without one. */
  currentReplicas: number;
  /** `status.readyReplicas` of the StatefulSet; 0 without one. */
  readyReplicas: number;
}

/** One allowed edge of the state machine. */
export interface TransitionRule {
  from: DatabasePhase;
  to: DatabasePhase;
  /** The Event and condition reason, in CamelCase. */
  reason: string;
  /** When the edge is taken. */
  when: (observation: Observation) => boolean;
}

/** An edge taken, for an Event. */
export interface Transition {
  from: DatabasePhase;
  to: DatabasePhase;
  reason: string;
  message: string;
}

/** The result of {@link nextState}. */
export interface Step {
  phase: DatabasePhase;
  /** Set when the phase changed. */
  transition?: Transition;
}

const deleting = (o: Observation) => o.deleting;
/** Every desired replica exists and is ready. */
const settled = (o: Observation) =>
  !o.deleting && o.statefulSetExists && o.currentReplicas === o.desiredReplicas &&
  o.readyReplicas >= o.desiredReplicas;
/** The StatefulSet is growing or shrinking toward a new size. */
const resizing = (o: Observation) =>
  !o.deleting && o.statefulSetExists && o.currentReplicas !== o.desiredReplicas;
/** At the desired size, or without a StatefulSet, and short of ready replicas. */
const unavailable = (o: Observation) => !o.deleting && !settled(o) && !resizing(o);

/** Every allowed edge. Transitions not listed here cannot happen. */
export const TRANSITIONS: readonly TransitionRule[] = [
  { from: "Creating", to: "Ready", reason: "ClusterReady", when: settled },
  { from: "Ready", to: "Scaling", reason: "ScalingStarted", when: resizing },
  { from: "Ready", to: "Degraded", reason: "ReplicasUnavailable", when: unavailable },
  { from: "Scaling", to: "Ready", reason: "ScalingCompleted", when: settled },
  { from: "Degraded", to: "Ready", reason: "Recovered", when: settled },
  { from: "Degraded", to: "Scaling", reason: "ScalingStarted", when: resizing },
  { from: "Creating", to: "Terminating", reason: "DeletionRequested", when: deleting },
  { from: "Scaling", to: "Terminating", reason: "DeletionRequested", when: deleting },
  { from: "Ready", to: "Terminating", reason: "DeletionRequested", when: deleting },
  { from: "Degraded", to: "Terminating", reason: "DeletionRequested", when: deleting },
];

/**
 * The state after `current` given what was observed, and the transition
 * taken, if any.
 *
 * @throws {RangeError} when `current` is not a {@link DatabasePhase} or the
 * observation holds negative or non-integer counts.
 * @example
 * ```ts
 * import { nextState } from "./state.ts";
 * nextState("Ready", {
 *   deleting: false, desiredReplicas: 3, statefulSetExists: true, currentReplicas: 3, readyReplicas: 2,
 * }).transition?.reason; // "ReplicasUnavailable"
 * ```
 */
export function nextState(current: DatabasePhase, observation: Observation): Step {
  if (!DATABASE_PHASES.includes(current)) {
    throw new RangeError(
      `Cannot advance the DatabaseCluster state machine: unknown state ${
        JSON.stringify(current)
      }; ` +
        `expected one of ${DATABASE_PHASES.join(", ")}`,
    );
  }
  checkObservation(observation);
  const rule = TRANSITIONS.find((row) => row.from === current && row.when(observation));
  if (!rule) return { phase: current };
  return {
    phase: rule.to,
    transition: {
      from: current,
      to: rule.to,
      reason: rule.reason,
      message: describeObservation(observation),
    },
  };
}

/**
 * A sentence about an observation, for Events and condition messages.
 *
 * @example
 * ```ts
 * import { describeObservation } from "./state.ts";
 * describeObservation({
 *   deleting: false, desiredReplicas: 3, statefulSetExists: true, currentReplicas: 1, readyReplicas: 1,
 * }); // "Scaling from 1 to 3 replicas"
 * ```
 */
export function describeObservation(o: Observation): string {
  if (o.deleting) return "The DatabaseCluster is being deleted";
  if (!o.statefulSetExists) return "Waiting for the StatefulSet to exist";
  if (o.currentReplicas !== o.desiredReplicas) {
    return `Scaling from ${o.currentReplicas} to ${o.desiredReplicas} replicas`;
  }
  return `${Math.min(o.readyReplicas, o.desiredReplicas)} of ${o.desiredReplicas} replicas ready`;
}

function checkObservation(o: Observation): void {
  for (const field of ["desiredReplicas", "currentReplicas", "readyReplicas"] as const) {
    const value = o[field];
    if (!Number.isInteger(value) || value < 0) {
      throw new RangeError(
        `Cannot advance the DatabaseCluster state machine: '${field}' must be a ` +
          `non-negative integer, got ${value}`,
      );
    }
  }
}
