/**
 * The Kubernetes client against the real control plane of
 * `hack/with_cluster.ts`. Every test works in namespaces of its own, deleted
 * at the end, and runs with Deno's op and resource sanitizers: a leaked
 * connection or response body fails the test.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/kube_client_test.ts
 */
import assert from "node:assert/strict";
import { KubeClient } from "../../lib/kube/client.ts";
import { type ClusterConfig, loadConfig } from "../../lib/kube/config.ts";
import {
  ApiError,
  ConfigError,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
  isUnauthorized,
  TransportError,
} from "../../lib/kube/errors.ts";
import {
  CLUSTER_ROLE_BINDINGS,
  CONFIG_MAPS,
  CUSTOM_RESOURCE_DEFINITIONS,
  NAMESPACES,
  ROLE_BINDINGS,
  SECRETS,
  SERVICE_ACCOUNTS,
} from "../../lib/kube/resources.ts";
import { FileTokenSource, staticToken } from "../../lib/kube/token_source.ts";
import type { KubeObject, Resource, WatchEvent } from "../../lib/kube/types.ts";
import { compactEtcd, kubectl, testKubeconfig } from "../_support/cluster.ts";
import { serverStreamsLists, waitFor } from "../_support/kube.ts";

Deno.test.sanitizer({ ops: true, resources: true });

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** An admin client and a fresh namespace, both cleaned up on dispose. */
async function scope(prefix: string) {
  const config = await loadConfig({ kubeconfig: testKubeconfig() });
  const client = new KubeClient(config);
  const namespace = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  await client.create(NAMESPACES, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: namespace },
  });
  return {
    config,
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

/**
 * Marks the ConfigMaps the tests make, so that watches can leave out the
 * `kube-root-ca.crt` the controller manager adds to every namespace.
 */
const MINE = "kinglet.dev/test=kube-client";

function configMap(
  name: string,
  data: Record<string, string>,
  labels: Record<string, string> = {},
): ConfigMap {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, labels: { "kinglet.dev/test": "kube-client", ...labels } },
    data,
  };
}

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(() => undefined, (e) => e);
  assert.ok(err instanceof ApiError, `expected an ApiError, got ${err}`);
  return err;
}

/** A token for `sa` in `namespace`, from the TokenRequest API (serviceaccounts/<sa>/token). */
async function serviceAccountToken(namespace: string, sa: string): Promise<string> {
  const result = await kubectl(["create", "token", sa, "-n", namespace, "--duration=10m"]);
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.trim();
}

Deno.test("client creates, reads, replaces, patches and deletes a ConfigMap", async () => {
  await using s = await scope("kc-crud");
  const { client, namespace } = s;
  const created = await client.create(CONFIG_MAPS, configMap("web", { color: "blue" }), {
    namespace,
  });
  assert.equal(created.metadata?.namespace, namespace);
  assert.ok(created.metadata?.uid);
  assert.ok(
    isAlreadyExists(
      await rejection(client.create(CONFIG_MAPS, configMap("web", {}), { namespace })),
    ),
  );

  const read = await client.get<ConfigMap>(CONFIG_MAPS, "web", { namespace });
  assert.deepEqual(read.data, { color: "blue" });
  const meta = await client.get(CONFIG_MAPS, "web", { namespace, metadataOnly: true });
  assert.equal(meta.kind, "PartialObjectMetadata");
  assert.equal(meta.data, undefined);
  assert.equal(meta.metadata?.uid, created.metadata?.uid);

  const replaced = await client.replace(CONFIG_MAPS, { ...read, data: { color: "green" } });
  assert.deepEqual(replaced.data, { color: "green" });
  const stale = await rejection(client.replace(CONFIG_MAPS, { ...read, data: { color: "red" } }));
  assert.ok(isConflict(stale), "a replace with an old resourceVersion is a conflict");

  const merged = await client.patch<ConfigMap>(CONFIG_MAPS, "web", { data: { size: "L" } }, {
    type: "merge",
    namespace,
  });
  assert.deepEqual(merged.data, { color: "green", size: "L" });
  const strategic = await client.patch<ConfigMap>(CONFIG_MAPS, "web", {
    metadata: { labels: { a: "b" } },
  }, {
    type: "strategic",
    namespace,
  });
  assert.equal(strategic.metadata?.labels?.a, "b");
  const dry = await client.create(CONFIG_MAPS, configMap("dry", {}), { namespace, dryRun: true });
  assert.equal(dry.metadata?.name, "dry");
  assert.ok(isNotFound(await rejection(client.get(CONFIG_MAPS, "dry", { namespace }))));

  const wrongUid = await rejection(
    client.delete(CONFIG_MAPS, "web", { namespace, preconditions: { uid: "nope" } }),
  );
  assert.ok(isConflict(wrongUid), "a failed precondition is a conflict");
  await client.delete(CONFIG_MAPS, "web", {
    namespace,
    preconditions: { uid: created.metadata?.uid ?? "" },
    propagationPolicy: "Background",
  });
  const gone = await rejection(client.get(CONFIG_MAPS, "web", { namespace }));
  assert.ok(isNotFound(gone));
  assert.match(
    gone.message,
    /^get \/api\/v1\/namespaces\/.*\/configmaps\/web: configmaps "web" not found \(404 NotFound\)$/,
  );
});

