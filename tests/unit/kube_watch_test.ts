import assert from "node:assert/strict";
import { ApiError, isGone, TransportError, WatchDecodeError } from "../../lib/kube/errors.ts";
import type { WatchEvent } from "../../lib/kube/types.ts";
import { decodeWatchStream } from "../../lib/kube/watch.ts";

Deno.test.sanitizer({ ops: true, resources: true });

const PATH = "/api/v1/namespaces/default/configmaps";

interface Source {
  body: ReadableStream<Uint8Array>;
  /** Set when the consumer cancelled the stream, i.e. closed the connection. */
  cancelled: boolean;
}

/** A body delivering the given chunks (strings are UTF-8 encoded), then `end`. */
function source(chunks: (string | Uint8Array)[], end: "close" | Error | "hang" = "close"): Source {
  const s: Source = { cancelled: false, body: undefined as unknown as ReadableStream<Uint8Array> };
  const queue = chunks.map((c) => typeof c === "string" ? new TextEncoder().encode(c) : c);
  s.body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = queue.shift();
      if (next) return controller.enqueue(next);
      if (end === "close") return controller.close();
      if (end instanceof Error) return controller.error(end);
      return new Promise<void>(() => {});
    },
    cancel() {
      s.cancelled = true;
    },
  });
  return s;
}

async function collect(s: Source, signal?: AbortSignal): Promise<WatchEvent[]> {
  const events: WatchEvent[] = [];
  for await (const e of decodeWatchStream(s.body, { path: PATH, ...(signal ? { signal } : {}) })) {
    events.push(e);
  }
  return events;
}

const cm = (name: string, rv: string) =>
  JSON.stringify({
    type: "ADDED",
    object: { kind: "ConfigMap", metadata: { name, resourceVersion: rv } },
  });

Deno.test("watch decoder joins JSON lines split across chunks, even mid-character", async () => {
  const line =
    JSON.stringify({ type: "MODIFIED", object: { metadata: { name: "crème-brûlée" } } }) + "\n";
  const bytes = new TextEncoder().encode(line);
  const cut = bytes.indexOf(0xc3) + 1; // between the two bytes of "è"
  const events = await collect(source([bytes.slice(0, 5), bytes.slice(5, cut), bytes.slice(cut)]));
  assert.deepEqual(events, [{ type: "MODIFIED", object: { metadata: { name: "crème-brûlée" } } }]);
});

Deno.test("watch decoder yields every event of a chunk holding several, skipping blank lines", async () => {
  const bookmark = JSON.stringify({
    type: "BOOKMARK",
    object: { metadata: { resourceVersion: "12" } },
  });
  const events = await collect(
    source([
      `${cm("a", "10")}\n\n${cm("b", "11")}\n${bookmark.slice(0, 9)}`,
      `${bookmark.slice(9)}\n`,
    ]),
  );
  assert.deepEqual(
    events.map((e) => [e.type, e.object.metadata?.name ?? e.object.metadata?.resourceVersion]),
    [
      ["ADDED", "a"],
      ["ADDED", "b"],
      ["BOOKMARK", "12"],
    ],
  );
});

Deno.test("watch decoder accepts a last event without a trailing newline", async () => {
  const events = await collect(source([`${cm("a", "1")}\n${cm("b", "2")}`]));
  assert.equal(events.length, 2);
});

Deno.test("watch ERROR event with 410 becomes an ApiError with reason Gone and closes the stream", async () => {
  const expired = JSON.stringify({
    type: "ERROR",
    object: {
      kind: "Status",
      status: "Failure",
      message: "too old resource version: 5 (120)",
      reason: "Expired",
      code: 410,
    },
  });
  const s = source([`${cm("a", "4")}\n${expired}\n${cm("never", "6")}\n`], "hang");
  const seen: string[] = [];
  const err = await (async () => {
    for await (const e of decodeWatchStream(s.body, { path: PATH })) {
      seen.push(e.object.metadata?.name ?? "");
    }
  })().catch((e) => e);
  assert.deepEqual(seen, ["a"]);
  assert.ok(err instanceof ApiError);
  assert.equal(err.status, 410);
  assert.equal(err.reason, "Gone");
  assert.ok(isGone(err));
  assert.equal(err.verb, "watch");
  assert.equal(err.message, `watch ${PATH}: too old resource version: 5 (120) (410 Gone)`);
  assert.equal(s.cancelled, true);
});

