import assert from "node:assert/strict";
import {
  assertNoDenials,
  type Denial,
  DenialRecorder,
  denialsInLog,
  describeDenial,
} from "../../lib/testing/denials.ts";
import type { RequestObservation } from "../../lib/kube/client.ts";

/** The message kube-apiserver's RBAC authorizer answers a denied request with. */
function forbidden(verb: string, resource: string, group: string, namespace?: string): string {
  const scope = namespace === undefined
    ? "at the cluster scope"
    : `in the namespace "${namespace}"`;
  return `${resource} "x" is forbidden: User "system:serviceaccount:shop:op" cannot ${verb} ` +
    `resource "${resource}" in API group "${group}" ${scope}`;
}

function messageOf(run: () => void): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected a failure");
}

function observation(code: string, extra: Partial<RequestObservation> = {}): RequestObservation {
  return {
    verb: "get",
    method: "GET",
    code,
    host: "127.0.0.1:6443",
    path: "/api/v1/namespaces/shop/persistentvolumeclaims/data",
    target: { group: "", resource: "persistentvolumeclaims", namespace: "shop", name: "data" },
    seconds: 0.01,
    ...extra,
  };
}

Deno.test("denialsInLog reads the API server's sentence from text logs", () => {
  const log = [
    "INFO controller backup-operator: caches synced; starting reconciles",
    `ERROR reconcile of shop/nightly failed, retry 1: get /api/v1/namespaces/shop/persistentvolumeclaims/data: ${
      forbidden("get", "persistentvolumeclaims", "", "shop")
    } (403 Forbidden); RBAC does not grant this`,
    `ERROR Watcher of backups failed: ${
      forbidden("list", "backups", "example.com")
    } (403 Forbidden)`,
  ].join("\n");
  assert.deepEqual(denialsInLog(log), [
    { verb: "get", group: "", resource: "persistentvolumeclaims", namespace: "shop" },
    { verb: "list", group: "example.com", resource: "backups" },
  ]);
});

Deno.test("denialsInLog reads JSON lines, whose quotes are escaped once or twice", () => {
  const error = `get /apis/events.k8s.io/v1/namespaces/shop/events: ${
    forbidden("create", "events", "events.k8s.io", "shop")
  } (403 Forbidden)`;
  // As kinglet's JSON lines log an error: quoted in the message, and as a property.
  const line = JSON.stringify({
    level: "WARN",
    message: `Could not record event: ${JSON.stringify(error)}`,
    properties: { error },
  });
  assert.match(line, /User \\\\\\"system/);
  const denial = { verb: "create", group: "events.k8s.io", resource: "events", namespace: "shop" };
  assert.deepEqual(denialsInLog(`${line}\n${line}\n`), [denial, denial]);
});

Deno.test("denialsInLog counts a write RBAC allowed and an ownership policy refused, naming it", () => {
  const refusal = 'patch /api/v1/namespaces/kube-system: namespaces \\"kube-system\\" is ' +
    "forbidden: ValidatingAdmissionPolicy 'op-owned-only' with binding 'op-owned-only' denied " +
    "request: op may not change namespaces kube-system: it is not owned by op (403 Forbidden)";
  const deleted = "delete /apis/networking.k8s.io/v1/namespaces/team/networkpolicies/web: " +
    'networkpolicies.networking.k8s.io "web" is forbidden: ValidatingAdmissionPolicy ' +
    "'op-owned-only' with binding 'op-owned-only' denied request: op may not delete (403 Forbidden)";
  const log = [
    `{"level":"error","message":"reconcile of site failed: ${refusal}"}`,
    `ERROR reconcile of team/web failed, retry 1: ${deleted}`,
  ].join("\n");
  const denials = denialsInLog(log);
  assert.deepEqual(denials, [
    { verb: "patch", group: "", resource: "namespaces", policy: "op-owned-only" },
    {
      verb: "delete",
      group: "networking.k8s.io",
      resource: "networkpolicies",
      namespace: "team",
      policy: "op-owned-only",
    },
  ]);
  assert.equal(
    describeDenial(denials[1]!),
    "delete networkpolicies.networking.k8s.io (namespace team, refused by " +
      "ValidatingAdmissionPolicy op-owned-only)",
  );
});

Deno.test("denialsInLog finds nothing in a log without denials", () => {
  assert.deepEqual(denialsInLog("INFO all good\nERROR get x: not found (404 NotFound)"), []);
});

Deno.test("describeDenial names verb, resource with its group and subresource, and scope", () => {
  const cases: [Denial, string][] = [
    [
      { verb: "get", group: "", resource: "persistentvolumeclaims", namespace: "shop" },
      "get persistentvolumeclaims (namespace shop)",
    ],
    [{
      verb: "patch",
      group: "example.com",
      resource: "backups/status",
      namespace: "shop",
      name: "n",
    }, "patch backups.example.com/status (namespace shop)"],
    [
      { verb: "list", group: "apps", resource: "deployments" },
      "list deployments.apps (cluster scope)",
    ],
  ];
  for (const [denial, line] of cases) assert.equal(describeDenial(denial), line);
});

Deno.test("assertNoDenials passes on none and lists each distinct denial once, with its count", () => {
  assertNoDenials([]);
  const pvc: Denial = {
    verb: "get",
    group: "",
    resource: "persistentvolumeclaims",
    namespace: "a",
  };
  const status: Denial = {
    verb: "patch",
    group: "x.io",
    resource: "things/status",
    namespace: "a",
  };
  const message = messageOf(() => assertNoDenials([pvc, status, pvc, pvc], "the Backup operator"));
  assert.match(message, /^The API server denied the Backup operator 4 requests \(403 Forbidden\)/);
  assert.match(message, /^- get persistentvolumeclaims \(namespace a\) ×3$/m);
  assert.match(message, /^- patch things\.x\.io\/status \(namespace a\)$/m);
  assert.match(message, /`rbac`/);
});

Deno.test("a DenialRecorder keeps the 403s a client observes, and only those", () => {
  const recorder = new DenialRecorder();
  recorder.observe(observation("200"));
  recorder.observe(observation("404"));
  recorder.observe(observation("<error>"));
  recorder.assertNone();
  recorder.observe(observation("403"));
  recorder.observe(observation("403", { verb: "get", path: "/version", target: undefined }));
  assert.deepEqual(recorder.denials, [
    { verb: "get", group: "", resource: "persistentvolumeclaims", namespace: "shop", name: "data" },
    { verb: "get", group: "", resource: "/version" },
  ]);
  const message = messageOf(() => recorder.assertNone("op"));
  assert.match(message, /denied op 2 requests/);
  assert.match(message, /^- get persistentvolumeclaims \(namespace shop\)$/m);
});