Deno.test("list pages with limit and continue, and listAll gathers every page", async () => {
  await using s = await scope("kc-pages");
  const { client, namespace } = s;
  for (let i = 0; i < 5; i++) {
    await client.create(CONFIG_MAPS, configMap(`item-${i}`, { i: String(i) }, { set: "pages" }), {
      namespace,
    });
  }
  await client.create(CONFIG_MAPS, configMap("other", {}), { namespace });
  const labelSelector = "set=pages";
  const first = await client.list<ConfigMap>(CONFIG_MAPS, { namespace, labelSelector, limit: 2 });
  assert.equal(first.items.length, 2);
  assert.ok(first.metadata.continue, "a first page of 2 out of 5 has a continue token");

  const all = await client.listAll<ConfigMap>(CONFIG_MAPS, { namespace, labelSelector, limit: 2 });
  assert.deepEqual(all.items.map((c) => c.metadata?.name).sort(), [
    "item-0",
    "item-1",
    "item-2",
    "item-3",
    "item-4",
  ]);
  assert.equal(all.metadata.continue, undefined);
  assert.ok(all.metadata.resourceVersion);

  const bySelector = await client.list(CONFIG_MAPS, {
    namespace,
    fieldSelector: "metadata.name=other",
  });
  assert.deepEqual(bySelector.items.map((c) => c.metadata?.name), ["other"]);
  const meta = await client.listAll(CONFIG_MAPS, {
    namespace,
    labelSelector,
    limit: 2,
    metadataOnly: true,
  });
  assert.equal(meta.kind, "PartialObjectMetadataList");
  assert.equal(meta.items.length, 5);
  assert.ok(meta.items.every((i) => i.data === undefined && i.metadata?.name?.startsWith("item-")));
});

Deno.test("server-side apply reports a conflict between field managers and force takes over", async () => {
  await using s = await scope("kc-apply");
  const { client, namespace } = s;
  const desired = (value: string): ConfigMap => ({
    ...configMap("shared", { owner: value }),
    metadata: { name: "shared", namespace },
  });
  const first = await client.apply(CONFIG_MAPS, desired("alpha"), { fieldManager: "alpha" });
  assert.deepEqual(first.data, { owner: "alpha" });
  const again = await client.apply(CONFIG_MAPS, desired("alpha"), { fieldManager: "alpha" });
  assert.equal(
    again.metadata?.resourceVersion,
    first.metadata?.resourceVersion,
    "applying the same intent is a no-op",
  );

  const conflict = await rejection(
    client.apply(CONFIG_MAPS, desired("beta"), { fieldManager: "beta" }),
  );
  assert.ok(isConflict(conflict));
  assert.equal(conflict.status, 409);
  assert.equal(conflict.causes[0]?.reason, "FieldManagerConflict");
  assert.equal(conflict.causes[0]?.field, ".data.owner");
  assert.match(conflict.message, /conflict with "alpha"/);

  const forced = await client.apply(CONFIG_MAPS, desired("beta"), {
    fieldManager: "beta",
    force: true,
  });
  assert.deepEqual(forced.data, { owner: "beta" });
  const managers = forced.metadata?.managedFields?.map((m) => m.manager) ?? [];
  assert.ok(managers.includes("beta"));
});

