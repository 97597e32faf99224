/**
 * The client's HTTP behaviour against a loopback server that scripts the
 * answers the real API server will not give on demand: timeouts, 401s that
 * a fresh token cures, HTML error pages, Retry-After. The real API server is
 * exercised in tests/integration/kube_client_test.ts.
 */
import assert from "node:assert/strict";
import { KubeClient, type RequestObservation } from "../../lib/kube/client.ts";
import type { ClusterConfig } from "../../lib/kube/config.ts";
import {
  ApiError,
  isConflict,
  isForbidden,
  isNotFound,
  isUnauthorized,
  TransportError,
} from "../../lib/kube/errors.ts";
import { CONFIG_MAPS, NAMESPACES } from "../../lib/kube/resources.ts";
import {
  FileTokenSource,
  noToken,
  staticToken,
  type TokenSource,
} from "../../lib/kube/token_source.ts";
import { FakeClock } from "../../lib/async/clock.ts";
import { waitFor } from "../../lib/testing/wait_for.ts";
import denoJson from "../../deno.json" with { type: "json" };

Deno.test.sanitizer({ ops: true, resources: true });

interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
}

type Handler = (req: Request, seen: Seen) => Response | Promise<Response>;

/** A loopback server answering with `handler`, and a client pointed at it. */
function harness(
  handler: Handler,
  auth: TokenSource = noToken,
  onRequest?: (o: RequestObservation) => void,
) {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const s = {
      method: req.method,
      url: new URL(req.url),
      headers: req.headers,
      body: await req.text(),
    };
    seen.push(s);
    return handler(req, s);
  });
  const config: ClusterConfig = {
    server: `http://127.0.0.1:${server.addr.port}/`,
    auth,
    namespace: "team",
    source: "test",
  };
  const client = new KubeClient(config, onRequest ? { onRequest } : {});
  return {
    seen,
    client,
    async [Symbol.asyncDispose]() {
      client.close();
      await server.shutdown();
    },
  };
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });

Deno.test("client sends the user agent, accept header and the context's namespace", async () => {
  await using h = harness(() => json({ metadata: { name: "web" } }));
  assert.equal(h.client.namespace, "team");
  assert.equal(h.client.server.endsWith("/"), false);
  await h.client.get(CONFIG_MAPS, "web");
  await h.client.get(CONFIG_MAPS, "web", { namespace: "other", metadataOnly: true });
  const [plain, meta] = h.seen;
  assert.equal(plain?.url.pathname, "/api/v1/namespaces/team/configmaps/web");
  assert.equal(
    plain?.headers.get("user-agent"),
    `kinglet/${denoJson.version} (deno ${Deno.version.deno})`,
  );
  assert.equal(plain?.headers.get("accept"), "application/json");
  assert.equal(plain?.headers.get("authorization"), null);
  assert.equal(meta?.url.pathname, "/api/v1/namespaces/other/configmaps/web");
  assert.equal(
    meta?.headers.get("accept"),
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
  );
});

Deno.test("list passes selectors and paging, and listAll follows continue tokens", async () => {
  await using h = harness((_req, s) => {
    const page = s.url.searchParams.get("continue") ?? "0";
    const next = { "0": "1", "1": "2", "2": "" }[page] ?? "";
    return json({
      kind: "ConfigMapList",
      apiVersion: "v1",
      metadata: { resourceVersion: `rv-${page}`, ...(next ? { continue: next } : {}) },
      items: [{ metadata: { name: `item-${page}` } }],
    });
  });
  const all = await h.client.listAll(CONFIG_MAPS, {
    namespace: "a",
    labelSelector: "app=web",
    limit: 1,
    metadataOnly: true,
    resourceVersion: "0",
    resourceVersionMatch: "NotOlderThan",
  });
  assert.deepEqual(all.items.map((i) => i.metadata?.name), ["item-0", "item-1", "item-2"]);
  assert.deepEqual(all.metadata, { resourceVersion: "rv-0" });
  assert.equal(all.kind, "ConfigMapList");
  assert.equal(h.seen.length, 3);
  for (const s of h.seen) {
    assert.equal(s.url.pathname, "/api/v1/namespaces/a/configmaps");
    assert.equal(s.url.searchParams.get("labelSelector"), "app=web");
    assert.equal(s.url.searchParams.get("limit"), "1");
    assert.match(s.headers.get("accept") ?? "", /as=PartialObjectMetadataList/);
  }
  assert.equal(h.seen[2]?.url.searchParams.get("continue"), "2");
  assert.equal(h.seen[0]?.url.searchParams.get("resourceVersion"), "0");
  assert.equal(
    h.seen[1]?.url.searchParams.get("resourceVersion"),
    null,
    "a continue pins the snapshot",
  );
  assert.equal(h.seen[1]?.url.searchParams.get("resourceVersionMatch"), null);
  await h.client.list(CONFIG_MAPS);
  assert.equal(h.seen[3]?.url.pathname, "/api/v1/configmaps", "no namespace lists all namespaces");
});

