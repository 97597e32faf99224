/**
 * Security: what kinglet (the real CLI, under the start task's Deno
 * permissions) does when RBAC denies it a verb, what it never reveals, and
 * what those permissions keep it from doing.
 *
 * - A denied verb is an answer an operator can act on: one log line naming
 *   the verb, the resource and RBAC; `/readyz` 503 saying the same; the
 *   process stays up, and heals on its own once the verb is granted.
 * - The ServiceAccount token, the client key of a certificate kubeconfig and
 *   a DatabaseCluster's generated password appear in no log line (at debug
 *   level), Event, metric or `/debug/cache`.
 * - With `KINGLET_ALLOW_NET` narrowed to the API server and its own
 *   listeners, kinglet still reconciles, and the same flags refuse a read
 *   outside the grant and a connection to any other address.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/reliability/security_test.ts
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { V1Secret } from "@kubernetes/client-node";
import { parse } from "yaml";
import { denoFlags, grantsFromEnv } from "../../hack/_permissions.ts";
import type { KubeClient } from "../../lib/kube/client.ts";
import {
  EVENTS,
  ROLE_BINDINGS,
  ROLES,
  SECRETS,
  SERVICE_ACCOUNTS,
} from "../../lib/kube/resources.ts";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";
import { DATABASE_CLUSTERS } from "../../lib/operators/database/kind.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { kubectl, testKubeconfig } from "../_support/cluster.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";
import {
  adminClient,
  createNamespace,
  deleteNamespace,
  eventsFor,
  getOrUndefined,
  waitFor,
} from "../_support/kube.ts";
import { startOperator } from "../_support/operator.ts";
import { probe as permissionProbe } from "../_support/permission_probe.ts";
import { DEPLOY_DIR } from "../_support/service_account.ts";
import { databaseCluster, decode } from "../e2e/_database.ts";
import { converged, type WebApp } from "./_faults.ts";
import { freePort, probe, type RunningCli, stackFrames, startRun } from "./_kinglet_cli.ts";
import { figure, fixed1 } from "./_measure.ts";

/** `v1` Events, which other components still write. */
const CORE_EVENTS: Resource = {
  group: "",
  version: "v1",
  plural: "events",
  kind: "Event",
  namespaced: true,
};

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

interface Kubeconfig {
  clusters: { cluster: { server: string; "certificate-authority-data"?: string } }[];
  users: { user: { token?: string; "client-key-data"?: string } }[];
}

async function readKubeconfig(path: string): Promise<Kubeconfig> {
  return parse(await Deno.readTextFile(path)) as Kubeconfig;
}

/** deploy/clusterrole.yaml's rules, with `verb` taken away on `resource` alone when given. */
async function deployRules(without?: { resource: string; verb: string }): Promise<Rule[]> {
  const role = parse(await Deno.readTextFile(join(DEPLOY_DIR, "clusterrole.yaml"))) as {
    rules: Rule[];
  };
  if (!without) return role.rules;
  const { resource, verb } = without;
  return role.rules.flatMap((rule) => {
    if (!rule.resources.includes(resource) || !rule.verbs.includes(verb)) return [rule];
    const others = rule.resources.filter((r) => r !== resource);
    return [
      ...(others.length ? [{ ...rule, resources: others }] : []),
      { ...rule, resources: [resource], verbs: rule.verbs.filter((v) => v !== verb) },
    ];
  });
}

/** Writes a kubeconfig for the test cluster authenticating with `token` into `dir`. */
async function writeTokenKubeconfig(dir: string, user: string, token: string): Promise<string> {
  const { cluster } = (await readKubeconfig(testKubeconfig())).clusters[0]!;
  const path = join(dir, "config");
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": user,
      clusters: [{ name: "test", cluster }],
      users: [{ name: user, user: { token } }],
      contexts: [{ name: user, context: { cluster: "test", user } }],
    }),
    { mode: 0o600 },
  );
  return path;
}