Deno.test("a JSON patch with a failing test op is rejected as 422 Invalid and changes nothing", async () => {
  await using s = await scope("kc-jsonpatch");
  const { client, namespace } = s;
  await client.create(CONFIG_MAPS, configMap("guarded", { phase: "one" }), { namespace });
  const failing = [
    { op: "test", path: "/data/phase", value: "two" },
    { op: "replace", path: "/data/phase", value: "three" },
  ];
  const err = await rejection(
    client.patch(CONFIG_MAPS, "guarded", failing, { type: "json", namespace }),
  );
  assert.equal(err.status, 422);
  assert.equal(err.reason, "Invalid");
  assert.ok(isInvalid(err));
  assert.match(
    err.message,
    /^patch \/api\/v1\/namespaces\/.*\/configmaps\/guarded: .* \(422 Invalid\)$/,
  );
  assert.deepEqual((await client.get<ConfigMap>(CONFIG_MAPS, "guarded", { namespace })).data, {
    phase: "one",
  });

  const passing = [{ op: "test", path: "/data/phase", value: "one" }, {
    op: "replace",
    path: "/data/phase",
    value: "two",
  }];
  const patched = await client.patch<ConfigMap>(CONFIG_MAPS, "guarded", passing, {
    type: "json",
    namespace,
  });
  assert.deepEqual(patched.data, { phase: "two" });
});

const WIDGETS: Resource = {
  group: "test.kinglet.dev",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};

interface Widget extends KubeObject {
  spec?: { size?: number };
  status?: { phase?: string; observed?: number };
}