Deno.test("writes send the right method, content type, query and body", async () => {
  await using h = harness((_req, s) => json(s.body ? JSON.parse(s.body) : {}));
  const obj = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "web", namespace: "shop" } };
  await h.client.create(CONFIG_MAPS, obj, { fieldManager: "kinglet", dryRun: true });
  await h.client.replace(CONFIG_MAPS, obj);
  await h.client.patch(CONFIG_MAPS, "web", [{ op: "test", path: "/x", value: 1 }], {
    type: "json",
  });
  await h.client.patch(CONFIG_MAPS, "web", { data: { a: "1" } }, {
    type: "merge",
    subresource: "status",
  });
  await h.client.patch(CONFIG_MAPS, "web", { data: {} }, { type: "strategic", namespace: "x" });
  await h.client.apply(CONFIG_MAPS, obj, { fieldManager: "kinglet", force: true });
  await h.client.delete(CONFIG_MAPS, "web", {
    preconditions: { uid: "u1" },
    propagationPolicy: "Foreground",
  });
  await h.client.delete(NAMESPACES, "gone");
  const rows = h.seen.map((
    s,
  ) => [s.method, s.url.pathname + s.url.search, s.headers.get("content-type")]);
  assert.deepEqual(rows, [
    [
      "POST",
      "/api/v1/namespaces/shop/configmaps?fieldManager=kinglet&dryRun=All",
      "application/json",
    ],
    ["PUT", "/api/v1/namespaces/shop/configmaps/web", "application/json"],
    ["PATCH", "/api/v1/namespaces/team/configmaps/web", "application/json-patch+json"],
    ["PATCH", "/api/v1/namespaces/team/configmaps/web/status", "application/merge-patch+json"],
    ["PATCH", "/api/v1/namespaces/x/configmaps/web", "application/strategic-merge-patch+json"],
    [
      "PATCH",
      "/api/v1/namespaces/shop/configmaps/web?fieldManager=kinglet&force=true",
      "application/apply-patch+yaml",
    ],
    ["DELETE", "/api/v1/namespaces/team/configmaps/web", "application/json"],
    ["DELETE", "/api/v1/namespaces/gone", null],
  ]);
  assert.deepEqual(JSON.parse(h.seen[6]?.body ?? ""), {
    apiVersion: "v1",
    kind: "DeleteOptions",
    preconditions: { uid: "u1" },
    propagationPolicy: "Foreground",
  });
  assert.deepEqual(JSON.parse(h.seen[5]?.body ?? ""), obj);
});

Deno.test("getOptional reads a missing object as undefined, and delete with ignoreNotFound resolves for one", async () => {
  const status = (code: number, reason: string) => ({
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    reason,
    code,
    message: `configmaps "x" ${reason}`,
  });
  await using h = harness((_req, s) => {
    if (s.url.pathname.endsWith("/gone")) return json(status(404, "NotFound"), 404);
    if (s.url.pathname.endsWith("/held")) return json(status(409, "Conflict"), 409);
    return json({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "web" } });
  });
  assert.equal(await h.client.getOptional(CONFIG_MAPS, "gone"), undefined);
  assert.equal((await h.client.getOptional(CONFIG_MAPS, "web"))?.metadata?.name, "web");
  await h.client.delete(CONFIG_MAPS, "gone", { ignoreNotFound: true });
  await assert.rejects(() => h.client.delete(CONFIG_MAPS, "gone"), isNotFound);
  await assert.rejects(() => h.client.getOptional(CONFIG_MAPS, "held"), isConflict);
  await assert.rejects(
    () => h.client.delete(CONFIG_MAPS, "held", { ignoreNotFound: true }),
    isConflict,
  );
  const deletes = h.seen.filter((s) => s.method === "DELETE");
  assert.deepEqual(
    deletes.map((s) => s.url.search + s.body),
    ["", "", ""],
    "the option stays here",
  );
});