/** Writes a kubeconfig for ServiceAccount `namespace/name` with a fresh token into `dir`. */
async function tokenKubeconfig(dir: string, namespace: string, name: string): Promise<string> {
  const token = await kubectl(["create", "token", name, "--namespace", namespace]);
  assert.equal(token.code, 0, token.stderr);
  const user = `system:serviceaccount:${namespace}:${name}`;
  return await writeTokenKubeconfig(dir, user, token.stdout.trim());
}

function webApp(namespace: string, name: string): KubeObject {
  return {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    metadata: { name, namespace },
    spec: { image: "nginx:1.27", replicas: 1 },
  };
}

function readyWebApp(client: KubeClient, namespace: string, name: string): Promise<WebApp> {
  return waitFor(`WebApp ${name} Ready`, async () => {
    const app = await client.get<WebApp>(WEB_APPS, name, { namespace });
    return converged(app) && app;
  });
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The log records of `cli` whose message matches `pattern`. */
function records(
  cli: RunningCli,
  pattern: RegExp,
): { level: string; message: string; properties: Record<string, string> }[] {
  return cli.output().split("\n").filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line)).filter((r) => pattern.test(r.message));
}

Deno.test("a denied verb gives a clear error and /readyz false, not a crash loop, and heals once granted", async () => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "sec-rbac");
  const dir = await Deno.makeTempDir({ prefix: "kinglet_denied_" });
  const name = "kinglet-denied";
  try {
    // A Role in the one namespace kinglet watches holds what deploy/clusterrole.yaml grants, as
    // an install with --namespace binds it, but for `watch` on webapps. Namespaced, so deleting
    // the namespace removes every trace.
    await client.create(SERVICE_ACCOUNTS, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name, namespace: ns },
    });
    await client.create(ROLES, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name, namespace: ns },
      rules: await deployRules({ resource: "webapps", verb: "watch" }),
    });
    await client.create(ROLE_BINDINGS, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name, namespace: ns },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [{ kind: "ServiceAccount", name, namespace: ns }],
    });
    const kubeconfig = await tokenKubeconfig(dir, ns, name);
    const started = performance.now();
    await using cli = await startRun(
      ["--kubeconfig", kubeconfig, "--controllers=webapp", `--namespace=${ns}`],
      { env: { KINGLET_ALLOW_READ: dir } },
    );
    const failure = /^Watcher of .*webapps.* failed/;
    await cli.waitForLine(/"message":"Watcher of .*webapps.* failed/);
    const logMs = performance.now() - started;
    const [first] = records(cli, failure);
    assert.equal(first?.level, "ERROR");
    assert.match(
      first.properties.error ?? "",
      new RegExp(
        `^watch /apis/kinglet\\.dev/v1alpha1/namespaces/${ns}/webapps: .*forbidden: ` +
          `User "system:serviceaccount:${ns}:${name}" cannot watch resource "webapps" ` +
          `in API group "kinglet\\.dev".* \\(403 Forbidden\\); RBAC does not grant this to the ` +
          `user of ${escape(kubeconfig)} .*; grant the verb on the resource named above ` +
          "\\(deploy/clusterrole\\.yaml lists what kinglet needs\\)$",
      ),
    );
    // Long enough for several retries: the process must still be there.
    await new Promise((r) => setTimeout(r, 4_000));
    assert.equal(cli.exited(), false, `kinglet exited:\n${cli.output()}`);
    assert.equal((await probe(`${cli.healthUrl}/healthz`)).status, 200);
    const ready = await probe(`${cli.healthUrl}/readyz`);
    assert.equal(ready.status, 503);
    assert.match(ready.body, /^not ready:\nwebapps: not synced: watch .*forbidden.*RBAC/m);
    assert.deepEqual(stackFrames(cli.output()), [], "no stack trace");
    const attempts = records(cli, failure).length;
    const deniedMs = performance.now() - started;

    const granted = performance.now();
    await client.patch(ROLES, name, { rules: await deployRules() }, {
      type: "merge",
      namespace: ns,
    });
    await waitFor("/readyz 200 once watch is granted", async () => {
      return (await probe(`${cli.healthUrl}/readyz`)).status === 200;
    }, 90_000);
    const healMs = performance.now() - granted;
    assert.equal(cli.exited(), false, "the same process recovered, not a restarted one");
    await client.create(WEB_APPS, webApp(ns, "after-grant"));
    await readyWebApp(client, ns, "after-grant");
    assert.equal(await cli.stop(), 0, "SIGTERM still exits 0");
    assert.deepEqual(stackFrames(cli.output()), []);
    figure(
      `denied watch on webapps: forbidden (with the RBAC hint) logged ${
        fixed1(logMs / 1000)
      } s after spawn; ${attempts} failed attempts in ${fixed1(deniedMs / 1000)} s up ` +
        "(backoff with jitter), /healthz 200, /readyz 503 naming webapps and forbidden; " +
        `/readyz 200 ${fixed1(healMs / 1000)} s after the grant, same process`,
    );
  } finally {
    await deleteNamespace(client, ns);
    await Deno.remove(dir, { recursive: true });
    client.close();
  }
});