async function installWidgetCrd(client: KubeClient, signal: AbortSignal): Promise<void> {
  const schema = {
    type: "object",
    properties: {
      spec: { type: "object", properties: { size: { type: "integer" } } },
      status: {
        type: "object",
        properties: { phase: { type: "string" }, observed: { type: "integer" } },
      },
    },
  };
  await client.apply(CUSTOM_RESOURCE_DEFINITIONS, {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "widgets.test.kinglet.dev" },
    spec: {
      group: WIDGETS.group,
      scope: "Namespaced",
      names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: schema },
      }],
    },
  }, { fieldManager: "kinglet-tests", signal });
  for (;;) {
    const crd = await client.get(CUSTOM_RESOURCE_DEFINITIONS, "widgets.test.kinglet.dev", {
      signal,
    });
    const conditions =
      (crd.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
    if (conditions?.some((c) => c.type === "Established" && c.status === "True")) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // Established means served by the API server; the discovery of the new group can lag a little.
  for (;;) {
    try {
      await client.list(WIDGETS, { limit: 1, signal });
      return;
    } catch (e) {
      if (!isNotFound(e)) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

Deno.test("the status subresource is written separately from the main resource", async () => {
  await using s = await scope("kc-status");
  const { client, namespace } = s;
  await installWidgetCrd(client, AbortSignal.timeout(30_000));
  const created = await client.create<Widget>(WIDGETS, {
    apiVersion: "test.kinglet.dev/v1",
    kind: "Widget",
    metadata: { name: "w", namespace },
    spec: { size: 3 },
    status: { phase: "ignored on create" },
  });
  assert.equal(created.status, undefined, "status is dropped on create when the subresource is on");

  const withStatus = await client.replace<Widget>(WIDGETS, {
    ...created,
    status: { phase: "Ready", observed: 1 },
  }, {
    subresource: "status",
  });
  assert.deepEqual(withStatus.status, { phase: "Ready", observed: 1 });
  assert.equal(
    withStatus.metadata?.generation,
    created.metadata?.generation,
    "a status write does not bump generation",
  );

  const specOnly = await client.replace<Widget>(WIDGETS, {
    ...withStatus,
    spec: { size: 5 },
    status: { phase: "Hacked" },
  });
  assert.equal(specOnly.status?.phase, "Ready", "the main resource ignores status changes");
  assert.equal(specOnly.spec?.size, 5);

  const patched = await client.patch<Widget>(WIDGETS, "w", { status: { observed: 2 } }, {
    type: "merge",
    namespace,
    subresource: "status",
  });
  assert.deepEqual(patched.status, { phase: "Ready", observed: 2 });
  const applied = await client.apply<Widget>(WIDGETS, {
    apiVersion: "test.kinglet.dev/v1",
    kind: "Widget",
    metadata: { name: "w", namespace },
    status: { phase: "Degraded" },
  }, { fieldManager: "kinglet-status", subresource: "status", force: true });
  assert.equal(applied.status?.phase, "Degraded");
  assert.equal(applied.spec?.size, 5);
});

/**
 * A client of `config`, and a promise that resolves once the API server has
 * answered its first watch. The server sets a watch up before it answers, so
 * a change made after that comes after the watch's start, however slowly
 * the server got to it.
 */
function watchingClient(config: ClusterConfig) {
  const answered = Promise.withResolvers<void>();
  const client = new KubeClient(config, {
    onRequest: (o) => {
      if (o.verb === "watch") answered.resolve();
    },
  });
  return { client, answered: answered.promise };
}

async function take<T extends KubeObject>(
  events: AsyncIterable<WatchEvent<T>>,
  count: number,
): Promise<WatchEvent<T>[]> {
  const out: WatchEvent<T>[] = [];
  if (count === 0) return out;
  for await (const e of events) {
    out.push(e);
    if (out.length === count) break;
  }
  return out;
}

Deno.test("watch resumes from a resourceVersion with every change since, in order", async () => {
  await using s = await scope("kc-watch");
  const { client, namespace } = s;
  const a = await client.create(CONFIG_MAPS, configMap("a", { v: "1" }), { namespace });
  await client.create(CONFIG_MAPS, configMap("b", {}), { namespace });
  await client.patch(CONFIG_MAPS, "a", { data: { v: "2" } }, { type: "merge", namespace });
  await client.delete(CONFIG_MAPS, "b", { namespace });

  const resumed = await take(
    client.watch<ConfigMap>(CONFIG_MAPS, {
      namespace,
      labelSelector: MINE,
      resourceVersion: a.metadata?.resourceVersion ?? "",
    }),
    3,
  );
  assert.deepEqual(resumed.map((e) => [e.type, e.object.metadata?.name]), [["ADDED", "b"], [
    "MODIFIED",
    "a",
  ], ["DELETED", "b"]]);
  assert.equal(resumed[1]?.object.data?.v, "2");
});

Deno.test("watch streams the initial state ended by a bookmark where the server streams lists (a typed 422 where it does not), and the server's timeout ends it", async () => {
  await using s = await scope("kc-bookmark");
  const { client, namespace } = s;
  // Secrets, unlike ConfigMaps in the test cluster, are served from the watch
  // cache, which is what sends bookmarks.
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "s", labels: { "kinglet.dev/test": "kube-client" } },
    stringData: { k: "v" },
  };
  await client.create(SECRETS, secret, { namespace });
  const streamingList = () =>
    take(
      client.watch(SECRETS, {
        namespace,
        sendInitialEvents: true,
        resourceVersionMatch: "NotOlderThan",
      }),
      2,
    );
  let resourceVersion: string;
  if (await serverStreamsLists(client)) {
    const initial = await streamingList();
    assert.deepEqual(initial.map((e) => [e.type, e.object.metadata?.name]), [["ADDED", "s"], [
      "BOOKMARK",
      undefined,
    ]]);
    assert.equal(initial[1]?.object.metadata?.annotations?.["k8s.io/initial-events-end"], "true");
    resourceVersion = initial[1]?.object.metadata?.resourceVersion ?? "";
  } else {
    // What the watcher's fallback to paged lists relies on: a typed refusal, nothing streamed.
    await assert.rejects(
      streamingList(),
      (error) =>
        error instanceof ApiError && error.status === 422 &&
        /sendInitialEvents/.test(error.message),
    );
    const listed = await client.list(SECRETS, { namespace });
    assert.deepEqual(listed.items.map((o) => o.metadata?.name), ["s"]);
    resourceVersion = listed.metadata.resourceVersion ?? "";
  }

  // The watch cache sends a watch with a deadline one progress bookmark, about 2 s before
  // the deadline (none when the watch starts later than that), and only when the
  // resourceVersion moved on past the watch's start without an event for it: a secret
  // outside the selector, created once the server has set the watch up, does that. A
  // 15 s deadline leaves the secret some 13 s to reach the cache, on a busy machine too.
  const timeoutSeconds = 15;
  const tailing = watchingClient(s.config);
  // A server that never ended the watch fails the test instead of hanging it.
  const overdue = new AbortController();
  const guard = setTimeout(() => overdue.abort(), (timeoutSeconds + 60) * 1000);
  const started = performance.now();
  const tail: WatchEvent[] = [];
  const watching = (async () => {
    for await (
      const e of tailing.client.watch(SECRETS, {
        namespace,
        labelSelector: MINE,
        resourceVersion,
        timeoutSeconds,
        signal: overdue.signal,
      })
    ) {
      tail.push(e);
    }
  })();
  let unseen: KubeObject | undefined;
  try {
    await Promise.race([tailing.answered, watching]);
    unseen = await client.create<KubeObject>(SECRETS, {
      ...secret,
      metadata: { name: "unlabelled" },
    }, {
      namespace,
    });
    await watching;
  } finally {
    clearTimeout(guard);
    tailing.client.close();
  }
  const elapsed = performance.now() - started;
  assert.ok(
    !overdue.signal.aborted,
    `the server had not ended the watch ${timeoutSeconds + 60} s after it began`,
  );
  assert.ok(tail.length > 0, "a bookmark reports progress before the server timeout");
  for (const e of tail) {
    assert.equal(e.type, "BOOKMARK");
    assert.ok(
      Number(e.object.metadata?.resourceVersion) >= Number(unseen?.metadata?.resourceVersion),
    );
  }
  assert.ok(
    elapsed >= (timeoutSeconds - 1) * 1000,
    `the watch ended after ${elapsed} ms, before the server's timeout of ${timeoutSeconds} s`,
  );
});

Deno.test("metadata-only watch delivers PartialObjectMetadata events", async () => {
  await using s = await scope("kc-metawatch");
  const { client, namespace } = s;
  const { metadata } = await client.list(CONFIG_MAPS, { namespace });
  await client.create(CONFIG_MAPS, configMap("m", { big: "x".repeat(1000) }), { namespace });
  const [event] = await take(
    client.watch(CONFIG_MAPS, {
      namespace,
      labelSelector: MINE,
      resourceVersion: metadata.resourceVersion ?? "",
      metadataOnly: true,
    }),
    1,
  );
  assert.equal(event?.type, "ADDED");
  assert.equal(event?.object.kind, "PartialObjectMetadata");
  assert.equal(event?.object.metadata?.name, "m");
  assert.equal(event?.object.data, undefined);
});

Deno.test("a watch from a compacted resourceVersion fails with 410 Gone", async () => {
  await using s = await scope("kc-gone");
  const { client, namespace } = s;
  const { metadata } = await client.list(CONFIG_MAPS, { namespace });
  const old = metadata.resourceVersion ?? "";
  for (let i = 0; i < 5; i++) {
    await client.create(CONFIG_MAPS, configMap(`churn-${i}`, {}), { namespace });
  }
  await compactEtcd();
  const err = await rejection(
    take(client.watch(CONFIG_MAPS, { namespace, resourceVersion: old }), 1),
  );
  assert.ok(isGone(err));
  assert.equal(err.status, 410);
  assert.equal(err.reason, "Gone");
  assert.equal(err.verb, "watch");
  assert.match(err.message, /too old/);
});

Deno.test("a 403 on a token file since rewritten with a permitted token succeeds at once", async () => {
  await using s = await scope("kc-rotate");
  const { client, config, namespace } = s;
  for (const name of ["nobody", "reader"]) {
    await client.create(SERVICE_ACCOUNTS, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name },
    }, { namespace });
  }
  await client.create(ROLE_BINDINGS, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "reader-view" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
    subjects: [{ kind: "ServiceAccount", name: "reader", namespace }],
  }, { namespace });
  const reader = await serviceAccountToken(namespace, "reader");
  const asReader = new KubeClient({
    ...config,
    clientCert: undefined,
    clientKey: undefined,
    auth: staticToken(reader),
  });
  try {
    await waitFor("the reader's RoleBinding in force", async () => {
      const result = await asReader.list(CONFIG_MAPS, { namespace }).catch((e) => e);
      if (result instanceof Error && !isForbidden(result)) throw result;
      return !(result instanceof Error);
    });
  } finally {
    asReader.close();
  }
  const file = await Deno.makeTempFile({ prefix: "kinglet_token_" });
  const codes: string[] = [];
  const rotating = new KubeClient({
    ...config,
    clientCert: undefined,
    clientKey: undefined,
    // Re-read once a minute by default: longer than this test takes.
    auth: new FileTokenSource(file),
  }, { onRequest: (o) => codes.push(o.code) });
  try {
    await Deno.writeTextFile(file, await serviceAccountToken(namespace, "nobody"));
    assert.ok(isForbidden(await rejection(rotating.list(CONFIG_MAPS, { namespace }))));
    await Deno.writeTextFile(file, reader);
    await rotating.list(CONFIG_MAPS, { namespace });
    assert.deepEqual(codes, ["403", "403", "200"]);
  } finally {
    rotating.close();
    await Deno.remove(file);
  }
});