Deno.test("client misuse throws before any request", async () => {
  await using h = harness(() => json({}));
  assert.throws(() => h.client.patch(CONFIG_MAPS, "x", {}, { type: "apply" }), {
    name: "TypeError",
    message: `Cannot apply configmaps "x": 'fieldManager' is required`,
  });
  assert.throws(
    () => h.client.patch(CONFIG_MAPS, "x", {}, { type: "merge", force: true }),
    /'force' only applies/,
  );
  assert.throws(
    () => h.client.replace(CONFIG_MAPS, { metadata: {} }),
    /Cannot replace a ConfigMap: metadata.name is missing/,
  );
  assert.throws(
    () => h.client.get(NAMESPACES, "a", { namespace: "b" }),
    /Namespace is cluster-scoped/,
  );
  assert.throws(
    () =>
      new KubeClient({ server: "http://x", auth: noToken, namespace: "", source: "t" }, {
        timeoutMs: 0,
      }),
    {
      name: "RangeError",
      message: "Cannot create the client: 'timeoutMs' must be a positive number, got 0",
    },
  );
  assert.equal(h.seen.length, 0);
});

Deno.test("a 401 invalidates the token source and retries once with the fresh token", async () => {
  let issued = 0;
  let invalidations = 0;
  const rotating: TokenSource = {
    token: () => Promise.resolve(`token-${issued}`),
    invalidate: () => {
      invalidations++;
      issued++;
    },
  };
  await using h = harness(
    (_req, s) =>
      s.headers.get("authorization") === "Bearer token-1"
        ? json({ metadata: { name: "ok" } })
        : json({ kind: "Status", code: 401, reason: "Unauthorized", message: "Unauthorized" }, 401),
    rotating,
  );
  const got = await h.client.get(CONFIG_MAPS, "x");
  assert.equal(got.metadata?.name, "ok");
  assert.equal(invalidations, 1);
  assert.deepEqual(h.seen.map((s) => s.headers.get("authorization")), [
    "Bearer token-0",
    "Bearer token-1",
  ]);
});

Deno.test("a 403 on a token whose file has since changed retries once with the new token", async () => {
  const forbidden = json({ kind: "Status", code: 403, reason: "Forbidden", message: "no" }, 403);
  let content = "old";
  const auth = new FileTokenSource("/t/token", {
    clock: new FakeClock(1_000_000),
    readTextFile: () => Promise.resolve(content),
  });
  await using h = harness(
    (_req, s) =>
      s.headers.get("authorization") === "Bearer new"
        ? json({ metadata: { name: "ok" } })
        : forbidden.clone(),
    auth,
  );
  await assert.rejects(h.client.get(CONFIG_MAPS, "x"), isForbidden, "an unchanged file is final");
  content = "new";
  assert.equal((await h.client.get(CONFIG_MAPS, "x")).metadata?.name, "ok");
  assert.deepEqual(h.seen.map((s) => s.headers.get("authorization")), [
    "Bearer old",
    "Bearer old",
    "Bearer new",
  ]);
});

Deno.test("a token rejected twice is an Unauthorized ApiError that says what to check", async () => {
  await using h = harness(
    () => json({ kind: "Status", code: 401, reason: "Unauthorized", message: "Unauthorized" }, 401),
    staticToken("wrong"),
  );
  const err = await h.client.get(CONFIG_MAPS, "x").catch((e) => e);
  assert.ok(isUnauthorized(err));
  assert.match(
    err.message,
    /Unauthorized \(401 Unauthorized\); the bearer token was rejected even after fetching it again; check the user of test/,
  );
  assert.equal(h.seen.length, 2);
});