Deno.test("watch ERROR event with another status keeps the server's reason", async () => {
  const err = await collect(source([
    JSON.stringify({
      type: "ERROR",
      object: { kind: "Status", message: "etcd unavailable", reason: "InternalError", code: 500 },
    }) + "\n",
  ])).catch((e) => e);
  assert.ok(err instanceof ApiError);
  assert.equal(err.reason, "InternalError");
  assert.equal(err.retryable, true);
});

Deno.test("watch garbage becomes a WatchDecodeError quoting what arrived", async () => {
  const cases: [string, RegExp][] = [
    [
      "<html>502 Bad Gateway</html>\n",
      /not a watch event \(not JSON\): "<html>502 Bad Gateway<\/html>"/,
    ],
    ["[1,2]\n", /\(JSON that is not an object\)/],
    ['{"type":"EXPLODED","object":{}}\n', /\(unknown event type "EXPLODED"\)/],
    ['{"object":{}}\n', /\(unknown event type null\)/],
    ['{"type":"ADDED","object":"x"}\n', /\(a ADDED event without an object\)/],
    ['{"type":"ADDED","obj', /\(the stream ended mid-event\): "\{\\"type\\":\\"ADDED\\",\\"obj"/],
  ];
  for (const [text, expected] of cases) {
    // A complete garbage line must fail at once; a partial one when the stream ends.
    const s = source([`${cm("ok", "1")}\n`, text], text.endsWith("\n") ? "hang" : "close");
    const events: WatchEvent[] = [];
    const err = await (async () => {
      for await (const e of decodeWatchStream(s.body, { path: PATH })) events.push(e);
    })().catch((e) => e);
    assert.equal(events.length, 1, "events before the garbage are delivered");
    assert.ok(err instanceof WatchDecodeError, `${text}: got ${err}`);
    assert.match(err.message, expected);
    assert.ok(err.message.startsWith(`watch ${PATH}: `));
    assert.equal(err.received.length > 0, true);
  }
});

Deno.test("watch decoder refuses a line longer than the limit instead of buffering forever", async () => {
  const s = source(["{", "x".repeat(100), "y".repeat(100)], "hang");
  const err = await (async () => {
    for await (const _ of decodeWatchStream(s.body, { path: PATH, maxLineLength: 150 })) {
      /* none */
    }
  })().catch((e) => e);
  assert.ok(err instanceof WatchDecodeError);
  assert.match(err.message, /more than 150 characters without a newline/);
  assert.equal(s.cancelled, true);
});

Deno.test("aborting while a read is pending ends the watch and cancels the body", async () => {
  const s = source([`${cm("a", "1")}\n`], "hang");
  const controller = new AbortController();
  const events: WatchEvent[] = [];
  const done = (async () => {
    for await (const e of decodeWatchStream(s.body, { path: PATH, signal: controller.signal })) {
      events.push(e);
    }
  })();
  await new Promise((r) => setTimeout(r, 10));
  controller.abort();
  await done;
  assert.equal(events.length, 1);
  assert.equal(s.cancelled, true);
});

Deno.test("breaking out of a watch cancels the body", async () => {
  const s = source([`${cm("a", "1")}\n${cm("b", "2")}\n`], "hang");
  for await (const _ of decodeWatchStream(s.body, { path: PATH })) break;
  assert.equal(s.cancelled, true);
});

Deno.test("a connection failing mid-stream is a TransportError, unless the caller aborted", async () => {
  const failed = await collect(source([`${cm("a", "1")}\n`], new Error("connection reset"))).catch((
    e,
  ) => e);
  assert.ok(failed instanceof TransportError);
  assert.match(failed.message, /watch .*: the connection failed mid-stream: connection reset/);

  const controller = new AbortController();
  const events = [];
  for await (
    const e of decodeWatchStream(
      source([`${cm("a", "1")}\n${cm("b", "2")}\n`], new Error("aborted")).body,
      {
        path: PATH,
        signal: controller.signal,
      },
    )
  ) {
    events.push(e);
    controller.abort();
  }
  assert.equal(
    events.length,
    1,
    "an aborted watch ends quietly, delivering nothing after the abort",
  );
});
