import assert from "node:assert/strict";
import { ApiError, TransportError } from "../../lib/kube/errors.ts";
import type { Resource } from "../../lib/kube/types.ts";
import { FakeClock, flushMicrotasks } from "../../lib/async/clock.ts";
import { resetLogging, setupLogging } from "../../lib/log.ts";
import {
  LeaderElector,
  type LeaderElectorOptions,
  type Lease,
  type LeaseApi,
  leaseApi,
  type LeaseClient,
} from "../../lib/runtime/leader/leader.ts";

const path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kinglet";

/** Leases in memory, with the API server's optimistic concurrency. */
class MemoryLeases implements LeaseApi {
  readonly #leases = new Map<string, Lease>();
  #version = 0;
  conflicts = 0;

  get(namespace: string, name: string): Promise<Lease | undefined> {
    const lease = this.#leases.get(`${namespace}/${name}`);
    return Promise.resolve(lease && structuredClone(lease));
  }

  create(lease: Lease): Promise<Lease> {
    const key = `${lease.metadata?.namespace}/${lease.metadata?.name}`;
    if (this.#leases.has(key)) {
      this.conflicts++;
      return Promise.reject(
        new ApiError({
          status: 409,
          reason: "AlreadyExists",
          message: "exists",
          verb: "create",
          path,
        }),
      );
    }
    return Promise.resolve(this.#store(key, lease));
  }

  replace(lease: Lease): Promise<Lease> {
    const key = `${lease.metadata?.namespace}/${lease.metadata?.name}`;
    const stored = this.#leases.get(key);
    if (!stored) {
      return Promise.reject(
        new ApiError({ status: 404, message: "not found", verb: "update", path }),
      );
    }
    if (stored.metadata?.resourceVersion !== lease.metadata?.resourceVersion) {
      this.conflicts++;
      return Promise.reject(
        new ApiError({
          status: 409,
          reason: "Conflict",
          message: "the object has been modified",
          verb: "update",
          path,
        }),
      );
    }
    return Promise.resolve(this.#store(key, lease));
  }

  /** The stored Lease, for assertions. */
  peek(): Lease | undefined {
    return this.#leases.get("kube-system/kinglet");
  }

  #store(key: string, lease: Lease): Lease {
    const stored = structuredClone(lease);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.#version) };
    this.#leases.set(key, stored);
    return structuredClone(stored);
  }
}

/** {@link MemoryLeases} that can also be watched, as `leaseApi` over a real client. */
class WatchedLeases extends MemoryLeases {
  readonly #watchers = new Set<(lease: Lease) => void>();