Deno.test("an HTML error page with Retry-After still gives a clear, retryable ApiError", async () => {
  await using h = harness(() =>
    new Response("<html>upstream down</html>", { status: 503, headers: { "retry-after": "5" } })
  );
  const err = await h.client.list(CONFIG_MAPS).catch((e) => e);
  assert.ok(err instanceof ApiError);
  assert.equal(err.retryAfterSeconds, 5);
  assert.equal(err.retryable, true);
  assert.match(
    err.message,
    /list \/api\/v1\/configmaps: HTTP 503 Service Unavailable without a Kubernetes Status body: "<html>upstream down<\/html>"/,
  );
});

Deno.test("a slow answer times out as a TransportError; the caller's abort surfaces as its reason", async () => {
  const observed: RequestObservation[] = [];
  const { promise: release, resolve } = Promise.withResolvers<void>();
  await using h = harness(
    async () => {
      await release;
      return json({});
    },
    noToken,
    (o) => observed.push(o),
  );
  const slow = new KubeClient({
    server: h.client.server,
    auth: noToken,
    namespace: "a",
    source: "t",
  }, { timeoutMs: 100 });
  try {
    const err = await slow.get(CONFIG_MAPS, "x").catch((e) => e);
    assert.ok(err instanceof TransportError);
    assert.match(
      err.message,
      /^get \/api\/v1\/namespaces\/a\/configmaps\/x: no answer from http:\/\/127.0.0.1:\d+ within 100 ms$/,
    );
  } finally {
    slow.close();
  }
  const controller = new AbortController();
  const pending = h.client.get(CONFIG_MAPS, "y", { signal: controller.signal });
  controller.abort(new Error("shutting down"));
  await assert.rejects(pending, /shutting down/);
  resolve();
  assert.deepEqual(observed.map((o) => [o.verb, o.method, o.code]), [["get", "GET", "<error>"]]);
  assert.match(observed[0]?.host ?? "", /^127\.0\.0\.1:\d+$/);
});

Deno.test("an unreachable server is a TransportError naming it", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const client = new KubeClient({
    server: `http://127.0.0.1:${port}`,
    auth: noToken,
    namespace: "a",
    source: "t",
  });
  try {
    const err = await client.get(CONFIG_MAPS, "x").catch((e) => e);
    assert.ok(err instanceof TransportError);
    assert.match(err.message, new RegExp(`cannot reach http://127.0.0.1:${port}: .*`));
  } finally {
    client.close();
  }
});

Deno.test("watch sends bookmarks on by default and ends when the server closes the stream", async () => {
  await using h = harness(() =>
    new Response(
      ReadableStream.from([
        '{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"5"}}}\n{"type":"BOOK',
        'MARK","object":{"metadata":{"resourceVersion":"9"}}}\n',
      ]).pipeThrough(new TextEncoderStream()),
    )
  );
  const events = [];
  for await (
    const e of h.client.watch(CONFIG_MAPS, {
      namespace: "a",
      resourceVersion: "4",
      timeoutSeconds: 30,
    })
  ) {
    events.push([e.type, e.object.metadata?.resourceVersion]);
  }
  assert.deepEqual(events, [["ADDED", "5"], ["BOOKMARK", "9"]]);
  const q = h.seen[0]?.url.searchParams;
  assert.equal(q?.get("watch"), "true");
  assert.equal(q?.get("allowWatchBookmarks"), "true");
  assert.equal(q?.get("resourceVersion"), "4");
  assert.equal(q?.get("timeoutSeconds"), "30");
});

Deno.test("leaving a watch or aborting it closes the connection on the server side", async () => {
  const closed: string[] = [];
  await using h = harness((req) => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(
          new TextEncoder().encode('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n'),
        );
      },
      cancel() {
        closed.push(new URL(req.url).searchParams.get("labelSelector") ?? "");
      },
    });
    return new Response(body);
  });
  for await (const _ of h.client.watch(CONFIG_MAPS, { labelSelector: "by=break" })) break;

  const controller = new AbortController();
  const events = [];
  for await (
    const e of h.client.watch(CONFIG_MAPS, { labelSelector: "by=abort", signal: controller.signal })
  ) {
    events.push(e);
    controller.abort();
  }
  assert.equal(events.length, 1, "an aborted watch ends without an error");
  await waitFor("the server to see both watches closed", () => closed.length === 2, {
    timeoutMs: 30_000,
  });
  assert.deepEqual(closed.sort(), ["by=abort", "by=break"]);
});
