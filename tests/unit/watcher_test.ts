import assert from "node:assert/strict";
import { ApiError } from "../../lib/kube/errors.ts";
import { CONFIG_MAPS, NODES } from "../../lib/kube/resources.ts";
import type { KubeList, KubeObject, WatchEvent, WatchEventType } from "../../lib/kube/types.ts";
import { Backoff } from "../../lib/async/backoff.ts";
import { FakeClock, flushMicrotasks } from "../../lib/async/clock.ts";
import { type Pull, WatchStream } from "../../lib/runtime/watcher/_watch_stream.ts";
import { Store } from "../../lib/runtime/cache/store.ts";
import {
  type ListerWatcher,
  listerWatcher,
  type ListPageOptions,
  type ListWatchClient,
  watcher,
  type WatcherEvent,
  type WatcherOptions,
  type WatchStreamOptions,
} from "../../lib/runtime/watcher/watcher.ts";
import { StreamingLists } from "../../lib/runtime/watcher/streaming_lists.ts";

type Item = { event: WatchEvent } | { error: unknown } | { end: true };

/** One watch request whose events the test feeds by hand. */
class FakeStream {
  readonly options: WatchStreamOptions;
  #items: Item[] = [];
  #wake: (() => void) | undefined;

  constructor(options: WatchStreamOptions) {
    this.options = options;
    options.signal?.addEventListener("abort", () => this.#notify());
  }

  get aborted(): boolean {
    return this.options.signal?.aborted ?? false;
  }

  push(type: WatchEventType, object: KubeObject): this {
    return this.#add({ event: { type, object } });
  }

  fail(error: unknown): this {
    return this.#add({ error });
  }

  end(): this {
    return this.#add({ end: true });
  }

  async *iterate(): AsyncGenerator<WatchEvent> {
    for (;;) {
      if (this.aborted) return;
      const item = this.#items.shift();
      if (!item) {
        await new Promise<void>((resolve) => this.#wake = resolve);
        continue;
      }
      if ("end" in item) return;
      if ("error" in item) throw item.error;
      yield item.event;
    }
  }

  #add(item: Item): this {
    this.#items.push(item);
    this.#notify();
    return this;
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** Answers lists from a script and records every request. */
class FakeListerWatcher implements ListerWatcher<KubeObject> {
  readonly description = "configmaps (fake)";
  readonly lists: ListPageOptions[] = [];
  readonly answers: (KubeList | Error)[] = [];
  readonly streams: FakeStream[] = [];
  onWatch: ((stream: FakeStream) => void) | undefined;
  /** Calls of {@link reconnect}. */
  reconnects = 0;

  list(options: ListPageOptions): Promise<KubeList> {
    this.lists.push(options);
    const answer = this.answers.shift();
    if (answer instanceof Error) return Promise.reject(answer);
    if (answer) return Promise.resolve(answer);
    return new Promise((_, reject) => {
      options.signal?.addEventListener("abort", () => reject(options.signal?.reason));
    });
  }

  watch(options: WatchStreamOptions): AsyncIterable<WatchEvent> {
    const stream = new FakeStream(options);
    this.streams.push(stream);
    this.onWatch?.(stream);
    return stream.iterate();
  }

  reconnect(): void {
    this.reconnects++;
  }

  stream(index: number): FakeStream {
    const stream = this.streams[index];
    assert.ok(stream, `watch request #${index} was never made`);
    return stream;
  }
}

function cm(name: string, resourceVersion: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "default", uid: `uid-${name}`, resourceVersion },
  };
}

function page(items: KubeObject[], resourceVersion: string, next?: string): KubeList {
  return { metadata: { resourceVersion, ...(next ? { continue: next } : {}) }, items };
}

function bookmark(resourceVersion: string, initialEventsEnd = false): KubeObject {
  return {
    kind: "ConfigMap",
    metadata: {
      resourceVersion,
      ...(initialEventsEnd ? { annotations: { "k8s.io/initial-events-end": "true" } } : {}),
    },
  };
}

const serverError = () =>
  new ApiError({
    status: 500,
    message: "etcd unavailable",
    verb: "watch",
    path: "/api/v1/configmaps",
  });
const gone = () =>
  new ApiError({
    status: 410,
    message: "too old resource version",
    verb: "watch",
    path: "/api/v1/configmaps",
  });

function setUp(options: WatcherOptions = {}) {
  const clock = new FakeClock();
  const lw = new FakeListerWatcher();
  const abort = new AbortController();
  const w = watcher(lw, {
    clock,
    backoff: new Backoff({ initialMs: 100, maxMs: 1000, jitter: 0 }),
    stallTimeoutMs: 3_600_000,
    streamingList: "off",
    ...options,
  });
  const events = w.events(abort.signal);
  const next = async (): Promise<WatcherEvent> => {
    const result = await events.next();
    assert.ok(!result.done, "the watcher ended");
    return result.value;
  };
  /** The events up to and including the next `initDone`. */
  const listed = async (): Promise<WatcherEvent[]> => {
    const got: WatcherEvent[] = [];
    for (;;) {
      const event = await next();
      got.push(event);
      if (event.type === "initDone") return got;
    }
  };
  return { clock, lw, abort, w, events, next, listed };
}

Deno.test("a paginated list is delivered page by page between init and initDone, then the watch starts from its resourceVersion", async () => {
  const { lw, next, abort } = setUp({ pageSize: 2 });
  lw.answers.push(page([cm("a", "5"), cm("b", "6")], "", "token-1"), page([cm("c", "7")], "9"));
  assert.deepEqual(await next(), { type: "init" });
  assert.deepEqual(await next(), { type: "initPage", objects: [cm("a", "5"), cm("b", "6")] });
  assert.deepEqual(lw.lists.length, 1, "a page is yielded before the next one is asked for");
  assert.deepEqual(await next(), { type: "initPage", objects: [cm("c", "7")] });
  assert.deepEqual(await next(), { type: "initDone", resourceVersion: "9" });
  assert.deepEqual(lw.lists.map((l) => [l.limit, l.continue]), [[2, undefined], [2, "token-1"]]);
  const watching = next();
  await flushMicrotasks();
  const stream = lw.stream(0);
  assert.deepEqual(stream.options.resourceVersion, "9");
  assert.deepEqual(stream.options.allowWatchBookmarks, true);
  assert.deepEqual(stream.options.sendInitialEvents, undefined);
  stream.push("ADDED", cm("d", "10")).push("MODIFIED", cm("a", "11")).push(
    "DELETED",
    cm("b", "12"),
  );
  stream.push("BOOKMARK", bookmark("13"));
  assert.deepEqual(await watching, { type: "applied", object: cm("d", "10") });
  assert.deepEqual(await next(), { type: "applied", object: cm("a", "11") });
  assert.deepEqual(await next(), { type: "deleted", object: cm("b", "12") });
  assert.deepEqual(await next(), { type: "bookmark", resourceVersion: "13" });
  abort.abort();
});

Deno.test("the server-side watch timeout is randomized between 5 and 10 minutes unless set", async () => {
  const random = setUp();
  random.lw.answers.push(page([], "1"));
  assert.deepEqual(await random.listed(), [
    { type: "init" },
    { type: "initDone", resourceVersion: "1" },
  ], "an empty page is not delivered");
  const pending = random.next();
  await flushMicrotasks();
  const timeout = random.lw.stream(0).options.timeoutSeconds ?? 0;
  assert.ok(timeout >= 300 && timeout < 600, `timeout ${timeout} s`);
  random.abort.abort();
  assert.deepEqual(await pending.catch(() => "ended"), "ended");

  const fixed = setUp({ timeoutSeconds: 42 });
  fixed.lw.answers.push(page([], "1"));
  await fixed.listed();
  const pendingFixed = fixed.next();
  await flushMicrotasks();
  assert.deepEqual(fixed.lw.stream(0).options.timeoutSeconds, 42);
  fixed.abort.abort();
  await pendingFixed.catch(() => {});
});

Deno.test("a streaming list delivers its initial events as pages up to the end bookmark and keeps watching on the same stream", async () => {
  const { lw, next, listed, w, abort } = setUp({ streamingList: "auto" });
  lw.onWatch = (stream) => {
    stream.push("ADDED", cm("a", "3")).push("ADDED", cm("b", "4"));
    stream.push("BOOKMARK", bookmark("4")).push("BOOKMARK", bookmark("8", true));
    stream.push("MODIFIED", cm("a", "9"));
  };
  assert.deepEqual(await listed(), [
    { type: "init" },
    { type: "initPage", objects: [cm("a", "3"), cm("b", "4")] },
    { type: "initDone", resourceVersion: "8" },
  ]);
  assert.deepEqual(w.freshness.synced, true);
  const opened = lw.stream(0).options;
  assert.deepEqual([
    opened.sendInitialEvents,
    opened.resourceVersionMatch,
    opened.allowWatchBookmarks,
  ], [
    true,
    "NotOlderThan",
    true,
  ]);
  assert.deepEqual(opened.resourceVersion, undefined);
  assert.deepEqual(await next(), { type: "applied", object: cm("a", "9") });
  assert.deepEqual(lw.lists, []);
  assert.deepEqual(lw.streams.length, 1);
  abort.abort();
});

Deno.test("each page of a list is yielded before the next page is asked for, none larger than pageSize", async () => {
  const { lw, next, abort } = setUp({ pageSize: 2 });
  lw.answers.push(
    page([cm("a", "1"), cm("b", "1")], "", "t1"),
    page([cm("c", "1"), cm("d", "1")], "", "t2"),
    page([cm("e", "1")], "7"),
  );
  assert.deepEqual(await next(), { type: "init" });
  const pages: string[][] = [];
  for (let event = await next(); event.type !== "initDone"; event = await next()) {
    assert.equal(event.type, "initPage");
    if (event.type !== "initPage") break;
    assert.ok(event.objects.length <= 2, `a page of ${event.objects.length}`);
    assert.equal(lw.lists.length, pages.length + 1, "the next page was asked for too early");
    pages.push(event.objects.map((o) => o.metadata!.name!));
  }
  assert.deepEqual(pages, [["a", "b"], ["c", "d"], ["e"]]);
  abort.abort();
});

Deno.test("a streaming list delivers its initial events in pages of pageSize", async () => {
  const { lw, listed, abort } = setUp({ streamingList: "auto", pageSize: 2 });
  lw.onWatch = (stream) => {
    for (const name of ["a", "b", "c", "d", "e"]) stream.push("ADDED", cm(name, "3"));
    stream.push("BOOKMARK", bookmark("8", true));
  };
  assert.deepEqual(await listed(), [
    { type: "init" },
    { type: "initPage", objects: [cm("a", "3"), cm("b", "3")] },
    { type: "initPage", objects: [cm("c", "3"), cm("d", "3")] },
    { type: "initPage", objects: [cm("e", "3")] },
    { type: "initDone", resourceVersion: "8" },
  ]);
  abort.abort();
});

/** Applies the watcher's events to `store` up to and including the next `initDone`. */
async function reflectList(next: () => Promise<WatcherEvent>, store: Store): Promise<string[]> {
  const types: string[] = [];
  for (;;) {
    const event = await next();
    store.apply(event);
    types.push(event.type);
    if (event.type === "initDone") return types;
  }
}

Deno.test("a 410 on the second page starts the list over with init and the store ends with the second list alone", async () => {
  const { lw, next, clock, abort } = setUp({ pageSize: 2 });
  const store = new Store();
  store.apply({ type: "applied", object: cm("old", "1") });
  const changes: string[] = [];
  store.subscribe((c) => changes.push(c.type === "replace" ? "replace" : `${c.type} ${c.key}`));
  lw.answers.push(page([cm("a", "2"), cm("b", "2")], "", "t1"), gone());
  lw.answers.push(page([cm("c", "5")], "", "t2"), page([cm("d", "5")], "6"));
  const reflected = reflectList(next, store);
  await flushMicrotasks();
  assert.deepEqual(store.keys(), ["default/old"], "the unfinished list is not visible");
  await clock.advance(100);
  assert.deepEqual(await reflected, [
    "init",
    "initPage",
    "init",
    "initPage",
    "initPage",
    "initDone",
  ]);
  assert.deepEqual(store.keys(), ["default/c", "default/d"]);
  assert.equal(store.resourceVersion, "6");
  assert.deepEqual(changes, [
    "upsert default/c",
    "upsert default/d",
    "delete default/old",
    "replace",
  ]);
  abort.abort();
});

Deno.test("a streaming list that fails after a page starts over with init", async () => {
  const { lw, next, clock, abort } = setUp({ streamingList: "auto", pageSize: 1 });
  const store = new Store();
  lw.onWatch = (stream) => {
    if (lw.streams.length === 1) stream.push("ADDED", cm("a", "1")).fail(serverError());
    else stream.push("ADDED", cm("b", "4")).push("BOOKMARK", bookmark("4", true));
  };
  const reflected = reflectList(next, store);
  await flushMicrotasks();
  await clock.advance(100);
  assert.deepEqual(await reflected, ["init", "initPage", "init", "initPage", "initDone"]);
  assert.deepEqual(store.keys(), ["default/b"]);
  assert.deepEqual(lw.streams.map((s) => s.options.sendInitialEvents), [true, true]);
  abort.abort();
});

Deno.test("a server found to ignore sendInitialEvents after pages were delivered is listed again from init", async () => {
  const { lw, next, abort } = setUp({ streamingList: "auto", pageSize: 1 });
  const store = new Store();
  lw.onWatch = (stream) => {
    if (!stream.options.sendInitialEvents) return;
    stream.push("ADDED", cm("a", "1")).push("ADDED", cm("b", "1")).push("MODIFIED", cm("a", "2"));
  };
  lw.answers.push(page([cm("a", "2")], "2"));
  assert.deepEqual(await reflectList(next, store), [
    "init",
    "initPage",
    "initPage",
    "init",
    "initPage",
    "initDone",
  ]);
  assert.deepEqual(store.keys(), ["default/a"], "b came only from the abandoned stream");
  assert.equal(store.get("default/a")?.metadata?.resourceVersion, "2");
  abort.abort();
});

Deno.test("a rejected streaming list falls back to pages for good", async () => {
  const { lw, listed, clock, abort } = setUp({ streamingList: "auto" });
  lw.onWatch = (stream) => {
    if (stream.options.sendInitialEvents) {
      stream.fail(
        new ApiError({
          status: 422,
          message: "sendInitialEvents is forbidden",
          verb: "watch",
          path: "/",
        }),
      );
    }
  };
  lw.answers.push(page([cm("a", "2")], "2"));
  assert.deepEqual(await listed(), [
    { type: "init" },
    { type: "init" },
    { type: "initPage", objects: [cm("a", "2")] },
    { type: "initDone", resourceVersion: "2" },
  ]);
  const relisted = listed();
  await flushMicrotasks();
  lw.stream(1).fail(gone());
  lw.answers.push(page([cm("b", "30")], "31"));
  await clock.advance(100);
  assert.deepEqual(await relisted, [
    { type: "init" },
    { type: "initPage", objects: [cm("b", "30")] },
    { type: "initDone", resourceVersion: "31" },
  ]);
  assert.deepEqual(lw.streams.map((s) => s.options.sendInitialEvents ?? false), [true, false]);
  assert.deepEqual(lw.lists.length, 2);
  abort.abort();
});

Deno.test("a server that ignores sendInitialEvents is detected by a change before the end marker", async () => {
  const { lw, listed, abort } = setUp({ streamingList: "auto" });
  lw.onWatch = (stream) => {
    if (stream.options.sendInitialEvents) {
      stream.push("ADDED", cm("a", "1")).push("MODIFIED", cm("a", "2"));
    }
  };
  lw.answers.push(page([cm("a", "2")], "2"));
  assert.deepEqual(await listed(), [
    { type: "init" },
    { type: "init" },
    { type: "initPage", objects: [cm("a", "2")] },
    { type: "initDone", resourceVersion: "2" },
  ]);
  assert.deepEqual(lw.stream(0).aborted, true);
  abort.abort();
});

Deno.test("a failed watch backs off, then resumes from the last resourceVersion seen without relisting", async () => {
  const { lw, next, clock, w, abort, listed } = setUp();
  lw.answers.push(page([cm("a", "1")], "1"));
  await listed();
  const first = next();
  await flushMicrotasks();
  lw.stream(0).push("MODIFIED", cm("a", "7"));
  assert.deepEqual(await first, { type: "applied", object: cm("a", "7") });
  const second = next();
  await flushMicrotasks();
  lw.stream(0).fail(serverError());
  await clock.advance(99);
  assert.deepEqual(lw.streams.length, 1, "retried before the backoff elapsed");
  await clock.advance(1);
  assert.deepEqual(lw.stream(1).options.resourceVersion, "7");
  lw.stream(1).push("DELETED", cm("a", "8"));
  assert.deepEqual(await second, { type: "deleted", object: cm("a", "8") });
  assert.deepEqual(lw.lists.length, 1);
  assert.deepEqual(w.freshness.restarts, 1);
  assert.deepEqual(w.freshness.resourceVersion, "8");
  abort.abort();
});

Deno.test("repeated failures back off longer each time and a success resets the backoff", async () => {
  const { lw, next, clock, abort, listed } = setUp();
  lw.answers.push(page([], "1"));
  await listed();
  lw.onWatch = (stream) => stream.fail(serverError());
  const pending = next();
  await flushMicrotasks();
  await clock.advance(100);
  assert.deepEqual(lw.streams.length, 2);
  await clock.advance(199);
  assert.deepEqual(lw.streams.length, 2);
  await clock.advance(1);
  assert.deepEqual(lw.streams.length, 3);
  lw.onWatch = undefined;
  await clock.advance(400);
  lw.stream(3).push("ADDED", cm("x", "2"));
  await pending;
  const after = next();
  await flushMicrotasks();
  lw.stream(3).fail(serverError());
  await clock.advance(100);
  assert.deepEqual(lw.streams.length, 5, "the backoff did not start again from its initial delay");
  abort.abort();
  await after.catch(() => {});
});

Deno.test("410 Gone on the watch relists from scratch", async () => {
  const { lw, next, clock, abort, listed } = setUp();
  lw.answers.push(page([cm("a", "1"), cm("b", "1")], "1"));
  await listed();
  const relisted = listed();
  await flushMicrotasks();
  lw.stream(0).fail(gone());
  lw.answers.push(page([cm("b", "20")], "21"));
  await clock.advance(100);
  assert.deepEqual(await relisted, [
    { type: "init" },
    { type: "initPage", objects: [cm("b", "20")] },
    { type: "initDone", resourceVersion: "21" },
  ]);
  assert.deepEqual(lw.lists.map((l) => l.resourceVersion), [undefined, undefined]);
  const resumed = next();
  await flushMicrotasks();
  assert.deepEqual(lw.stream(1).options.resourceVersion, "21");
  abort.abort();
  await resumed.catch(() => {});
});

Deno.test("a failed page is retried with its continue token and the pages already delivered stand", async () => {
  const { lw, listed, clock, abort } = setUp({ pageSize: 1 });
  lw.answers.push(page([cm("a", "1")], "", "t1"), serverError(), page([cm("b", "1")], "5"));
  const events = listed();
  await flushMicrotasks();
  await clock.advance(100);
  assert.deepEqual(await events, [
    { type: "init" },
    { type: "initPage", objects: [cm("a", "1")] },
    { type: "initPage", objects: [cm("b", "1")] },
    { type: "initDone", resourceVersion: "5" },
  ]);
  assert.deepEqual(lw.lists.map((l) => l.continue), [undefined, "t1", "t1"]);
  abort.abort();
});

Deno.test("an expired continue token restarts the list from its first page after a new init", async () => {
  const { lw, listed, clock, abort } = setUp({ pageSize: 1 });
  lw.answers.push(page([cm("a", "1")], "", "t1"), gone(), page([cm("a", "9")], "9"));
  const events = listed();
  await flushMicrotasks();
  await clock.advance(100);
  assert.deepEqual(await events, [
    { type: "init" },
    { type: "initPage", objects: [cm("a", "1")] },
    { type: "init" },
    { type: "initPage", objects: [cm("a", "9")] },
    { type: "initDone", resourceVersion: "9" },
  ]);
  assert.deepEqual(lw.lists.map((l) => l.continue), [undefined, "t1", undefined]);
  abort.abort();
});

Deno.test("a watch the server closes normally is resumed at once from the last resourceVersion", async () => {
  const { lw, next, abort, listed } = setUp();
  lw.answers.push(page([], "1"));
  await listed();
  const first = next();
  await flushMicrotasks();
  lw.stream(0).push("ADDED", cm("a", "4")).end();
  await first;
  const second = next();
  await flushMicrotasks();
  assert.deepEqual(lw.stream(1).options.resourceVersion, "4");
  lw.stream(1).push("ADDED", cm("b", "5"));
  assert.deepEqual(await second, { type: "applied", object: cm("b", "5") });
  abort.abort();
});

Deno.test("a watch closed as soon as it opened, with nothing sent, is retried after a backoff", async () => {
  const { lw, next, clock, w, abort, listed } = setUp();
  lw.answers.push(page([], "1"));
  await listed();
  lw.onWatch = (stream) => stream.end();
  const pending = next();
  await flushMicrotasks();
  assert.deepEqual(lw.streams.length, 1);
  await clock.advance(100);
  assert.deepEqual(lw.streams.length, 2);
  assert.deepEqual(w.freshness.restarts, 2);
  abort.abort();
  await pending.catch(() => {});
});

Deno.test("a silent watch is torn down after the stall timeout and resumed over a new connection from the last resourceVersion", async () => {
  const { lw, next, clock, w, abort, listed } = setUp({ stallTimeoutMs: 60_000 });
  lw.answers.push(page([], "3"));
  await listed();
  const pending = next();
  await flushMicrotasks();
  await clock.advance(59_999);
  assert.deepEqual(lw.stream(0).aborted, false);
  assert.deepEqual(lw.reconnects, 0);
  await clock.advance(1);
  assert.deepEqual(lw.stream(0).aborted, true, "the stalled request was not cancelled");
  assert.deepEqual(lw.reconnects, 1, "the silent connection would carry the next watch too");
  await clock.advance(100);
  assert.deepEqual(lw.stream(1).options.resourceVersion, "3");
  assert.deepEqual(w.freshness.restarts, 1);
  lw.stream(1).push("BOOKMARK", bookmark("4"));
  assert.deepEqual(await pending, { type: "bookmark", resourceVersion: "4" });
  abort.abort();
});

Deno.test("a quiet watch is not stalled before the server's timeout: by default the deadline is timeoutSeconds plus 30 s", async () => {
  const { lw, next, clock, abort, listed } = setUp({
    stallTimeoutMs: undefined,
    timeoutSeconds: 300,
  });
  lw.answers.push(page([], "3"));
  await listed();
  const pending = next();
  await flushMicrotasks();
  await clock.advance(300_000 + 29_999);
  assert.equal(lw.stream(0).aborted, false, "a watch quiet for less than its promise was stalled");
  await clock.advance(1);
  assert.equal(lw.stream(0).aborted, true, "a watch silent past its server timeout was kept");
  await clock.advance(100);
  assert.equal(lw.stream(1).options.resourceVersion, "3");
  lw.stream(1).push("BOOKMARK", bookmark("4"));
  assert.deepEqual(await pending, { type: "bookmark", resourceVersion: "4" });
  abort.abort();
});

Deno.test("watchers sharing what the server said of streaming lists ask once and tell once", async () => {
  const lines: string[] = [];
  const streamingLists = new StreamingLists({
    server: "https://10.0.0.1:6443",
    write: (line, properties) => lines.push(line.replace("{server}", String(properties.server))),
  });
  const refuse = (stream: FakeStream) => {
    if (stream.options.sendInitialEvents) {
      stream.fail(
        new ApiError({
          status: 422,
          message: "sendInitialEvents: Forbidden: the WatchList feature gate is off",
          verb: "watch",
          path: "/",
        }),
      );
    }
  };
  const first = setUp({ streamingList: "auto", streamingLists });
  first.lw.onWatch = refuse;
  first.lw.answers.push(page([], "2"));
  await first.listed();
  const second = setUp({ streamingList: "auto", streamingLists });
  second.lw.onWatch = refuse;
  second.lw.answers.push(page([cm("a", "5")], "5"));
  assert.deepEqual(await second.listed(), [
    { type: "init" },
    { type: "initPage", objects: [cm("a", "5")] },
    { type: "initDone", resourceVersion: "5" },
  ]);
  assert.deepEqual(first.lw.streams.map((s) => s.options.sendInitialEvents ?? false), [true]);
  assert.equal(first.lw.lists.length, 1);
  assert.equal(second.lw.streams.length, 0, "the second watcher asked for a streaming list again");
  assert.equal(second.lw.lists.length, 1);
  assert.deepEqual(lines, [
    "https://10.0.0.1:6443 does not stream lists (the WatchList feature is off there); every watch lists in pages",
  ]);
  assert.doesNotMatch(lines.join("\n"), /forbidden/i);
  first.abort.abort();
  second.abort.abort();
});

Deno.test("freshness tracks sync and the time of the last sign of life", async () => {
  const { lw, next, clock, w, abort, listed } = setUp();
  assert.deepEqual(w.freshness, {
    synced: false,
    lastActivityAt: undefined,
    restarts: 0,
    resourceVersion: undefined,
  });
  await clock.advance(1000);
  lw.answers.push(page([], "1"));
  await listed();
  assert.deepEqual(w.freshness, {
    synced: true,
    lastActivityAt: 1000,
    restarts: 0,
    resourceVersion: "1",
  });
  const pending = next();
  await clock.advance(5000);
  lw.stream(0).push("BOOKMARK", bookmark("2"));
  await pending;
  assert.deepEqual(w.freshness, {
    synced: true,
    lastActivityAt: 6000,
    restarts: 0,
    resourceVersion: "2",
  });
  abort.abort();
});

Deno.test("aborting ends the iteration cleanly and cancels the request in flight", async () => {
  const { lw, events, abort, listed } = setUp();
  lw.answers.push(page([], "1"));
  await listed();
  const pending = events.next();
  await flushMicrotasks();
  abort.abort();
  assert.deepEqual(await pending, { done: true, value: undefined });
  assert.deepEqual(lw.stream(0).aborted, true);
});

Deno.test("aborting during a backoff or a list ends the iteration cleanly", async () => {
  const listing = setUp();
  assert.deepEqual(await listing.next(), { type: "init" });
  const pendingList = listing.events.next();
  await flushMicrotasks();
  listing.abort.abort();
  assert.deepEqual(await pendingList, { done: true, value: undefined });
  assert.deepEqual(listing.lw.lists[0]?.signal?.aborted, true);

  const backingOff = setUp();
  backingOff.lw.answers.push(serverError());
  assert.deepEqual(await backingOff.next(), { type: "init" });
  const pendingBackoff = backingOff.events.next();
  await flushMicrotasks();
  backingOff.abort.abort();
  assert.deepEqual(await pendingBackoff, { done: true, value: undefined });
});

Deno.test("a caller that stops iterating closes the open watch", async () => {
  const { lw, next, events, listed } = setUp();
  lw.answers.push(page([], "1"));
  await listed();
  const pending = next();
  await flushMicrotasks();
  lw.stream(0).push("ADDED", cm("a", "2"));
  await pending;
  await events.return();
  assert.deepEqual(lw.stream(0).aborted, true);
});

Deno.test("a watcher cannot be iterated twice at once", async () => {
  const { w, lw, abort, listed } = setUp();
  lw.answers.push(page([], "1"));
  await listed();
  await assert.rejects(() => w.events().next(), {
    name: "TypeError",
    message: /already being iterated/,
  });
  abort.abort();
});

Deno.test("options out of range are rejected with what was given", () => {
  const lw = new FakeListerWatcher();
  assert.throws(
    () => watcher(lw, { pageSize: 0 }),
    /RangeError: .*'pageSize' must be a positive integer, got 0/,
  );
  assert.throws(
    () => watcher(lw, { stallTimeoutMs: -1 }),
    /RangeError: .*'stallTimeoutMs' must be positive/,
  );
  assert.throws(() => watcher(lw, { timeoutSeconds: 1.5 }), /RangeError: .*'timeoutSeconds'/);
  assert.throws(
    // @ts-expect-error: an invalid mode from untyped configuration
    () => watcher(lw, { streamingList: "on" }),
    /RangeError: .*'streamingList' must be "auto" or "off", got "on"/,
  );
});

Deno.test("listerWatcher narrows every request to its namespace and selectors", async () => {
  const calls: { verb: string; plural: string; options: unknown }[] = [];
  let resets = 0;
  const client: ListWatchClient = {
    resetConnections: () => resets++,
    list: (resource, options) => {
      calls.push({ verb: "list", plural: resource.plural, options });
      return Promise.resolve({ metadata: { resourceVersion: "1" }, items: [] });
    },
    watch: (resource, options) => {
      calls.push({ verb: "watch", plural: resource.plural, options });
      return (async function* () {})();
    },
  };
  const lw = listerWatcher(client, CONFIG_MAPS, {
    namespace: "shop",
    labelSelector: "app=web",
    metadataOnly: true,
  });
  assert.deepEqual(
    lw.description,
    'configmaps in namespace "shop" with labels app=web (metadata only)',
  );
  await lw.list({ limit: 10 });
  lw.watch({ resourceVersion: "1", allowWatchBookmarks: true });
  assert.deepEqual(calls, [
    {
      verb: "list",
      plural: "configmaps",
      options: { namespace: "shop", labelSelector: "app=web", metadataOnly: true, limit: 10 },
    },
    {
      verb: "watch",
      plural: "configmaps",
      options: {
        namespace: "shop",
        labelSelector: "app=web",
        metadataOnly: true,
        resourceVersion: "1",
        allowWatchBookmarks: true,
      },
    },
  ]);
  lw.reconnect?.();
  assert.deepEqual(resets, 1, "reconnect resets the client's connections");
  assert.throws(
    () => listerWatcher(client, NODES, { namespace: "x" }),
    /TypeError: .*cluster-scoped/,
  );
});

Deno.test("a watch that fails five times in a row at the same resourceVersion relists", async () => {
  const { lw, clock, abort, listed } = setUp();
  lw.answers.push(page([cm("a", "1")], "1"));
  await listed();
  lw.onWatch = (stream) => stream.fail(serverError());
  lw.answers.push(page([cm("a", "3")], "3"));
  const relisted = listed();
  await flushMicrotasks();
  await clock.advance(100 + 200 + 400 + 800);
  assert.deepEqual(lw.streams.length, 5, "five watches tried before giving up on the version");
  assert.deepEqual(lw.lists.length, 1);
  await clock.advance(1000);
  assert.deepEqual(await relisted, [
    { type: "init" },
    { type: "initPage", objects: [cm("a", "3")] },
    { type: "initDone", resourceVersion: "3" },
  ]);
  assert.deepEqual(lw.lists.length, 2);
  abort.abort();
});

Deno.test("a watch stream arms one stall timer however many events arrive, and stalls only a pull that waited the whole period", async () => {
  const clock = new FakeClock();
  const sleepSignals: AbortSignal[] = [];
  const recording = {
    now: () => clock.now(),
    sleep: (ms: number, signal?: AbortSignal) => {
      if (signal) sleepSignals.push(signal);
      return clock.sleep(ms, signal);
    },
  };
  const event: WatchEvent<KubeObject> = {
    type: "ADDED",
    object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", resourceVersion: "1" } },
  };
  const more = Promise.withResolvers<void>();
  const stream = new WatchStream(
    async function* () {
      for (let i = 0; i < 100; i++) yield event;
      await more.promise;
      yield event;
      await new Promise(() => {});
    },
    new AbortController().signal,
    recording,
    5_000,
  );
  const signal = new AbortController().signal;
  for (let i = 0; i < 100; i++) assert.equal((await stream.pull(signal)).kind, "event");
  assert.equal(sleepSignals.length, 1, "a timer per event");

  await clock.advance(3_000);
  more.resolve();
  assert.equal((await stream.pull(signal)).kind, "event");
  let settled: Pull<KubeObject> | undefined;
  const waiting = stream.pull(signal).then((p) => (settled = p));
  await clock.advance(2_000);
  assert.equal(settled, undefined, "stalled a pull that had waited 2 s of 5");
  await clock.advance(2_999);
  assert.equal(settled, undefined, "stalled a pull that had waited 4.999 s of 5");
  await clock.advance(1);
  await waiting;
  assert.deepEqual(settled, { kind: "stall" });
  stream.close();
  assert.ok(sleepSignals.every((s) => s.aborted), "the watchdog outlived the stream");
});
