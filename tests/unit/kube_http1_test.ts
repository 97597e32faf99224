/**
 * kinglet's HTTP/1.1 client at the byte level, against a loopback server
 * scripted per connection: keep-alive reuse, both body framings split
 * across many reads, `Connection: close`, kept connections closed while
 * idle, the one retry after the server dropped a request on a kept
 * connection, answers cut short, aborts, timeouts and the idle limit. TLS is in kube_http1_tls_test.ts.
 */
import assert from "node:assert/strict";
import { KubeClient } from "../../lib/kube/client.ts";
import { TransportError } from "../../lib/kube/errors.ts";
import { CONFIG_MAPS } from "../../lib/kube/resources.ts";
import { noToken } from "../../lib/kube/token_source.ts";
import { Http1Client } from "../../lib/kube/_http1.ts";
import { waitFor } from "../../lib/testing/wait_for.ts";
import { answer, type Peer, rawServer } from "./_raw_http_server.ts";

Deno.test.sanitizer({ ops: true, resources: true });

/** A scripted server and a client of it, closed in that order's reverse. */
function harness(script: (peer: Peer, index: number) => Promise<void>, timeoutMs?: number) {
  const server = rawServer(script);
  const client = new KubeClient(
    { server: server.url, auth: noToken, namespace: "a", source: "test" },
    timeoutMs ? { timeoutMs } : {},
  );
  return {
    server,
    client,
    async [Symbol.asyncDispose]() {
      client.close();
      await server[Symbol.asyncDispose]();
    },
  };
}

/**
 * Answers every request on the connection with a ConfigMap named after the
 * last segment of its path; a request for `/held` waits for `held` first.
 */
async function answerAll(peer: Peer, held?: Promise<void>): Promise<void> {
  for (let request = await peer.request(); request; request = await peer.request()) {
    const name = request.head.split(" ")[1]!.split("/").pop();
    if (name === "held") await held;
    await peer.write(answer(JSON.stringify({ metadata: { name } })));
  }
}

const byteLength = (text: string) => new TextEncoder().encode(text).length;

const CHUNKED_HEAD = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";

function chunked(body: string): string {
  const characters = Array.from(body);
  const half = Math.floor(characters.length / 2);
  const [first, second] = [characters.slice(0, half).join(""), characters.slice(half).join("")];
  // Two chunks with an extension on the first, then trailers: all of which the client must skip.
  return CHUNKED_HEAD + `${byteLength(first).toString(16)};note=x\r\n${first}\r\n` +
    `${byteLength(second).toString(16)}\r\n${second}\r\n0\r\nX-Trailer: y\r\n\r\n`;
}

Deno.test("requests in turn share one kept-alive connection", async () => {
  await using h = harness((peer) => answerAll(peer));
  for (const name of ["a", "b", "c"]) {
    assert.equal((await h.client.get(CONFIG_MAPS, name)).metadata?.name, name);
  }
  assert.equal(h.server.accepted, 1);
});

Deno.test("a body is read whole, chunked or sized, split across many reads or in one", async () => {
  const body = JSON.stringify({ metadata: { name: "split" }, data: { text: "é€😀".repeat(50) } });
  await using h = harness(async (peer) => {
    await peer.request();
    await peer.writeSlowly(chunked(body), 7);
    await peer.request();
    await peer.writeSlowly(answer(body), 5);
    await peer.request();
    await peer.write(`${CHUNKED_HEAD}${byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`);
    await answerAll(peer);
  });
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(await h.client.get(CONFIG_MAPS, "split"), JSON.parse(body));
  }
  assert.equal((await h.client.get(CONFIG_MAPS, "after")).metadata?.name, "after");
  assert.equal(h.server.accepted, 1, "both framings leave the connection reusable");
});

Deno.test("an answer with Connection: close is not followed by another request on its connection", async () => {
  await using h = harness(async (peer) => {
    await peer.request();
    await peer.write(answer('{"metadata":{"name":"once"}}', "Connection: close\r\n"));
  });
  await h.client.get(CONFIG_MAPS, "x");
  await h.client.get(CONFIG_MAPS, "y");
  assert.equal(h.server.accepted, 2);
});

Deno.test("kept connections closed while idle leave the pool: after a cut, even a create goes out on a new one", async () => {
  const held = Promise.withResolvers<void>();
  await using h = harness(async (peer, index) => {
    if (index < 3) {
      // Three requests at once keep three connections, which then close together, idle.
      await peer.request();
      await held.promise;
      await peer.write(answer('{"metadata":{"name":"kept"}}'));
      return;
    }
    await answerAll(peer);
  });
  const first = Promise.all(["a", "b", "c"].map((name) => h.client.get(CONFIG_MAPS, name)));
  await waitFor("three connections", () => h.server.accepted === 3);
  held.resolve();
  await first;
  await waitFor("the server to close all three", () => h.server.finished === 3);
  // A create is never sent twice, so it would fail if written on a connection closed under it.
  const created = await h.client.create(CONFIG_MAPS, { metadata: { name: "new" } });
  assert.equal(created.metadata?.name, "configmaps");
  assert.equal((await h.client.get(CONFIG_MAPS, "then")).metadata?.name, "then");
  assert.equal(h.server.accepted, 4, "one new connection, reused");
});