/** Everything kinglet publishes about what it does, as text. */
async function publishedText(
  client: KubeClient,
  operator: { log(): Promise<string>; metricsUrl: string; healthUrl: string },
  namespace: string,
): Promise<Record<string, string>> {
  const body = async (url: string) => (await probe(url)).body;
  return {
    "the log": await operator.log(),
    "events.k8s.io Events": JSON.stringify(await client.list(EVENTS, { namespace })),
    "v1 Events": JSON.stringify(await client.list(CORE_EVENTS, { namespace })),
    "/metrics": await body(`${operator.metricsUrl}/metrics`),
    "/debug/cache": await body(`${operator.metricsUrl}/debug/cache`),
    "/readyz": await body(`${operator.healthUrl}/readyz`),
    "the DatabaseCluster's status": JSON.stringify(
      (await client.get(DATABASE_CLUSTERS, "orders", { namespace })).status,
    ),
  };
}

/**
 * Runs kinglet (every controller, debug log) on `kubeconfig`, has it create a
 * DatabaseCluster's credentials, and returns which of `credentials` (and the
 * generated password) it published anywhere, with what it searched.
 */
async function searchPublished(
  client: KubeClient,
  kubeconfig: string,
  credentials: Record<string, string>,
): Promise<{ found: string[]; searched: Record<string, string> }> {
  const ns = await createNamespace(client, "sec-leak");
  await using operator = await startOperator({
    kubeconfig,
    args: [`--namespace=${ns}`, "--log-level=debug"],
  });
  try {
    await operator.ready();
    await client.create(
      DATABASE_CLUSTERS,
      databaseCluster(ns, "orders", {
        engine: "postgres",
        version: "17",
        storage: { size: "1Gi" },
      }),
    );
    await client.create(WEB_APPS, webApp(ns, "shop"));
    const secret = await waitFor(
      "the credentials Secret",
      () => getOrUndefined<V1Secret & KubeObject>(client, SECRETS, "orders-credentials", ns),
    );
    await waitFor(
      "the CredentialsCreated Event",
      async () => (await eventsFor(client, ns, "orders", "CredentialsCreated")).length > 0,
    );
    await readyWebApp(client, ns, "shop");
    const password = decode(secret, "password");
    const secrets = {
      ...credentials,
      "the password": password,
      "the password's base64": secret.data?.password ?? "",
    };
    const searched = await publishedText(client, operator, ns);
    // What was searched is the real thing: the log of a run with the DatabaseCluster controller.
    assert.match(searched["the log"]!, /"logger":"kinglet\.controller\.databasecluster"/);
    assert.match(searched["events.k8s.io Events"]!, /"reason":"CredentialsCreated"/);
    const found: string[] = [];
    for (const [what, value] of Object.entries(secrets)) {
      // Long enough that a chance match is impossible, and not empty (which every text contains).
      assert.ok(value.length >= 24, `${what} has ${value.length} characters`);
      for (const [where, text] of Object.entries(searched)) {
        if (text.includes(value)) found.push(`${what} in ${where}`);
      }
    }
    return { found, searched };
  } finally {
    // The DatabaseCluster's finalizer needs the operator: delete the namespace while it runs.
    await deleteNamespace(client, ns);
  }
}

