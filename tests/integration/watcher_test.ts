/**
 * The watcher against the real control plane of `hack/with_cluster.ts`:
 * events in order, resuming after a cut connection, relisting after 410 Gone
 * (the cluster reads configmap watches straight from etcd, so compaction
 * makes an old resourceVersion Gone), and streaming versus paginated lists.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/watcher_test.ts
 */
import assert from "node:assert/strict";
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { CONFIG_MAPS, NAMESPACES, SECRETS } from "../../lib/kube/resources.ts";
import type { KubeObject, Resource, WatchEvent } from "../../lib/kube/types.ts";
import { Backoff } from "../../lib/async/backoff.ts";
import {
  type ListerWatcher,
  listerWatcher,
  type ListPageOptions,
  type Watcher,
  watcher,
  type WatcherEvent,
  type WatchStreamOptions,
} from "../../lib/runtime/watcher/watcher.ts";
import { compactEtcd, testKubeconfig } from "../_support/cluster.ts";
import { serverStreamsLists } from "../_support/kube.ts";

const LABEL = "kinglet.dev/test=watcher";

/** An admin client and a fresh namespace, both cleaned up on dispose. */
async function scope(prefix: string) {
  const client = new KubeClient(await loadConfig({ kubeconfig: testKubeconfig() }));
  const namespace = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  await client.create(NAMESPACES, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: namespace },
  });
  return {
    client,
    namespace,
    async [Symbol.asyncDispose]() {
      try {
        await client.delete(NAMESPACES, namespace);
      } finally {
        client.close();
      }
    },
  };
}

function object(resource: Resource, name: string, data: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: resource.kind,
    metadata: { name, labels: { "kinglet.dev/test": "watcher" } },
    data: resource === SECRETS
      ? Object.fromEntries(Object.entries(data).map(([k, v]) => [k, btoa(v)]))
      : data,
  };
}

/**
 * A real lister-watcher with two handles for the test: `cut()` drops the
 * open watch connection, `hold()` keeps the next watch from starting until
 * `release()`.
 */
class Tap implements ListerWatcher<KubeObject> {
  readonly lists: ListPageOptions[] = [];
  readonly watches: WatchStreamOptions[] = [];
  readonly #inner: ListerWatcher<KubeObject>;
  #cut = new AbortController();
  #held: PromiseWithResolvers<void> | undefined;

  constructor(inner: ListerWatcher<KubeObject>) {
    this.#inner = inner;
  }

  get description(): string | undefined {
    return this.#inner.description;
  }

  list(options: ListPageOptions) {
    this.lists.push(options);
    return this.#inner.list(options);
  }

  async *watch(options: WatchStreamOptions): AsyncGenerator<WatchEvent<KubeObject>> {
    this.watches.push(options);
    const held = this.#held;
    if (held) {
      const aborted = Promise.withResolvers<void>();
      options.signal?.addEventListener("abort", () => aborted.resolve(), { once: true });
      await Promise.race([held.promise, aborted.promise]);
      if (options.signal?.aborted) return;
    }
    const cut = new AbortController();
    this.#cut = cut;
    const signal = options.signal ? AbortSignal.any([options.signal, cut.signal]) : cut.signal;
    yield* this.#inner.watch({ ...options, signal });
  }

  cut(): void {
    this.#cut.abort();
  }

  hold(): void {
    this.#held = Promise.withResolvers<void>();
  }

  release(): void {
    this.#held?.resolve();
    this.#held = undefined;
  }
}

/** Iterates a watcher in the background, keeping what it yields. */
function run(w: Watcher<KubeObject>) {
  const stop = new AbortController();
  const events: WatcherEvent<KubeObject>[] = [];
  const done = (async () => {
    for await (const event of w.events(stop.signal)) events.push(event);
  })();
  return {
    events,
    lists: () => completeLists(events),
    /** `type name value` of each applied or deleted object, in order. */
    changes: () =>
      events.flatMap((e) =>
        e.type === "applied" || e.type === "deleted"
          ? [`${e.type} ${e.object.metadata?.name} ${JSON.stringify(e.object.data ?? {})}`]
          : []
      ),
    async [Symbol.asyncDispose]() {
      stop.abort();
      await done;
    },
  };
}