Deno.test("a wrong token is a clear 401 and a token without RBAC a clear 403", async () => {
  await using s = await scope("kc-authz");
  const { client, config, namespace } = s;
  const anonymous: ClusterConfig = {
    ...config,
    clientCert: undefined,
    clientKey: undefined,
    auth: staticToken("not-a-token"),
  };
  const wrong = new KubeClient(anonymous);
  try {
    const err = await rejection(wrong.list(CONFIG_MAPS, { namespace }));
    assert.ok(isUnauthorized(err));
    assert.match(
      err.message,
      /\(401 Unauthorized\); the bearer token was rejected even after fetching it again; check the user of /,
    );
  } finally {
    wrong.close();
  }

  await client.create(SERVICE_ACCOUNTS, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "nobody" },
  }, {
    namespace,
  });
  const nobody = new KubeClient({
    ...anonymous,
    auth: staticToken(await serviceAccountToken(namespace, "nobody")),
  });
  try {
    const err = await rejection(nobody.list(CONFIG_MAPS, { namespace }));
    assert.ok(isForbidden(err));
    assert.equal(err.status, 403);
    assert.match(
      err.message,
      new RegExp(
        `User "system:serviceaccount:${namespace}:nobody" cannot list resource "configmaps"`,
      ),
    );
  } finally {
    nobody.close();
  }
});