  override create(lease: Lease): Promise<Lease> {
    return super.create(lease).then((stored) => this.#tell(stored));
  }

  override replace(lease: Lease): Promise<Lease> {
    return super.replace(lease).then((stored) => this.#tell(stored));
  }

  async *changes(
    _namespace: string,
    _name: string,
    _from: string,
    signal: AbortSignal,
  ): AsyncIterable<Lease | undefined> {
    const pending: Lease[] = [];
    let wake = () => {};
    const watcher = (lease: Lease) => {
      pending.push(lease);
      wake();
    };
    this.#watchers.add(watcher);
    signal.addEventListener("abort", () => wake(), { once: true });
    try {
      while (!signal.aborted) {
        const next = pending.shift();
        if (next) yield next;
        else await new Promise<void>((resolve) => wake = resolve);
      }
    } finally {
      this.#watchers.delete(watcher);
    }
  }

  #tell(stored: Lease): Lease {
    for (const watcher of this.#watchers) watcher(structuredClone(stored));
    return stored;
  }
}

/** One candidate's connection to the API: up, failing fast, or hanging until cancelled. */
class Link implements LeaseApi {
  state: "up" | "failing" | "hanging" = "up";
  readonly #api: LeaseApi;
  readonly changes?: LeaseApi["changes"];

  constructor(api: LeaseApi) {
    this.#api = api;
    if (api.changes) this.changes = api.changes.bind(api);
  }

  get(namespace: string, name: string, signal?: AbortSignal) {
    return this.#through(signal, () => this.#api.get(namespace, name, signal));
  }

  create(lease: Lease, signal?: AbortSignal) {
    return this.#through(signal, () => this.#api.create(lease, signal));
  }

  replace(lease: Lease, signal?: AbortSignal) {
    return this.#through(signal, () => this.#api.replace(lease, signal));
  }

  #through<R>(signal: AbortSignal | undefined, call: () => Promise<R>): Promise<R> {
    if (this.state === "failing") return Promise.reject(new TransportError("connection refused"));
    if (this.state === "hanging") {
      return new Promise((_, reject) =>
        signal?.addEventListener("abort", () => reject(signal.reason))
      );
    }
    return call();
  }
}

interface Candidate {
  elector: LeaderElector;
  link: Link;
  stop: AbortController;
  done: Promise<void>;
  /** Times at which leadership started and stopped. */
  startedAt: number[];
  stoppedAt: number[];
  leaders: string[];
}

function candidate(
  clock: FakeClock,
  leases: MemoryLeases,
  identity: string,
  options: Partial<LeaderElectorOptions> & { drain?: () => Promise<void> } = {},
): Candidate {
  const link = new Link(leases);
  const elector = new LeaderElector(link, {
    namespace: "kube-system",
    name: "kinglet",
    identity,
    clock,
    random: () => 0,
    ...options,
  });
  const stop = new AbortController();
  const c: Candidate = {
    elector,
    link,
    stop,
    done: Promise.resolve(),
    startedAt: [],
    stoppedAt: [],
    leaders: [],
  };
  c.done = elector.run(stop.signal, {
    onStartedLeading: (leading) => {
      c.startedAt.push(clock.now());
      leading.addEventListener("abort", () => c.stoppedAt.push(clock.now()));
    },
    onStoppedLeading: () => options.drain?.(),
    onNewLeader: (leader) => c.leaders.push(leader),
  });
  return c;
}

async function shutDown(...candidates: Candidate[]): Promise<void> {
  for (const c of candidates) c.stop.abort();
  await Promise.all(candidates.map((c) => c.done));
}

const released = (): Lease => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { namespace: "kube-system", name: "kinglet" },
  spec: { holderIdentity: "", leaseDurationSeconds: 1, leaseTransitions: 4 },
});

Deno.test("two candidates racing for one Lease: exactly one leads and the other loses on resourceVersion", async () => {
  const clock = new FakeClock();
  const leases = new MemoryLeases();
  await leases.create(released());
  const a = candidate(clock, leases, "a");
  const b = candidate(clock, leases, "b");
  await flushMicrotasks();
  assert.ok(leases.conflicts >= 1, "the two writes did not race");
  await clock.advance(30_000);
  assert.equal([a, b].filter((c) => c.elector.isLeader).length, 1);
  const leader = a.elector.isLeader ? "a" : "b";
  assert.equal(leases.peek()?.spec?.holderIdentity, leader);
  assert.equal(leases.peek()?.spec?.leaseTransitions, 5);
  assert.deepEqual(a.leaders, [leader]);
  assert.deepEqual(b.leaders, [leader]);
  assert.equal(a.elector.leader, leader);
  await shutDown(a, b);
});

Deno.test("a new Lease is created with client-go's defaults and renewed every retry period", async () => {
  const clock = new FakeClock(Date.parse("2030-01-01T00:00:00Z"));
  const leases = new MemoryLeases();
  const a = candidate(clock, leases, "a");
  await flushMicrotasks();
  assert.equal(a.elector.isLeader, true);
  assert.deepEqual(leases.peek()?.spec, {
    holderIdentity: "a",
    leaseDurationSeconds: 15,
    acquireTime: "2030-01-01T00:00:00.000000Z",
    renewTime: "2030-01-01T00:00:00.000000Z",
    leaseTransitions: 0,
  });
  await clock.advance(2_000);
  assert.equal(leases.peek()?.spec?.renewTime, "2030-01-01T00:00:02.000000Z");
  assert.equal(leases.peek()?.spec?.acquireTime, "2030-01-01T00:00:00.000000Z");
  assert.equal(leases.peek()?.metadata?.resourceVersion, "2");
  await shutDown(a);
});