/** A list the watcher delivered from `init` to `initDone`. */
interface Listed {
  objects: KubeObject[];
  pageSizes: number[];
  resourceVersion: string;
}

/** The complete lists among `events`; a list that started over counts once. */
function completeLists(events: readonly WatcherEvent<KubeObject>[]): Listed[] {
  const lists: Listed[] = [];
  let pages: KubeObject[][] = [];
  for (const event of events) {
    if (event.type === "init") pages = [];
    if (event.type === "initPage") pages.push(event.objects);
    if (event.type === "initDone") {
      const { resourceVersion } = event;
      lists.push({ objects: pages.flat(), pageSizes: pages.map((p) => p.length), resourceVersion });
    }
  }
  return lists;
}

async function eventually(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const quick = () => new Backoff({ initialMs: 100, maxMs: 1_000 });

Deno.test("a watcher sees every create, update and delete of ConfigMaps, in order", async () => {
  await using s = await scope("w-events");
  const { client, namespace } = s;
  await client.create(CONFIG_MAPS, object(CONFIG_MAPS, "before", { v: "0" }), { namespace });
  const w = watcher(listerWatcher(client, CONFIG_MAPS, { namespace, labelSelector: LABEL }), {
    backoff: quick(),
  });
  await using r = run(w);
  await eventually("the initial list", () => r.lists().length === 1);
  assert.deepEqual(r.lists()[0]?.objects.map((o) => o.metadata?.name), ["before"]);
  assert.equal(w.freshness.synced, true);

  await client.create(CONFIG_MAPS, object(CONFIG_MAPS, "a", { v: "1" }), { namespace });
  await client.patch(CONFIG_MAPS, "a", { data: { v: "2" } }, { type: "merge", namespace });
  await client.delete(CONFIG_MAPS, "a", { namespace });
  await eventually("three changes", () => r.changes().length === 3);
  assert.deepEqual(r.changes(), [
    'applied a {"v":"1"}',
    'applied a {"v":"2"}',
    'deleted a {"v":"2"}',
  ]);
});

Deno.test("after its connection is cut, a watcher resumes from the last resourceVersion without relisting", async () => {
  await using s = await scope("w-resume");
  const { client, namespace } = s;
  const tap = new Tap(listerWatcher(client, CONFIG_MAPS, { namespace, labelSelector: LABEL }));
  const w = watcher(tap, { backoff: quick() });
  await using r = run(w);
  await eventually("the initial list", () => r.lists().length === 1);
  const created = await client.create(CONFIG_MAPS, object(CONFIG_MAPS, "a", { v: "1" }), {
    namespace,
  });
  await eventually("a", () => r.changes().length === 1);
  // On a server without streaming lists, the first watch request was the refused one and
  // the list came in pages.
  const listRequests = tap.lists.length;
  const watchesBefore = tap.watches.length;

  tap.hold();
  tap.cut();
  await eventually("a new watch request", () => tap.watches.length === watchesBefore + 1);
  // Written while no watch is open: only resuming from the old resourceVersion can see it.
  await client.create(CONFIG_MAPS, object(CONFIG_MAPS, "b", { v: "1" }), { namespace });
  tap.release();
  await eventually("b", () => r.changes().length === 2);

  assert.deepEqual(r.changes(), ['applied a {"v":"1"}', 'applied b {"v":"1"}']);
  assert.equal(r.lists().length, 1, "the watcher relisted");
  const resumed = tap.watches[watchesBefore];
  assert.equal(resumed?.resourceVersion, created.metadata?.resourceVersion);
  assert.equal(resumed?.sendInitialEvents, undefined);
  assert.equal(tap.lists.length, listRequests, "the watcher listed again");
});

Deno.test("a watcher whose resourceVersion was compacted away relists after 410 Gone", async () => {
  await using s = await scope("w-gone");
  const { client, namespace } = s;
  await client.create(CONFIG_MAPS, object(CONFIG_MAPS, "old", { v: "1" }), { namespace });
  const tap = new Tap(listerWatcher(client, CONFIG_MAPS, { namespace, labelSelector: LABEL }));
  const w = watcher(tap, { backoff: quick() });
  await using r = run(w);
  await eventually("the initial list", () => r.lists().length === 1);
  const listedAt = Number(r.lists()[0]?.resourceVersion);
  const watchesBefore = tap.watches.length;

  tap.hold();
  tap.cut();
  await eventually("a new watch request", () => tap.watches.length === watchesBefore + 1);
  await client.create(CONFIG_MAPS, object(CONFIG_MAPS, "new", { v: "1" }), { namespace });
  await client.patch(CONFIG_MAPS, "new", { data: { v: "2" } }, { type: "merge", namespace });
  await client.delete(CONFIG_MAPS, "old", { namespace });
  const revision = await compactEtcd();
  assert.ok(revision > listedAt + 1, `compacted to ${revision}, listed at ${listedAt}`);
  tap.release();

  await eventually("a relist", () => r.lists().length === 2);
  const relist = r.lists()[1];
  assert.deepEqual(relist?.objects.map((o) => [o.metadata?.name, o.data]), [["new", { v: "2" }]]);
  assert.ok(w.freshness.restarts >= 1);
  assert.equal(tap.watches[watchesBefore]?.resourceVersion, String(listedAt));
  assert.deepEqual(r.changes(), [], "changes from before the relist leaked through");
});

Deno.test("the initial list is streamed where the server supports it, without a list request, and listed in pages after one refused request where it does not", async () => {
  await using s = await scope("w-stream");
  const { client, namespace } = s;
  for (const name of ["s1", "s2", "s3"]) {
    await client.create(SECRETS, object(SECRETS, name, { token: name }), { namespace });
  }
  const tap = new Tap(listerWatcher(client, SECRETS, { namespace, labelSelector: LABEL }));
  const w = watcher(tap, { backoff: quick() });
  await using r = run(w);
  await eventually("the streamed list", () => r.lists().length === 1);
  assert.deepEqual(r.lists()[0]?.objects.map((o) => o.metadata?.name).sort(), [
    "s1",
    "s2",
    "s3",
  ]);
  assert.equal(tap.watches[0]?.sendInitialEvents, true);
  assert.equal(tap.watches[0]?.resourceVersionMatch, "NotOlderThan");
  const streams = await serverStreamsLists(client);
  if (streams) {
    assert.equal(tap.lists.length, 0);
  } else {
    assert.equal(tap.lists.length, 1, "one page of a list after the refused streaming list");
    assert.equal(w.freshness.restarts, 0, "a refused streaming list is no failure");
  }

  await client.create(SECRETS, object(SECRETS, "s4", { token: "s4" }), { namespace });
  await eventually("s4", () => r.changes().length === 1);
  if (streams) {
    assert.equal(
      tap.watches.length,
      1,
      "the stream of the initial list did not go on as the watch",
    );
  } else {
    assert.deepEqual(tap.watches.map((o) => o.sendInitialEvents), [true, undefined]);
    assert.equal(tap.watches[1]?.resourceVersion, r.lists()[0]?.resourceVersion);
  }
});

Deno.test("with streaming lists off, the initial list is read and delivered page by page", async () => {
  await using s = await scope("w-pages");
  const { client, namespace } = s;
  for (let i = 0; i < 5; i++) {
    await client.create(CONFIG_MAPS, object(CONFIG_MAPS, `c${i}`, { i: String(i) }), { namespace });
  }
  const tap = new Tap(listerWatcher(client, CONFIG_MAPS, { namespace, labelSelector: LABEL }));
  const w = watcher(tap, { streamingList: "off", pageSize: 2, backoff: quick() });
  await using r = run(w);
  await eventually("the paginated list", () => r.lists().length === 1);
  assert.deepEqual(r.lists()[0]?.objects.map((o) => o.metadata?.name), [
    "c0",
    "c1",
    "c2",
    "c3",
    "c4",
  ]);
  assert.deepEqual(r.lists()[0]?.pageSizes, [2, 2, 1]);
  assert.deepEqual(tap.lists.map((l) => [l.limit, l.continue !== undefined]), [[2, false], [
    2,
    true,
  ], [2, true]]);
  await eventually("the watch", () => tap.watches.length === 1);
  assert.equal(tap.watches[0]?.resourceVersion, r.lists()[0]?.resourceVersion);
});