Deno.test("an untrusted server certificate is a TLS error, and insecure-skip-tls-verify says how Deno can skip it", async () => {
  const admin = await loadConfig({ kubeconfig: testKubeconfig() });
  const noCa = new KubeClient({ ...admin, caCert: undefined });
  try {
    const err = await noCa.list(NAMESPACES).catch((e) => e);
    assert.ok(err instanceof TransportError, `expected a TransportError, got ${err}`);
    assert.match(
      err.message,
      /^list \/api\/v1\/namespaces: cannot reach https:\/\/127\.0\.0\.1:\d+: TLS failed: .*certificate/,
    );
    assert.match(err.message, /check the certificate authority and client certificate in /);
  } finally {
    noCa.close();
  }
  const insecure = new KubeClient({ ...admin, caCert: undefined, insecureSkipTLSVerify: true });
  try {
    const err = await insecure.list(NAMESPACES).catch((e) => e);
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err}`);
    assert.match(
      err.message,
      /sets insecure-skip-tls-verify, but Deno cannot skip certificate verification for one client/,
    );
    assert.match(err.message, /--unsafely-ignore-certificate-errors=127\.0\.0\.1/);
  } finally {
    insecure.close();
  }
});

Deno.test("an exec plugin supplies the token, and runs again when the API server rejects it", async () => {
  await using s = await scope("kc-exec");
  const { client, namespace } = s;
  await client.create(SERVICE_ACCOUNTS, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "admin" },
  }, {
    namespace,
  });
  const binding = `${namespace}-admin`;
  await client.create(CLUSTER_ROLE_BINDINGS, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: binding },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
    subjects: [{ kind: "ServiceAccount", name: "admin", namespace }],
  });
  const dir = await Deno.makeTempDir({ prefix: "kinglet_exec_it_" });
  try {
    const token = await serviceAccountToken(namespace, "admin");
    // The first run prints a stale token, as a plugin with an outdated cache would.
    await Deno.writeTextFile(
      `${dir}/plugin.sh`,
      `#!/bin/sh
echo run >> "${dir}/runs"
if [ "$(grep -c run "${dir}/runs")" = 1 ]; then token=stale; else token=$(cat "${dir}/token"); fi
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$token"
`,
    );
    await Deno.chmod(`${dir}/plugin.sh`, 0o755);
    await Deno.writeTextFile(`${dir}/token`, token);
    const admin = await Deno.readTextFile(testKubeconfig());
    const server = /server: "?([^"\s]+)/.exec(admin)?.[1];
    const ca = /certificate-authority-data: "?([^"\s]+)/.exec(admin)?.[1];
    await Deno.writeTextFile(
      `${dir}/kubeconfig`,
      JSON.stringify({
        "current-context": "exec",
        clusters: [{ name: "local", cluster: { server, "certificate-authority-data": ca } }],
        users: [{
          name: "plugin",
          user: {
            exec: {
              apiVersion: "client.authentication.k8s.io/v1",
              command: "./plugin.sh",
              interactiveMode: "Never",
            },
          },
        }],
        contexts: [{ name: "exec", context: { cluster: "local", user: "plugin", namespace } }],
      }),
    );
    const execClient = new KubeClient(await loadConfig({ kubeconfig: `${dir}/kubeconfig` }));
    try {
      assert.equal(execClient.namespace, namespace);
      const namespaces = await execClient.list(NAMESPACES, {
        fieldSelector: `metadata.name=${namespace}`,
      });
      assert.deepEqual(namespaces.items.map((n) => n.metadata?.name), [namespace]);
      const runs = (await Deno.readTextFile(`${dir}/runs`)).trim().split("\n").length;
      assert.equal(runs, 2, "the 401 on the stale token made the plugin run again");
      await execClient.create(CONFIG_MAPS, configMap("by-exec", {}));
      assert.equal((await execClient.get(CONFIG_MAPS, "by-exec")).metadata?.namespace, namespace);
    } finally {
      execClient.close();
    }
  } finally {
    await client.delete(CLUSTER_ROLE_BINDINGS, binding);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("aborting a watch or a request leaves no open connection behind", async () => {
  await using s = await scope("kc-cancel");
  const { client, namespace } = s;
  await client.create(CONFIG_MAPS, configMap("one", {}), { namespace });

  const controller = new AbortController();
  const seen: string[] = [];
  for await (
    const e of client.watch(CONFIG_MAPS, {
      namespace,
      labelSelector: MINE,
      signal: controller.signal,
    })
  ) {
    seen.push(`${e.type} ${e.object.metadata?.name}`);
    controller.abort();
  }
  assert.deepEqual(seen, ["ADDED one"]);

  const idling = watchingClient(s.config);
  const idle = new AbortController();
  const waiting = (async () => {
    const events = [];
    for await (
      const e of idling.client.watch(CONFIG_MAPS, {
        namespace,
        resourceVersion: "0",
        labelSelector: "none=yet",
        allowWatchBookmarks: false,
        signal: idle.signal,
      })
    ) {
      events.push(e);
    }
    return events;
  })();
  try {
    await Promise.race([idling.answered, waiting]);
    idle.abort();
    assert.deepEqual(await waiting, [], "a watch aborted while waiting for events ends quietly");
  } finally {
    idling.client.close();
  }

  const early = new AbortController();
  early.abort(new Error("never mind"));
  await assert.rejects(client.list(CONFIG_MAPS, { namespace, signal: early.signal }), /never mind/);
});
