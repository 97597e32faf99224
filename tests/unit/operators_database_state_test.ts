import assert from "node:assert/strict";
import {
  DATABASE_PHASES,
  type DatabasePhase,
  nextState,
  type Observation,
  TRANSITIONS,
} from "../../lib/operators/database/state.ts";

function observe(overrides: Partial<Observation> = {}): Observation {
  return {
    deleting: false,
    desiredReplicas: 3,
    statefulSetExists: true,
    currentReplicas: 3,
    readyReplicas: 3,
    ...overrides,
  };
}

/** Every observation over small counts: enough to reach each guard's edges. */
function* allObservations(): Generator<Observation> {
  for (const deleting of [false, true]) {
    for (const statefulSetExists of [false, true]) {
      for (let desiredReplicas = 1; desiredReplicas <= 3; desiredReplicas++) {
        for (let currentReplicas = 0; currentReplicas <= 4; currentReplicas++) {
          for (let readyReplicas = 0; readyReplicas <= currentReplicas; readyReplicas++) {
            if (!statefulSetExists && (currentReplicas > 0 || readyReplicas > 0)) continue;
            yield { deleting, statefulSetExists, desiredReplicas, currentReplicas, readyReplicas };
          }
        }
      }
    }
  }
}

const edges: [DatabasePhase, DatabasePhase, string, Observation][] = [
  ["Creating", "Ready", "ClusterReady", observe()],
  ["Ready", "Scaling", "ScalingStarted", observe({ desiredReplicas: 5 })],
  ["Ready", "Scaling", "ScalingStarted", observe({ desiredReplicas: 1 })],
  ["Ready", "Degraded", "ReplicasUnavailable", observe({ readyReplicas: 2 })],
  [
    "Ready",
    "Degraded",
    "ReplicasUnavailable",
    observe({ statefulSetExists: false, currentReplicas: 0, readyReplicas: 0 }),
  ],
  ["Scaling", "Ready", "ScalingCompleted", observe()],
  ["Degraded", "Ready", "Recovered", observe()],
  ["Degraded", "Scaling", "ScalingStarted", observe({ desiredReplicas: 4 })],
  ["Creating", "Terminating", "DeletionRequested", observe({ deleting: true })],
  ["Scaling", "Terminating", "DeletionRequested", observe({ deleting: true })],
  ["Ready", "Terminating", "DeletionRequested", observe({ deleting: true })],
  ["Degraded", "Terminating", "DeletionRequested", observe({ deleting: true })],
];

for (const [from, to, reason, observation] of edges) {
  Deno.test(`the state machine moves ${from} to ${to} with reason ${reason}`, () => {
    const step = nextState(from, observation);
    assert.equal(step.phase, to);
    assert.equal(step.transition?.from, from);
    assert.equal(step.transition?.to, to);
    assert.equal(step.transition?.reason, reason);
    assert.ok(step.transition!.message.length > 0);
  });
}

Deno.test("every edge of the transition table is exercised by a test", () => {
  const tested = new Set(edges.map(([from, to, reason]) => `${from}>${to}:${reason}`));
  for (const rule of TRANSITIONS) {
    assert.ok(tested.has(`${rule.from}>${rule.to}:${rule.reason}`), `${rule.from}>${rule.to}`);
  }
});

Deno.test("no undeclared transition can happen from any state and observation", () => {
  const declared = new Set(TRANSITIONS.map((rule) => `${rule.from}>${rule.to}:${rule.reason}`));
  let moves = 0;
  for (const from of DATABASE_PHASES) {
    for (const observation of allObservations()) {
      const step = nextState(from, observation);
      if (step.phase === from) {
        assert.equal(step.transition, undefined);
        continue;
      }
      moves++;
      const key = `${from}>${step.phase}:${step.transition?.reason}`;
      assert.ok(declared.has(key), `undeclared ${key} on ${JSON.stringify(observation)}`);
    }
  }
  assert.ok(moves > 0);
});

Deno.test("the guards of one state's transitions never overlap, so table order does not matter", () => {
  for (const from of DATABASE_PHASES) {
    const rows = TRANSITIONS.filter((rule) => rule.from === from);
    for (const observation of allObservations()) {
      const matching = rows.filter((rule) => rule.when(observation)).map((rule) => rule.to);
      assert.ok(
        matching.length <= 1,
        `${from} matches ${matching.join(", ")} on ${JSON.stringify(observation)}`,
      );
    }
  }
});

Deno.test("Terminating is final", () => {
  assert.equal(TRANSITIONS.filter((rule) => rule.from === "Terminating").length, 0);
  for (const observation of allObservations()) {
    assert.deepEqual(nextState("Terminating", observation), { phase: "Terminating" });
  }
});

Deno.test("a cluster stays Creating until its first full start", () => {
  for (
    const observation of [
      observe({ statefulSetExists: false, currentReplicas: 0, readyReplicas: 0 }),
      observe({ currentReplicas: 1, readyReplicas: 0 }),
      observe({ readyReplicas: 2 }),
    ]
  ) {
    assert.deepEqual(nextState("Creating", observation), { phase: "Creating" });
  }
});

Deno.test("a scale-up stays Scaling while new pods start, rather than Degraded", () => {
  assert.deepEqual(nextState("Scaling", observe({ currentReplicas: 2, readyReplicas: 1 })), {
    phase: "Scaling",
  });
  assert.deepEqual(nextState("Scaling", observe({ readyReplicas: 2 })), { phase: "Scaling" });
});

Deno.test("transition messages describe the observation", () => {
  assert.equal(
    nextState("Ready", observe({ desiredReplicas: 5 })).transition?.message,
    "Scaling from 3 to 5 replicas",
  );
  assert.equal(
    nextState("Ready", observe({ readyReplicas: 1 })).transition?.message,
    "1 of 3 replicas ready",
  );
  assert.equal(
    nextState("Ready", observe({ deleting: true })).transition?.message,
    "The DatabaseCluster is being deleted",
  );
});

Deno.test("nextState rejects an unknown state and impossible counts", () => {
  assert.throws(() => nextState("Sleeping" as DatabasePhase, observe()), {
    name: "RangeError",
    message:
      /unknown state "Sleeping"; expected one of Creating, Scaling, Ready, Degraded, Terminating/,
  });
  assert.throws(() => nextState("Ready", observe({ readyReplicas: -1 })), {
    name: "RangeError",
    message: /'readyReplicas' must be a non-negative integer, got -1/,
  });
});