Deno.test("a read the server drops unanswered on a kept connection is sent once more, on a new one", async () => {
  await using h = harness(async (peer, index) => {
    if (index === 0) {
      for (const name of ["a", "b"]) {
        await peer.request();
        await peer.write(answer(JSON.stringify({ metadata: { name } })));
      }
      await peer.request(); // read, then the connection closes unanswered
      return;
    }
    await answerAll(peer);
  });
  // The second request reuses the kept connection; the server drops the third on it.
  await h.client.get(CONFIG_MAPS, "a");
  await h.client.get(CONFIG_MAPS, "b");
  assert.equal((await h.client.get(CONFIG_MAPS, "again")).metadata?.name, "again");
  assert.equal(h.server.accepted, 2);
});

Deno.test("a create the server took on a kept connection and never answered is not sent again", async () => {
  await using h = harness(async (peer, index) => {
    if (index > 0) return await answerAll(peer);
    await peer.request();
    await peer.write(answer('{"metadata":{"name":"first"}}'));
    await peer.request(); // the create arrives, and the connection closes unanswered
  });
  await h.client.get(CONFIG_MAPS, "first");
  const err = await h.client.create(CONFIG_MAPS, { metadata: { name: "once" } }).catch((e) => e);
  assert.ok(err instanceof TransportError, String(err));
  assert.equal(h.server.accepted, 1, "the create went out a second time");
});

Deno.test("a new connection closed before an answer is an error, not retried", async () => {
  await using h = harness(async (peer) => void await peer.request());
  const err = await h.client.get(CONFIG_MAPS, "x").catch((e) => e);
  assert.ok(err instanceof TransportError);
  assert.match(
    err.message,
    /cannot reach http:\/\/127\.0\.0\.1:\d+: the server closed the connection/,
  );
  assert.equal(h.server.accepted, 1);
});

Deno.test("a server closing mid-body is a TransportError, not a hang", async () => {
  await using h = harness(async (peer, index) => {
    await peer.request();
    await peer.write(
      index === 0
        ? 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"metadata"'
        : 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n{"metadata"',
    );
  });
  for (let i = 0; i < 2; i++) {
    const err = await h.client.get(CONFIG_MAPS, "x").catch((e) => e);
    assert.ok(err instanceof TransportError);
    assert.match(
      err.message,
      /reading the answer failed: the connection closed before the end of the answer/,
    );
  }
});

Deno.test("aborting while waiting for the answer closes the socket and rejects with the reason", async () => {
  const received = Promise.withResolvers<void>();
  await using h = harness(async (peer) => {
    await peer.request();
    received.resolve();
    await peer.closedByClient();
  });
  const controller = new AbortController();
  const pending = h.client.get(CONFIG_MAPS, "x", { signal: controller.signal });
  await received.promise;
  controller.abort(new Error("shutting down"));
  await assert.rejects(pending, /shutting down/);
  await waitFor("the server to see the socket closed", () => h.server.finished === 1);
});

Deno.test("a watch left or aborted mid-stream closes its socket", async () => {
  await using h = harness(async (peer) => {
    await peer.request();
    await peer.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    const event = '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n';
    await peer.write(`${event.length.toString(16)}\r\n${event}\r\n`);
    await peer.closedByClient();
  });
  for await (const _ of h.client.watch(CONFIG_MAPS)) break;
  await waitFor("the server to see the left watch closed", () => h.server.finished === 1);
  const controller = new AbortController();
  const events = [];
  for await (const e of h.client.watch(CONFIG_MAPS, { signal: controller.signal })) {
    events.push(e);
    controller.abort();
  }
  assert.equal(events.length, 1, "an aborted watch ends without an error");
  await waitFor("the server to see the aborted watch closed", () => h.server.finished === 2);
});

Deno.test("a body that stops arriving times out, and its socket is closed", async () => {
  await using h = harness(async (peer) => {
    await peer.request();
    await peer.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{");
    await peer.closedByClient();
  }, 100);
  const err = await h.client.get(CONFIG_MAPS, "x").catch((e) => e);
  assert.ok(err instanceof TransportError);
  assert.match(err.message, /no answer from http:\/\/127\.0\.0\.1:\d+ within 100 ms$/);
  await waitFor("the server to see the socket closed", () => h.server.finished === 1);
});

Deno.test("a connection idle past the limit is closed, not reused", async () => {
  await using server = rawServer((peer) => answerAll(peer));
  const client = new Http1Client({ server: new URL(server.url), userAgent: "test", idleMs: 30 });
  try {
    const get = async () => {
      const request = { method: "GET", target: "/x", accept: "application/json" };
      await (await client.send(request, new AbortController().signal)).text();
    };
    await get();
    await new Promise((resolve) => setTimeout(resolve, 60));
    await get();
    assert.equal(server.accepted, 2);
    await waitFor("the server to see the idle connection closed", () => server.finished === 1);
  } finally {
    client.close();
  }
});

Deno.test("after resetConnections idle connections close, and one in flight closes after its answer", async () => {
  const release = Promise.withResolvers<void>();
  await using server = rawServer((peer) => answerAll(peer, release.promise));
  const client = new Http1Client({ server: new URL(server.url), userAgent: "test" });
  const signal = new AbortController().signal;
  const get = async (target: string) =>
    await (await client.send({ method: "GET", target, accept: "*/*" }, signal)).text();
  try {
    await Promise.all([get("/a"), get("/b")]);
    assert.equal(server.accepted, 2);
    const held = get("/held");
    client.resetConnections();
    await waitFor("the idle connection closed", () => server.finished === 1);
    release.resolve();
    assert.match(await held, /held/);
    await waitFor("the one in flight closed after its answer", () => server.finished === 2);
    await get("/c");
    assert.equal(server.accepted, 3);
  } finally {
    client.close();
  }
});