for (const failure of ["failing", "hanging"] as const) {
  Deno.test(`a leader whose requests are ${failure} stops leading before a standby can see its Lease expire`, async () => {
    const clock = new FakeClock();
    const leases = new MemoryLeases();
    const a = candidate(clock, leases, "a");
    await flushMicrotasks();
    const b = candidate(clock, leases, "b");
    await clock.advance(5_000);
    assert.equal(a.elector.isLeader, true);
    a.link.state = failure;
    await clock.advance(30_000);
    assert.deepEqual(a.startedAt, [0]);
    const [stopped] = a.stoppedAt;
    const [taken] = b.startedAt;
    assert.ok(stopped !== undefined && taken !== undefined);
    assert.ok(stopped <= 4_000 + 10_000, `a stopped at ${stopped}, after its renew deadline`);
    assert.ok(taken >= 4_000 + 15_000, `b took over at ${taken}, before the Lease expired`);
    assert.equal(a.elector.isLeader, false);
    assert.equal(b.elector.isLeader, true);
    assert.equal(leases.peek()?.spec?.leaseTransitions, 1);
    await a.done;
    await shutDown(b);
  });
}

Deno.test("a standby measures expiry from when it saw the record change, not from the holder's timestamps", async () => {
  const clock = new FakeClock(Date.parse("2030-01-01T00:00:00Z"));
  const start = clock.now();
  const leases = new MemoryLeases();
  await leases.create({
    ...released(),
    spec: {
      holderIdentity: "crashed",
      leaseDurationSeconds: 15,
      acquireTime: "2001-01-01T00:00:00.000000Z",
      renewTime: "2001-01-01T00:00:00.000000Z",
      leaseTransitions: 2,
    },
  });
  const b = candidate(clock, leases, "b");
  await clock.advance(14_999);
  assert.equal(b.elector.isLeader, false);
  assert.deepEqual(b.leaders, ["crashed"]);
  await clock.advance(11);
  assert.equal(
    b.elector.isLeader,
    true,
    "taken at the expiry it saw, not at its next retry (16 s)",
  );
  assert.deepEqual(b.startedAt, [start + 15_010]);
  assert.equal(leases.peek()?.spec?.holderIdentity, "b");
  assert.equal(leases.peek()?.spec?.leaseTransitions, 3);
  assert.equal(leases.peek()?.spec?.acquireTime, "2030-01-01T00:00:15.010000Z");
  assert.deepEqual(b.leaders, ["crashed", "b"]);
  await shutDown(b);
});

Deno.test("a standby watching the Lease takes over a dead leader at its last renewal plus the lease duration", async () => {
  const clock = new FakeClock();
  const leases = new WatchedLeases();
  const a = candidate(clock, leases, "a");
  await flushMicrotasks();
  const b = candidate(clock, leases, "b", { random: () => 0.99 });
  await clock.advance(5_000);
  assert.deepEqual(a.startedAt, [0]);
  a.link.state = "failing";
  const lastRenewal = 4_000;
  await clock.advance(lastRenewal + 15_000 - 5_000 + 9);
  assert.equal(b.elector.isLeader, false, "not before the expiry");
  await clock.advance(1);
  assert.equal(b.elector.isLeader, true);
  assert.deepEqual(b.startedAt, [lastRenewal + 15_010], "at the expiry of the renewal it watched");
  const [aStopped] = a.stoppedAt;
  assert.ok(aStopped !== undefined && aStopped <= lastRenewal + 10_000, `a stopped at ${aStopped}`);
  await shutDown(a, b);
});

Deno.test("a standby watching the Lease takes over at once when the leader releases it", async () => {
  const clock = new FakeClock();
  const leases = new WatchedLeases();
  const a = candidate(clock, leases, "a");
  await flushMicrotasks();
  const b = candidate(clock, leases, "b", { random: () => 0.99 });
  await clock.advance(3_000);
  a.stop.abort();
  await a.done;
  await clock.advance(0);
  assert.equal(b.elector.isLeader, true);
  assert.deepEqual(b.startedAt, [3_000], "woken by the release, not by its next retry");
  await shutDown(b);
});

Deno.test("a clean shutdown drains, then releases the Lease so the standby takes over at its next retry", async () => {
  const clock = new FakeClock();
  const leases = new MemoryLeases();
  let drained = false;
  const a = candidate(clock, leases, "a", {
    drain: async () => {
      await clock.sleep(1_000);
      drained = true;
    },
  });
  await flushMicrotasks();
  const b = candidate(clock, leases, "b");
  await clock.advance(5_000);
  a.stop.abort();
  await clock.advance(999);
  assert.equal(
    leases.peek()?.spec?.holderIdentity,
    "a",
    "released before onStoppedLeading finished",
  );
  await clock.advance(1);
  await a.done;
  assert.equal(drained, true);
  assert.equal(leases.peek()?.spec?.holderIdentity, "");
  assert.equal(leases.peek()?.spec?.leaseDurationSeconds, 1);
  await clock.advance(2_000);
  assert.equal(b.elector.isLeader, true);
  const [taken] = b.startedAt;
  assert.ok(taken !== undefined && taken <= 8_000, `b took over at ${taken}`);
  assert.equal(leases.peek()?.spec?.leaseTransitions, 1);
  await shutDown(b);
});

