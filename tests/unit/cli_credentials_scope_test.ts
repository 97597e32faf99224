/**
 * A run wider than its credentials is refused at start, naming the command
 * that fixes it; a 403 that the authorizer's lag explains is asked again;
 * an install the API server refuses says it takes an admin kubeconfig.
 * (tests/integration/node_credentials_test.ts runs both on the control plane.)
 */
import assert from "node:assert/strict";
import { FakeClock } from "../../lib/async/clock.ts";
import { checkCredentialsScope, ScopeError } from "../../lib/cli/credentials_scope.ts";
import { join } from "node:path";
import { installDenied, installNodeCredentials } from "../../lib/cli/node_credentials.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { ApiError } from "../../lib/kube/errors.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";

const SOURCE = "/var/lib/kinglet/kubeconfig";

/** A client whose lists are allowed in `allowed` namespaces (`""`: across the cluster) only. */
function clientAllowing(allowed: readonly string[], asked: string[] = []) {
  return {
    list: (_: unknown, options?: { namespace?: string }) => {
      const namespace = options?.namespace ?? "";
      asked.push(namespace);
      if (allowed.includes(namespace)) return Promise.resolve({ items: [] } as never);
      return Promise.reject(
        new ApiError({ status: 403, message: "forbidden", verb: "list", path: `/${namespace}` }),
      );
    },
  };
}

/** Runs the check on a fake clock, stepping it through the grace; resolves to what it threw. */
async function check(
  client: ReturnType<typeof clientAllowing>,
  options: { namespace?: string; context: string },
): Promise<unknown> {
  const clock = new FakeClock();
  const result = checkCredentialsScope(client, WEB_APPS, {
    ...(options.namespace && { namespace: options.namespace }),
    config: { source: SOURCE, namespace: options.context },
    clock,
  }).then(() => undefined, (error) => error);
  await clock.advance(15_000);
  return await result;
}

Deno.test("a run of every namespace from credentials made for team-a is refused, naming team-a and both fixes", async () => {
  const error = await check(clientAllowing(["team-a"]), { context: "team-a" });
  assert.ok(error instanceof ScopeError, String(error));
  assert.equal(error.exitCode, 2);
  assert.equal(
    error.message,
    `kinglet run watches every namespace, but the credentials of ${SOURCE} may not list ` +
      "webapps.kinglet.dev across the cluster (403): they serve the namespace team-a only " +
      "(install --namespace team-a). Run kinglet with --namespace team-a " +
      "(KINGLET_NAMESPACE=team-a in /etc/kinglet/kinglet.env), or grant every namespace: " +
      "kinglet install --kubeconfig <admin kubeconfig> --node-kubeconfig <path> (in node mode, " +
      "systemctl start kinglet-credentials, then systemctl restart kinglet)",
  );
});

Deno.test("a run of a namespace its credentials do not serve is refused with the install that grants it", async () => {
  const error = await check(clientAllowing([]), { namespace: "team-b", context: "kinglet-system" });
  assert.ok(error instanceof ScopeError, String(error));
  assert.match(
    error.message,
    /^kinglet run watches the namespace team-b, but .* may not list webapps\.kinglet\.dev in team-b \(403\): grant the namespace team-b with kinglet install --kubeconfig <admin kubeconfig> --node-kubeconfig <path> --namespace team-b /,
  );
});

Deno.test("a 403 is asked again through the authorizer's lag, and a run its credentials serve starts", async () => {
  const asked: string[] = [];
  let allowedAfter = 3;
  const lagging = {
    list: (...args: Parameters<ReturnType<typeof clientAllowing>["list"]>) =>
      --allowedAfter > 0 ? clientAllowing([], asked).list(...args) : Promise.resolve({} as never),
  };
  assert.equal(await check(lagging, { context: "team-a" }), undefined);
  assert.deepEqual(asked, ["", ""]);
  assert.equal(await check(clientAllowing([""]), { context: "default" }), undefined);
  assert.equal(
    await check(clientAllowing(["team-a"]), { namespace: "team-a", context: "team-a" }),
    undefined,
  );
});

Deno.test("any answer but a 403 is left to the watchers", async () => {
  const down = {
    list: () =>
      Promise.reject(new ApiError({ status: 404, message: "no", verb: "list", path: "/" })),
  };
  const error = await check(down, { context: "default" });
  assert.ok(error instanceof ApiError && error.status === 404);
});

Deno.test("install refused with kinglet's own kubeconfig says it takes an admin kubeconfig, not more RBAC", () => {
  const refused = new ApiError({
    status: 403,
    message: 'customresourcedefinitions.apiextensions.k8s.io "webapps.kinglet.dev" is forbidden: ' +
      'User "system:serviceaccount:kinglet-system:kinglet" cannot patch resource ' +
      '"customresourcedefinitions"',
    verb: "PATCH",
    path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/webapps.kinglet.dev",
    hint: "RBAC does not grant this to the user of /n/kubeconfig; grant the verb on the " +
      "resource named above (deploy/clusterrole.yaml lists what kinglet needs)",
  });
  const error = installDenied(refused, "/n/kubeconfig");
  assert.equal(error.exitCode, 2);
  assert.doesNotMatch(error.message, /clusterrole\.yaml/);
  assert.match(
    error.message,
    /^install was refused: PATCH \/apis\/.* \(403 Forbidden\)\. Install applies CRDs, a ServiceAccount and RBAC, which takes an admin, and \/n\/kubeconfig holds the ServiceAccount kinglet-system\/kinglet's own credentials \(what install --node-kubeconfig writes\), not an admin's: run install with --kubeconfig <an admin kubeconfig> \(on a k3s server, \/etc\/rancher\/k3s\/k3s\.yaml\)$/,
  );
  const other = installDenied(
    new ApiError({ status: 403, message: 'User "bob" cannot', verb: "PATCH", path: "/x" }),
    "/home/bob/.kube/config",
  );
  assert.match(other.message, /and the user of \/home\/bob\/\.kube\/config may not do that: run/);
});

Deno.test("install --namespace names the namespace its rights serve in the kubeconfig's context, where a run looks for it", async () => {
  const client = {
    apply: (_: unknown, object: unknown) => Promise.resolve(object as never),
    requestToken: () =>
      Promise.resolve({ token: "t", expirationTimestamp: "2030-01-01T00:00:00Z" }),
  };
  const dir = await Deno.makeTempDir({ prefix: "kinglet_scope_" });
  try {
    const context = async (watchNamespace?: string) => {
      const path = join(dir, watchNamespace ?? "wide", "kubeconfig");
      await installNodeCredentials(client, { server: "https://10.0.0.1:6443" }, {
        path,
        ...(watchNamespace && { watchNamespace }),
      });
      return (await loadConfig({ kubeconfig: path })).namespace;
    };
    assert.equal(await context("team-a"), "team-a");
    assert.equal(await context(), "kinglet-system");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
