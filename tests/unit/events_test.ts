import assert from "node:assert/strict";
import { ApiError, TransportError } from "../../lib/kube/errors.ts";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";
import { FakeClock, flushMicrotasks } from "../../lib/async/clock.ts";
import {
  type EventClient,
  EventRecorder,
  type EventRecorderOptions,
  type EventSeries,
  type EventSink,
  eventSink,
  type KubeEvent,
} from "../../lib/runtime/events/events.ts";

type Call =
  | { verb: "create"; event: KubeEvent }
  | { verb: "patch"; namespace: string; name: string; series: EventSeries };

/** Records writes; answers each with the next scripted outcome, or success. */
class FakeSink implements EventSink {
  readonly calls: Call[] = [];
  readonly signals: (AbortSignal | undefined)[] = [];
  /** Outcomes of the next writes: an error to throw, "hang" until cancelled, or "hold" until `release()`. */
  readonly script: (Error | "hang" | "hold")[] = [];
  readonly #held: (() => void)[] = [];

  create(event: KubeEvent, signal?: AbortSignal): Promise<unknown> {
    this.calls.push({ verb: "create", event: structuredClone(event) });
    return this.#answer(signal);
  }

  patch(namespace: string, name: string, patch: { series: EventSeries }, signal?: AbortSignal) {
    this.calls.push({ verb: "patch", namespace, name, series: { ...patch.series } });
    return this.#answer(signal);
  }

  creates(): KubeEvent[] {
    return this.calls.flatMap((c) => (c.verb === "create" ? [c.event] : []));
  }

  #answer(signal?: AbortSignal): Promise<unknown> {
    this.signals.push(signal);
    const next = this.script.shift();
    if (next === "hang") {
      return new Promise((_, reject) =>
        signal?.addEventListener("abort", () => reject(signal.reason))
      );
    }
    if (next === "hold") return new Promise((resolve) => this.#held.push(() => resolve({})));
    return next ? Promise.reject(next) : Promise.resolve({});
  }

  /** Completes the writes held so far. */
  release(): void {
    this.#held.splice(0).forEach((resolve) => resolve());
  }
}

function pod(name: string, uid = `uid-${name}`): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "shop", uid, resourceVersion: "7" },
  };
}

const started = {
  type: "Normal",
  reason: "Started",
  action: "Reconcile",
  note: "all good",
} as const;

function setUp(options: Partial<EventRecorderOptions> = {}) {
  const clock = new FakeClock(Date.parse("2030-01-01T00:00:00Z"));
  const sink = new FakeSink();
  const recorder = new EventRecorder(sink, { reportingInstance: "kinglet-0", clock, ...options });
  return { clock, sink, recorder };
}

Deno.test("an event becomes an events.k8s.io/v1 Event about the object, written in the background", async () => {
  const { sink, recorder } = setUp();
  const child = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "shop", uid: "d1" },
  };
  recorder.publish(pod("web-0"), { ...started, related: child });
  assert.equal(sink.calls.length, 0, "publish() wrote synchronously");
  await recorder.flush();
  assert.deepEqual(sink.creates(), [{
    apiVersion: "events.k8s.io/v1",
    kind: "Event",
    metadata: {
      name: `web-0.${(BigInt(Date.parse("2030-01-01T00:00:00Z")) * 1_000_000n).toString(16)}`,
      namespace: "shop",
    },
    eventTime: "2030-01-01T00:00:00.000000Z",
    reportingController: "kinglet",
    reportingInstance: "kinglet-0",
    action: "Reconcile",
    reason: "Started",
    regarding: {
      apiVersion: "v1",
      kind: "Pod",
      name: "web-0",
      namespace: "shop",
      uid: "uid-web-0",
      resourceVersion: "7",
    },
    related: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      name: "web",
      namespace: "shop",
      uid: "d1",
    },
    note: "all good",
    type: "Normal",
  }]);
  assert.deepEqual(recorder.stats, {
    created: 1,
    patched: 0,
    rateLimited: 0,
    dropped: 0,
    failed: 0,
  });
});

