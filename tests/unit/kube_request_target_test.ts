import assert from "node:assert/strict";
import { KubeClient, type RequestObservation } from "../../lib/kube/client.ts";
import { requestTarget } from "../../lib/kube/_request_target.ts";
import { CONFIG_MAPS, NAMESPACES, NODES, resourcePath } from "../../lib/kube/resources.ts";
import type { Resource } from "../../lib/kube/types.ts";
import type { TokenSource } from "../../lib/kube/token_source.ts";

const BACKUPS: Resource = {
  group: "example.com",
  version: "v1",
  plural: "backups",
  kind: "Backup",
  namespaced: true,
};

Deno.test("requestTarget reads group, resource, namespace and name as RBAC does", () => {
  const cases: [string, ReturnType<typeof requestTarget>][] = [
    ["/api/v1/namespaces/shop/configmaps", {
      group: "",
      resource: "configmaps",
      namespace: "shop",
    }],
    ["/api/v1/namespaces/shop/configmaps/plan", {
      group: "",
      resource: "configmaps",
      namespace: "shop",
      name: "plan",
    }],
    ["/apis/example.com/v1/namespaces/shop/backups/nightly/status", {
      group: "example.com",
      resource: "backups/status",
      namespace: "shop",
      name: "nightly",
    }],
    ["/apis/example.com/v1/backups", { group: "example.com", resource: "backups" }],
    ["/api/v1/nodes/edge-1/status", { group: "", resource: "nodes/status", name: "edge-1" }],
    ["/api/v1/namespaces", { group: "", resource: "namespaces" }],
    ["/api/v1/namespaces/shop", {
      group: "",
      resource: "namespaces",
      namespace: "shop",
      name: "shop",
    }],
    ["/api/v1/namespaces/shop/finalize", {
      group: "",
      resource: "namespaces/finalize",
      namespace: "shop",
      name: "shop",
    }],
    ["/api/v1/namespaces/shop/serviceaccounts/op/token?x=1", {
      group: "",
      resource: "serviceaccounts/token",
      namespace: "shop",
      name: "op",
    }],
    ["/api/v1/namespaces/a%20b/configmaps/c%2Fd", {
      group: "",
      resource: "configmaps",
      namespace: "a b",
      name: "c/d",
    }],
  ];
  for (const [path, expected] of cases) assert.deepEqual(requestTarget(path), expected, path);
});

Deno.test("requestTarget is undefined outside the resource API", () => {
  for (const path of ["/", "/api", "/api/v1", "/apis", "/apis/apps", "/version", "/openapi/v3"]) {
    assert.equal(requestTarget(path), undefined, path);
  }
});

Deno.test("requestTarget inverts resourcePath", () => {
  const paths: [Resource, Parameters<typeof resourcePath>[1]][] = [
    [BACKUPS, { namespace: "shop", name: "nightly", subresource: "finalizers" }],
    [CONFIG_MAPS, {}],
    [NODES, { name: "edge-1" }],
    [NAMESPACES, { name: "shop", subresource: "status" }],
  ];
  for (const [resource, options = {}] of paths) {
    const target = requestTarget(resourcePath(resource, options));
    const plural = resource.plural + (options.subresource ? `/${options.subresource}` : "");
    assert.equal(target?.group, resource.group);
    assert.equal(target?.resource, plural);
    assert.equal(target?.name, options.name);
  }
});

Deno.test("a 403 is observed with the path and the resource it was denied on", async () => {
  const observed: RequestObservation[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
    Response.json({
      kind: "Status",
      code: 403,
      reason: "Forbidden",
      message: 'backups.example.com "nightly" is forbidden',
    }, { status: 403 }));
  const noToken: TokenSource = { token: () => Promise.resolve(undefined), invalidate() {} };
  const client = new KubeClient(
    {
      server: `http://127.0.0.1:${server.addr.port}`,
      auth: noToken,
      namespace: "shop",
      source: "t",
    },
    { onRequest: (o) => observed.push(o) },
  );
  try {
    await assert.rejects(
      client.patch(BACKUPS, "nightly", { status: {} }, { type: "merge", subresource: "status" }),
      /403 Forbidden/,
    );
  } finally {
    client.close();
    await server.shutdown();
  }
  assert.equal(observed.length, 1);
  assert.equal(observed[0]?.code, "403");
  assert.equal(observed[0]?.verb, "patch");
  assert.equal(observed[0]?.path, "/apis/example.com/v1/namespaces/shop/backups/nightly/status");
  assert.deepEqual(observed[0]?.target, {
    group: "example.com",
    resource: "backups/status",
    namespace: "shop",
    name: "nightly",
  });
});

Deno.test("a 403 points at RBAC only when RBAC refused, not when an admission policy did", async () => {
  const messages = [
    'backups.example.com "nightly" is forbidden: User "system:serviceaccount:shop:op" cannot ' +
    'patch resource "backups" in API group "example.com" in the namespace "shop"',
    "backups.example.com \"nightly\" is forbidden: ValidatingAdmissionPolicy 'op-owned-only' " +
    "with binding 'op-owned-only' denied request: op may not change backups shop/nightly",
  ];
  let next = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
    Response.json({
      kind: "Status",
      code: 403,
      reason: "Forbidden",
      message: messages[next++],
    }, { status: 403 }));
  const noToken: TokenSource = { token: () => Promise.resolve(undefined), invalidate() {} };
  const client = new KubeClient({
    server: `http://127.0.0.1:${server.addr.port}`,
    auth: noToken,
    namespace: "shop",
    source: "t",
  });
  const patch = () => client.patch(BACKUPS, "nightly", { spec: {} }, { type: "merge" });
  try {
    await assert.rejects(patch(), /cannot patch .*; RBAC does not grant this to the user of t/);
    await assert.rejects(patch(), (error: Error) => {
      assert.match(error.message, /denied request: op may not change backups shop\/nightly/);
      assert.doesNotMatch(error.message, /RBAC/);
      return true;
    });
  } finally {
    client.close();
    await server.shutdown();
  }
});