Deno.test("without releaseOnCancel the Lease stays held after shutdown and release() gives it up later", async () => {
  const clock = new FakeClock();
  const leases = new MemoryLeases();
  const a = candidate(clock, leases, "a", { releaseOnCancel: false });
  await flushMicrotasks();
  await shutDown(a);
  assert.equal(leases.peek()?.spec?.holderIdentity, "a");
  assert.equal(await a.elector.release(), true);
  assert.equal(leases.peek()?.spec?.holderIdentity, "");
  assert.equal(await a.elector.release(), false, "released twice");
});

/** Candidate `a` shut down still holding the Lease (no release on cancel), and the Lease as stored. */
async function heldAfterShutdown(leases: MemoryLeases) {
  const a = candidate(new FakeClock(), leases, "a", { releaseOnCancel: false });
  await flushMicrotasks();
  await shutDown(a);
  const current = await leases.get("kube-system", "kinglet");
  assert.ok(current);
  return { a, current };
}

Deno.test("a shutdown whose last renewal landed unseen still releases the Lease, read again after the conflict", async () => {
  const leases = new MemoryLeases();
  const { a, current } = await heldAfterShutdown(leases);
  // A renewal the shutdown cut short, applied by the server after all: same holder, newer version.
  await leases.replace(current);
  const conflicts = leases.conflicts;
  assert.equal(await a.elector.release(), true);
  assert.equal(leases.conflicts, conflicts + 1, "the first replace met the newer version");
  assert.equal(leases.peek()?.spec?.holderIdentity, "");
});

Deno.test("a release that meets a Lease taken meanwhile by another holder leaves it to them", async () => {
  const leases = new MemoryLeases();
  const { a, current } = await heldAfterShutdown(leases);
  await leases.replace({ ...current, spec: { ...current.spec, holderIdentity: "b" } });
  assert.equal(await a.elector.release(), false);
  assert.equal(leases.peek()?.spec?.holderIdentity, "b");
});

Deno.test("a leader that sees another holder stops at once instead of waiting for its deadline", async () => {
  const clock = new FakeClock();
  const leases = new MemoryLeases();
  const a = candidate(clock, leases, "a");
  await flushMicrotasks();
  const current = await leases.get("kube-system", "kinglet");
  assert.ok(current);
  await leases.replace({ ...current, spec: { ...current.spec, holderIdentity: "intruder" } });
  await clock.advance(2_000);
  assert.deepEqual(a.stoppedAt, [2_000]);
  await a.done;
  assert.equal(leases.peek()?.spec?.holderIdentity, "intruder", "released a Lease it did not hold");
});

Deno.test("release() is refused while leading", async () => {
  const clock = new FakeClock();
  const a = candidate(clock, new MemoryLeases(), "a");
  await flushMicrotasks();
  await assert.rejects(() => a.elector.release(), { name: "TypeError", message: /while leading/ });
  await assert.rejects(
    () => a.elector.run(new AbortController().signal, { onStartedLeading() {} }),
    {
      name: "TypeError",
      message: /already running/,
    },
  );
  await shutDown(a);
});

Deno.test("durations out of client-go's order are rejected", () => {
  const leases = new MemoryLeases();
  const base = { namespace: "kube-system", name: "kinglet", identity: "a" };
  assert.throws(
    () => new LeaderElector(leases, { ...base, leaseDurationMs: 10_000 }),
    /RangeError: .*'leaseDurationMs' must be whole seconds greater than 'renewDeadlineMs', got 10000 and 10000/,
  );
  assert.throws(
    () => new LeaderElector(leases, { ...base, retryPeriodMs: 9_000 }),
    /RangeError: .*'renewDeadlineMs' must be greater than 1.2 × 'retryPeriodMs'/,
  );
  assert.throws(
    () => new LeaderElector(leases, { ...base, leaseDurationMs: 15_500 }),
    /whole seconds/,
  );
  assert.throws(
    () => new LeaderElector(leases, { ...base, identity: "" }),
    /'identity' must not be empty/,
  );
});