Deno.test("events about cluster-scoped objects go to the default namespace", async () => {
  const { sink, recorder } = setUp();
  recorder.publish(
    { apiVersion: "v1", kind: "Node", metadata: { name: "edge-1", uid: "n1" } },
    started,
  );
  await recorder.flush();
  assert.equal(sink.creates()[0]?.metadata?.namespace, "default");
});

Deno.test("repeats within the window patch the first Event's series instead of creating Events", async () => {
  const { clock, sink, recorder } = setUp();
  recorder.publish(pod("web-0"), started);
  await recorder.flush();
  await clock.advance(10_000);
  recorder.publish(pod("web-0"), started);
  await recorder.flush();
  await clock.advance(20_000);
  recorder.publish(pod("web-0"), started);
  await recorder.flush();
  const name = sink.creates()[0]?.metadata?.name ?? "";
  assert.deepEqual(sink.calls.slice(1), [
    {
      verb: "patch",
      namespace: "shop",
      name,
      series: { count: 2, lastObservedTime: "2030-01-01T00:00:10.000000Z" },
    },
    {
      verb: "patch",
      namespace: "shop",
      name,
      series: { count: 3, lastObservedTime: "2030-01-01T00:00:30.000000Z" },
    },
  ]);
  assert.deepEqual(recorder.stats, {
    created: 1,
    patched: 2,
    rateLimited: 0,
    dropped: 0,
    failed: 0,
  });
});

Deno.test("repeats that arrive while a write is pending are folded into one write", async () => {
  const { clock, sink, recorder } = setUp();
  sink.script.push("hold");
  recorder.publish(pod("web-0"), started);
  for (let i = 0; i < 5; i++) {
    await clock.advance(1);
    recorder.publish(pod("web-0"), started);
  }
  assert.equal(sink.calls.length, 1);
  sink.release();
  await recorder.flush();
  assert.equal(sink.calls.length, 2);
  assert.deepEqual(sink.calls[1], {
    verb: "patch",
    namespace: "shop",
    name: sink.creates()[0]?.metadata?.name ?? "",
    series: { count: 6, lastObservedTime: "2030-01-01T00:00:00.005000Z" },
  });
});

Deno.test("a repeat after the window, or with another note, starts a new Event", async () => {
  const { clock, sink, recorder } = setUp({ seriesWindowMs: 60_000 });
  recorder.publish(pod("web-0"), started);
  recorder.publish(pod("web-0"), { ...started, note: "something else" });
  recorder.publish(pod("web-1"), started);
  await clock.advance(60_001);
  recorder.publish(pod("web-0"), started);
  await recorder.flush();
  assert.deepEqual(sink.calls.map((c) => c.verb), ["create", "create", "create", "create"]);
  const names = new Set(sink.creates().map((e) => e.metadata?.name));
  assert.equal(names.size, 4);
});

Deno.test("beyond maxTracked the least recently used series is forgotten: its repeat starts a new Event", async () => {
  const { clock, sink, recorder } = setUp({ maxTracked: 2 });
  assert.equal(recorder.maxTracked, 2);
  for (const name of ["a", "b"]) recorder.publish(pod(name), started);
  await clock.advance(1_000);
  recorder.publish(pod("a"), started); // a is now the most recently used
  recorder.publish(pod("c"), started); // forgets b
  await clock.advance(1_000);
  recorder.publish(pod("a"), started);
  recorder.publish(pod("b"), started);
  await recorder.flush();
  const verbs = sink.calls.map((c) =>
    `${c.verb} ${c.verb === "create" ? c.event.regarding.name : ""}`
  );
  assert.deepEqual(verbs, ["create a", "create b", "patch ", "create c", "patch ", "create b"]);
  assert.equal(setUp().recorder.maxTracked, 4_096, "client-go's number by default");
});