Deno.test("tokens, client keys and database credentials never appear in logs, Events, metrics or /debug/cache", async (t) => {
  const client = await adminClient();
  await installCrdsOnce(client);
  try {
    await t.step("with a ServiceAccount token", async () => {
      const kubeconfig = await operatorKubeconfig();
      const token = (await readKubeconfig(kubeconfig)).users[0]?.user.token ?? "";
      // The signature is what makes the token a credential; its start is caught even if cut short.
      const signature = token.split(".")[2] ?? "";
      const { found, searched } = await searchPublished(client, kubeconfig, {
        "the token": token,
        "the token's signature": signature,
        "the start of the token's signature": signature.slice(0, 32),
      });
      assert.deepEqual(found, []);
      figure(
        `no secret published (ServiceAccount token): token of ${token.length} characters and the ` +
          `DatabaseCluster password searched in ${describe(searched)}: found 0 times`,
      );
    });

    await t.step("with a client certificate and key", async () => {
      const kubeconfig = testKubeconfig();
      const keyData = (await readKubeconfig(kubeconfig)).users[0]?.user["client-key-data"] ?? "";
      const pem = new TextDecoder().decode(Uint8Array.from(atob(keyData), (c) => c.charCodeAt(0)));
      // Every full line of the key's PEM body (the last one may be too short to search for).
      const body = pem.split("\n").filter((line) => line.length >= 24 && !line.startsWith("-----"));
      assert.ok(body.length >= 2, `the client key's PEM has ${body.length} full lines`);
      const { found, searched } = await searchPublished(client, kubeconfig, {
        ...Object.fromEntries(
          body.map((line, i) => [`line ${i + 1} of the client key's PEM`, line]),
        ),
        "the client key's base64": keyData.slice(keyData.length / 2 - 32, keyData.length / 2 + 32),
      });
      assert.deepEqual(found, []);
      figure(
        `no secret published (client certificate): each of the ${body.length} lines of the key's ` +
          "PEM, its kubeconfig base64 and the DatabaseCluster password searched in " +
          `${describe(searched)}: found 0 times`,
      );
    });

    await t.step("with a token the API server rejects", async () => {
      const dir = await Deno.makeTempDir({ prefix: "kinglet_rejected_" });
      try {
        const token = `${crypto.randomUUID()}${crypto.randomUUID()}`.replaceAll("-", "");
        const kubeconfig = await writeTokenKubeconfig(dir, "rejected", token);
        await using operator = await startOperator({
          kubeconfig,
          args: ["--namespace=default", "--controllers=webapp", "--log-level=debug"],
        });
        // The failure is reported (twice: the token is fetched again after a first 401) ...
        await waitFor(
          "the 401 in the log",
          async () => /401 Unauthorized/.test(await operator.log()),
        );
        const body = async (url: string) => (await probe(url)).body;
        const searched: Record<string, string> = {
          "the log": await operator.log(),
          "/readyz": await body(`${operator.healthUrl}/readyz`),
          "/metrics": await body(`${operator.metricsUrl}/metrics`),
          "/debug/cache": await body(`${operator.metricsUrl}/debug/cache`),
        };
        assert.match(searched["/readyz"]!, /401 Unauthorized.*bearer token was rejected/);
        // ... and the token is not.
        assert.ok(token.length >= 24);
        const found = Object.entries(searched).filter(([, text]) => text.includes(token));
        assert.deepEqual(found.map(([where]) => where), []);
        figure(
          `no secret published (rejected token): a ${token.length}-character token the API ` +
            `server answers 401 searched in ${searched["the log"]!.split("\n").length} log ` +
            "lines at debug, /readyz (which names the 401), /metrics and /debug/cache: found 0 times",
        );
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    });
  } finally {
    client.close();
  }
});

function describe(searched: Record<string, string>): string {
  const lines = searched["the log"]!.split("\n").length;
  const events = (JSON.parse(searched["events.k8s.io Events"]!) as { items: unknown[] }).items;
  return `${lines} log lines at debug, ${events.length} Events, ` +
    `${searched["/metrics"]!.length} bytes of /metrics and ` +
    `${searched["/debug/cache"]!.length} of /debug/cache`;
}

Deno.test("the start task's permissions keep kinglet from reading an arbitrary file or connecting to an unlisted host", async () => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "sec-perm");
  const kubeconfig = await operatorKubeconfig();
  const api = new URL((await readKubeconfig(kubeconfig)).clusters[0]!.cluster.server).host;
  const [metricsPort, healthPort] = [freePort(), freePort()];
  const env = {
    KINGLET_ALLOW_READ: kubeconfig,
    KINGLET_ALLOW_NET: [api, `127.0.0.1:${metricsPort}`, `127.0.0.1:${healthPort}`].join(","),
  };
  const outside = await Deno.makeTempDir({ prefix: "kinglet_outside_" });
  const secretFile = join(outside, "secret.txt");
  await Deno.writeTextFile(secretFile, "not for kinglet\n");
  // Something listens there, so only the permission can refuse the connection.
  const unlisted = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const started = performance.now();
    // The listeners on the ports the grant names: these flags come after startRun's own and win.
    await using cli = await startRun([
      "--kubeconfig",
      kubeconfig,
      "--controllers=webapp",
      `--namespace=${ns}`,
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      `--health-probe-bind-address=127.0.0.1:${healthPort}`,
    ], { env });
    await waitFor("kinglet ready under the narrowed grants", async () => {
      assert.equal(cli.exited(), false, `kinglet exited:\n${cli.output()}`);
      return (await probe(`http://127.0.0.1:${healthPort}/readyz`)).status === 200;
    });
    await client.create(WEB_APPS, webApp(ns, "confined"));
    await readyWebApp(client, ns, "confined");
    const readyMs = performance.now() - started;
    assert.equal((await probe(`http://127.0.0.1:${metricsPort}/metrics`)).status, 200);
    assert.doesNotMatch(cli.output(), /may not|NotCapable|PermissionDenied/);
    assert.equal(await cli.stop(), 0);

    const flags = denoFlags(grantsFromEnv(env));
    assert.ok(flags.includes(`--allow-net=${env.KINGLET_ALLOW_NET}`), flags.join(" "));
    // The probe works under these flags: what is granted succeeds.
    assert.equal((await permissionProbe(flags, ["read", kubeconfig])).ok, true);
    assert.equal((await permissionProbe(flags, ["connect", api])).ok, true);
    const attempts = [
      { what: "read /etc/hostname", operation: "read", target: "/etc/hostname" },
      { what: "read a file outside the grant", operation: "read", target: secretFile },
      {
        what: "connect to another loopback port",
        operation: "connect",
        target: `127.0.0.1:${unlisted.addr.port}`,
      },
      { what: "connect to 10.0.0.1:443", operation: "connect", target: "10.0.0.1:443" },
    ];
    for (const { what, operation, target } of attempts) {
      const result = await permissionProbe(flags, [operation, target]);
      assert.equal(result.ok, undefined, `${what} was allowed`);
      assert.match(result.error ?? "", /^(NotCapable|PermissionDenied): /, what);
      assert.match(result.explanation ?? "", /^kinglet may not (read|connect to or listen on) /);
    }
    figure(
      `start task's grants with KINGLET_ALLOW_NET=<API server>,<metrics>,<probes>: a WebApp ` +
        `Ready ${fixed1(readyMs / 1000)} s after spawn; under the same flags ` +
        `${attempts.map((a) => a.what).join(", ")}: each denied (NotCapable)`,
    );
  } finally {
    unlisted.close();
    await Deno.remove(outside, { recursive: true });
    await deleteNamespace(client, ns);
    client.close();
  }
});