Deno.test("leaseApi reads a missing Lease as undefined and writes through the Lease resource", async () => {
  const calls: string[] = [];
  const client = {
    get: (res: Resource, name: string, opts?: { namespace?: string }) => {
      calls.push(`get ${res.group}/${res.plural} ${opts?.namespace}/${name}`);
      return Promise.reject(new ApiError({ status: 404, message: "not found", verb: "get", path }));
    },
    create: (res: Resource, obj: Lease) => {
      calls.push(`create ${res.plural} ${obj.metadata?.name}`);
      return Promise.resolve(obj);
    },
    replace: (res: Resource, obj: Lease) => {
      calls.push(`replace ${res.plural} ${obj.metadata?.name}`);
      return Promise.resolve(obj);
    },
  } as unknown as LeaseClient;
  const api = leaseApi(client);
  assert.equal(await api.get("kube-system", "kinglet"), undefined);
  await api.create(released());
  await api.replace(released());
  assert.deepEqual(calls, [
    "get coordination.k8s.io/leases kube-system/kinglet",
    "create leases kinglet",
    "replace leases kinglet",
  ]);
});

/** The leader's JSON log records from here on; call `resetLogging` when done. */
function captureLog(): { level: string; logger: string; message: string }[] {
  const records: { level: string; logger: string; message: string }[] = [];
  setupLogging({ format: "json", level: "info", write: (line) => records.push(JSON.parse(line)) });
  return records;
}

/** Leases whose renewals the API server refuses once `refused` is set, as after a revoked token. */
class Refusing extends MemoryLeases {
  refused: ApiError | undefined;

  override replace(lease: Lease): Promise<Lease> {
    return this.refused ? Promise.reject(this.refused) : super.replace(lease);
  }
}

const refusals = {
  401: new ApiError({ status: 401, message: "Unauthorized", verb: "PUT", path }),
  403: new ApiError({
    status: 403,
    message: 'leases.coordination.k8s.io "kinglet" is forbidden: User ' +
      '"system:serviceaccount:kinglet-system:kinglet" cannot update resource "leases"',
    verb: "PUT",
    path,
  }),
};

for (const [status, refusal] of Object.entries(refusals)) {
  Deno.test(`a leader whose renewals get ${status} warns that it lost the Lease, with the refusal and what it means`, async () => {
    const records = captureLog();
    try {
      const clock = new FakeClock();
      const leases = new Refusing();
      const a = candidate(clock, leases, "a");
      await flushMicrotasks();
      assert.equal(a.elector.isLeader, true);
      leases.refused = refusal;
      await clock.advance(30_000);
      await a.done;
      assert.equal(a.elector.isLeader, false);
      assert.equal(a.stoppedAt.length, 1);
      const lost = records.filter((r) => r.logger === "kinglet.leader" && / lost /.test(r.message));
      assert.equal(lost.length, 1, JSON.stringify(records));
      const [record] = lost;
      assert.equal(record!.level, "WARN");
      assert.match(
        record!.message,
        /^"a" lost "Lease kube-system\/kinglet" and stops the work it led: "no renewal succeeded within 10000 ms; the last failure: PUT /,
      );
      assert.ok(record!.message.includes(`(${status} ${refusal.reason})`), record!.message);
      assert.match(record!.message, /the token may be revoked or expired/);
      assert.equal(
        records.filter((r) => /stopped leading/.test(r.message)).length,
        0,
        "a loss reported as a clean stop",
      );
    } finally {
      resetLogging();
    }
  });
}

Deno.test("a clean shutdown says at INFO that the leader stopped leading, and warns of nothing", async () => {
  const records = captureLog();
  try {
    const clock = new FakeClock();
    const a = candidate(clock, new MemoryLeases(), "a");
    await flushMicrotasks();
    await shutDown(a);
    const stopped = records.filter((r) => /stopped leading/.test(r.message));
    assert.deepEqual(stopped.map((r) => [r.level, r.message]), [
      ["INFO", '"a" stopped leading "Lease kube-system/kinglet": "shutting down"'],
    ]);
    assert.deepEqual(records.filter((r) => r.level === "WARN"), []);
  } finally {
    resetLogging();
  }
});