Deno.test("each object gets a burst of 25 Events, then one per 5 minutes", async () => {
  const { clock, sink, recorder } = setUp();
  for (let i = 0; i < 26; i++) recorder.publish(pod("noisy"), { ...started, note: `attempt ${i}` });
  recorder.publish(pod("quiet"), started);
  await recorder.flush();
  assert.equal(sink.creates().filter((e) => e.regarding.name === "noisy").length, 25);
  assert.equal(sink.creates().filter((e) => e.regarding.name === "quiet").length, 1);
  assert.equal(recorder.stats.rateLimited, 1);
  await clock.advance(299_000);
  recorder.publish(pod("noisy"), { ...started, note: "too soon" });
  await clock.advance(1_000);
  recorder.publish(pod("noisy"), { ...started, note: "after refill" });
  await recorder.flush();
  assert.deepEqual(sink.creates().slice(26).map((e) => e.note), ["after refill"]);
});

Deno.test("a rate-limited repeat still counts and reaches the API server with the series' next write", async () => {
  const { clock, sink, recorder } = setUp({ perObjectBurst: 2, perObjectRefillMs: 60_000 });
  for (let i = 0; i < 4; i++) {
    recorder.publish(pod("web-0"), started);
    await recorder.flush();
  }
  assert.equal(sink.calls.length, 2);
  await clock.advance(60_000);
  recorder.publish(pod("web-0"), started);
  await recorder.flush();
  assert.deepEqual(sink.calls.map((c) => c.verb === "patch" ? c.series.count : 1), [1, 2, 5]);
});

Deno.test("a global cap limits Events about all objects together", async () => {
  const { sink, recorder } = setUp({ globalBurst: 3, globalQps: 1 });
  for (let i = 0; i < 5; i++) recorder.publish(pod(`web-${i}`), started);
  await recorder.flush();
  assert.equal(sink.calls.length, 3);
  assert.equal(recorder.stats.rateLimited, 2);
});

Deno.test("a full queue drops new events and counts them, without blocking publish", async () => {
  const { sink, recorder } = setUp({ maxQueued: 2 });
  sink.script.push("hang");
  for (let i = 0; i < 5; i++) {
    recorder.publish(pod(`web-${i}`), started);
    await flushMicrotasks();
  }
  assert.equal(sink.calls.length, 1);
  assert.equal(recorder.stats.dropped, 2);
});

Deno.test("notes over 1 KiB are cut on a character boundary", async () => {
  const { sink, recorder } = setUp();
  recorder.publish(pod("web-0"), { ...started, note: "é".repeat(2000), reason: "R".repeat(300) });
  await recorder.flush();
  const [event] = sink.creates();
  const bytes = new TextEncoder().encode(event?.note).length;
  assert.ok(bytes <= 1024 && bytes > 1000, `note of ${bytes} bytes`);
  assert.ok(event?.note.endsWith("é…"));
  assert.equal(new TextEncoder().encode(event?.reason).length, 128);
});

Deno.test("publish never throws: an unusable event is dropped and counted", async () => {
  const { sink, recorder } = setUp();
  recorder.publish({ kind: "Pod", metadata: {} }, started);
  recorder.publish(pod("web-0"), { ...started, reason: "" });
  // @ts-expect-error: an invalid type from untyped code
  recorder.publish(pod("web-0"), { ...started, type: "Error" });
  await recorder.flush();
  assert.equal(sink.calls.length, 0);
  assert.equal(recorder.stats.dropped, 3);
});

Deno.test("transient failures are retried after a backoff, permanent ones given up at once", async () => {
  const { clock, sink, recorder } = setUp();
  sink.script.push(
    new TransportError("connection reset"),
    new ApiError({ status: 503, message: "busy", verb: "create", path: "/" }),
  );
  recorder.publish(pod("web-0"), started);
  await flushMicrotasks();
  await clock.advance(5_000);
  await recorder.flush();
  assert.equal(sink.calls.length, 3);
  assert.equal(recorder.stats.created, 1);

  sink.script.push(new ApiError({ status: 403, message: "forbidden", verb: "create", path: "/" }));
  recorder.publish(pod("web-1"), started);
  await recorder.flush();
  assert.equal(sink.calls.length, 4);
  assert.equal(recorder.stats.failed, 1);
  recorder.publish(pod("web-2"), started);
  await recorder.flush();
  assert.equal(recorder.stats.created, 2, "the recorder stopped after a failure");
});

Deno.test("a series whose Event expired is created again under the same name, with its count", async () => {
  const { sink, recorder } = setUp();
  recorder.publish(pod("web-0"), started);
  await recorder.flush();
  sink.script.push(new ApiError({ status: 404, message: "not found", verb: "patch", path: "/" }));
  recorder.publish(pod("web-0"), started);
  await recorder.flush();
  const [first, second] = sink.creates();
  assert.deepEqual(sink.calls.map((c) => c.verb), ["create", "patch", "create"]);
  assert.equal(second?.metadata?.name, first?.metadata?.name);
  assert.deepEqual(second?.series, { count: 2, lastObservedTime: "2030-01-01T00:00:00.000000Z" });
});

Deno.test("an aborted flush rejects while the recorder keeps writing", async () => {
  const { clock, sink, recorder } = setUp();
  sink.script.push(new TransportError("connection reset"));
  recorder.publish(pod("web-0"), started);
  const abort = new AbortController();
  const flushing = recorder.flush(abort.signal);
  abort.abort(new Error("deadline"));
  await assert.rejects(flushing, /deadline/);
  await clock.advance(5_000);
  await recorder.flush();
  assert.equal(recorder.stats.created, 1);
});

Deno.test("ending the recorder cancels the write in flight and drops the queue", async () => {
  const end = new AbortController();
  const { sink, recorder } = setUp({ signal: end.signal });
  sink.script.push("hang");
  recorder.publish(pod("web-0"), started);
  recorder.publish(pod("web-1"), started);
  await flushMicrotasks();
  end.abort();
  await recorder.flush();
  assert.equal(sink.signals[0]?.aborted, true);
  recorder.publish(pod("web-2"), started);
  assert.equal(sink.calls.length, 1);
  assert.equal(recorder.stats.dropped, 2);
});

Deno.test("bad options are refused with what was given", () => {
  const sink = new FakeSink();
  assert.throws(
    () => new EventRecorder(sink, { reportingInstance: "" }),
    /RangeError: .*'reportingInstance' must be 1 to 128 bytes, got ""/,
  );
  assert.throws(
    () => new EventRecorder(sink, { reportingInstance: "a", maxQueued: 0 }),
    /'maxQueued' must be a positive integer, got 0/,
  );
  assert.throws(
    () => new EventRecorder(sink, { reportingInstance: "a", globalQps: 0 }),
    /'globalQps' must be positive, got 0/,
  );
  assert.throws(
    () => new EventRecorder(sink, { reportingInstance: "a", maxTracked: 0.5 }),
    /'maxTracked' must be a positive integer, got 0.5/,
  );
});

Deno.test("eventSink creates through the events.k8s.io resource and patches series as a merge patch", async () => {
  const calls: unknown[] = [];
  const client = {
    create: (res: Resource, obj: KubeObject) => {
      calls.push(["create", `${res.group}/${res.version}/${res.plural}`, obj.metadata?.name]);
      return Promise.resolve(obj);
    },
    patch: (res: Resource, name: string, patch: unknown, opts: unknown) => {
      calls.push(["patch", res.plural, name, patch, opts]);
      return Promise.resolve({});
    },
  } as unknown as EventClient;
  const sink = eventSink(client);
  const series = { count: 2, lastObservedTime: "2030-01-01T00:00:00.000000Z" };
  await sink.create({ metadata: { name: "e1" } } as KubeEvent);
  await sink.patch("shop", "e1", { series });
  assert.deepEqual(calls, [
    ["create", "events.k8s.io/v1/events", "e1"],
    ["patch", "events", "e1", { series }, { type: "merge", namespace: "shop", signal: undefined }],
  ]);
});
