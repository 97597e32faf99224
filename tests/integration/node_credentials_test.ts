/**
 * Node mode with kinglet's own rights: `kinglet install --node-kubeconfig`
 * (the command line users run, under its permissions) applies kinglet's
 * ServiceAccount and RBAC and writes a kubeconfig and token; kinglet run from
 * that kubeconfig converges and picks up a renewed token without a restart.
 * What the kubeconfig may list, watch, get and apply is pinned request by
 * request for both installs, cluster-wide and `--namespace` (the claims of
 * docs/node-mode.md, "What each install grants"). The tests share one
 * ServiceAccount, so they run in order and each waits for its own RBAC.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/node_credentials_test.ts
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { ApiError } from "../../lib/kube/errors.ts";
import {
  DEPLOYMENTS,
  LEASES,
  NAMESPACES,
  PERSISTENT_VOLUME_CLAIMS,
  SECRETS,
} from "../../lib/kube/resources.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { testKubeconfig } from "../_support/cluster.ts";
import { installCrdsOnce } from "../_support/crds.ts";
import {
  adminClient,
  condition,
  createNamespace,
  deleteNamespace,
  getOrUndefined,
  waitFor,
} from "../_support/kube.ts";
import { startOperator } from "../_support/operator.ts";
import { runToExit } from "../reliability/_kinglet_cli.ts";

/** Runs `kinglet install --node-kubeconfig` into `dir`, with `args` after its own. */
async function install(dir: string, args: readonly string[] = [], lifetime = "1h") {
  const kubeconfig = join(dir, "kubeconfig");
  const result = await runToExit(
    [
      "install",
      "--kubeconfig",
      testKubeconfig(),
      "--node-kubeconfig",
      kubeconfig,
      "--token-lifetime",
      lifetime,
      ...args,
    ],
    { env: { KINGLET_ALLOW_READ: `${testKubeconfig()},${dir}`, KINGLET_ALLOW_WRITE: dir } },
    60_000,
  );
  assert.equal(result.code, 0, result.stderr);
  return { kubeconfig, token: `${kubeconfig}.token`, result };
}

/** The refusal of a write RBAC allowed and kinglet's ownership policy did not. */
const POLICY = "refused by kinglet-owned-only";

/** "allowed", {@link POLICY}, or the status of the API server's refusal. */
async function outcome(request: Promise<unknown>): Promise<"allowed" | typeof POLICY | number> {
  const error = await request.then(() => undefined, (e) => e);
  if (error === undefined) return "allowed";
  assert.ok(error instanceof ApiError, `expected the API server to answer, got ${error}`);
  if (error.status === 403 && error.message.includes("'kinglet-owned-only'")) return POLICY;
  return error.status;
}

/** Resolves once a watch of Secrets (in `namespace`, else everywhere) delivers its first event. */
async function watchSecrets(client: KubeClient, namespace?: string): Promise<void> {
  const signal = AbortSignal.timeout(10_000);
  for await (const _ of client.watch(SECRETS, { ...(namespace && { namespace }), signal })) return;
  throw new Error(`the watch of Secrets${namespace ? ` in ${namespace}` : ""} delivered nothing`);
}

/**
 * A Secret and a Deployment named `probe` in `namespace`, for server-side
 * apply; `owner` makes them a WebApp's (a controller reference), named
 * `owned-probe`.
 */
function probes(namespace: string, owner?: string) {
  const ownerReferences = owner === undefined ? undefined : [{
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    name: owner,
    uid: "00000000-0000-4000-8000-000000000000",
    controller: true,
  }];
  const metadata = owner === undefined
    ? { name: "probe", namespace }
    : { name: "owned-probe", namespace, ownerReferences };
  const labels = { app: "probe" };
  return {
    secret: { apiVersion: "v1", kind: "Secret", metadata, data: { key: btoa("value") } },
    deployment: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata,
      spec: {
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: "probe", image: "nginx:1.27" }] },
        },
      },
    },
  };
}

/**
 * What `client` may do with Secrets (and a Deployment) in each of
 * `namespaces` and across the cluster, and with namespaces. Applies are dry
 * runs: the API server authorizes them as real ones and stores nothing. The
 * deletes are real: each is refused, or the test's last namespace (or the
 * claim `probe`, which nothing uses) goes. Every namespace holds a Secret
 * and a PersistentVolumeClaim `probe` the admin created.
 */
async function rights(client: KubeClient, namespaces: readonly string[]) {
  const apply = { fieldManager: "rights-probe", force: true, dryRun: true };
  const rows: [string, Promise<unknown>][] = [
    ["list Secrets in every namespace", client.list(SECRETS)],
    ["watch Secrets in every namespace", watchSecrets(client)],
    ["list namespaces", client.list(NAMESPACES)],
    ["delete a namespace", client.delete(NAMESPACES, namespaces.at(-1)!)],
  ];
  for (const namespace of namespaces) {
    const { secret, deployment } = probes(namespace);
    rows.push(
      [`list Secrets in ${namespace}`, client.list(SECRETS, { namespace })],
      [`watch Secrets in ${namespace}`, watchSecrets(client, namespace)],
      [`get a Secret in ${namespace}`, client.get(SECRETS, "probe", { namespace })],
      [`apply a Secret in ${namespace}`, client.apply(SECRETS, secret, apply)],
      [`apply a Deployment in ${namespace}`, client.apply(DEPLOYMENTS, deployment, apply)],
      [
        `delete a PersistentVolumeClaim in ${namespace}`,
        client.delete(PERSISTENT_VOLUME_CLAIMS, "probe", { namespace }),
      ],
    );
    const owned = probes(namespace, "shop");
    rows.push(
      [`apply a WebApp's Secret in ${namespace}`, client.apply(SECRETS, owned.secret, apply)],
      [
        `apply a WebApp's Deployment in ${namespace}`,
        client.apply(DEPLOYMENTS, owned.deployment, apply),
      ],
    );
  }
  const outcomes = await Promise.all(
    rows.map(async ([what, request]) => [what, await outcome(request)] as const),
  );
  return Object.fromEntries(outcomes);
}

/**
 * Creates a namespace starting with `prefix` that holds a Secret `probe` and
 * a PersistentVolumeClaim `probe`, kinglet's label on neither.
 */
async function namespaceWithSecret(admin: KubeClient, prefix: string): Promise<string> {
  const namespace = await createNamespace(admin, prefix);
  await admin.create(SECRETS, probes(namespace).secret);
  await admin.create(PERSISTENT_VOLUME_CLAIMS, {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: "probe", namespace },
    spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
  });
  return namespace;
}

/**
 * Waits until the authorizer's cache holds the RBAC an install just applied,
 * and the admission plugin its ownership policy (both follow the API with a
 * short lag), then resolves to `client`'s rights; `namespaces[0]` is one
 * kinglet serves.
 */
function rightsOnceApplied(
  client: KubeClient,
  namespaces: readonly string[],
  wide: boolean,
): Promise<Record<string, "allowed" | typeof POLICY | number>> {
  const clusterWide = wide ? "allowed" : 403;
  const { secret } = probes(namespaces[0]!);
  const apply = { fieldManager: "rights-probe", force: true, dryRun: true };
  return waitFor("the RBAC and the policy of the install in force", async () => {
    if (await outcome(client.list(SECRETS)) !== clusterWide) return false;
    if (await outcome(client.apply(SECRETS, secret, apply)) !== POLICY) return false;
    return await rights(client, namespaces);
  }, 10_000);
}

/** A WebApp `shop` in `namespace`, applied by the admin and awaited Ready. */
async function webAppReady(admin: KubeClient, namespace: string): Promise<void> {
  await admin.create(WEB_APPS, {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    metadata: { name: "shop", namespace },
    spec: { image: "nginx:1.27", replicas: 1 },
  });
  await waitFor("the WebApp Ready", async () => {
    const app = await admin.get(WEB_APPS, "shop", { namespace });
    return condition(app, "Ready")?.status === "True" && app;
  }, 60_000);
}

Deno.test("a cluster-wide install: kinglet run from its kubeconfig converges a WebApp with no 403; it lists and watches Secrets in every namespace and applies its own there, but gets none by name, deletes no one else's PersistentVolumeClaim (its ownership policy refuses what RBAC allows), and cannot touch namespaces", async () => {
  const admin = await adminClient();
  await installCrdsOnce(admin);
  const dir = await Deno.makeTempDir({ prefix: "kinglet_node_" });
  const teamA = await namespaceWithSecret(admin, "team-a");
  const teamB = await namespaceWithSecret(admin, "team-b");
  try {
    const { kubeconfig, token, result } = await install(dir);
    assert.match(
      result.stdout,
      /^applied ServiceAccount kinglet-system\/kinglet, ClusterRole kinglet, ClusterRoleBinding kinglet, Role kinglet-system\/kinglet-leader-election, RoleBinding kinglet-system\/kinglet-leader-election, Role kinglet-system\/kinglet-webhook-certificate, RoleBinding kinglet-system\/kinglet-webhook-certificate, ValidatingAdmissionPolicy kinglet-owned-only, ValidatingAdmissionPolicyBinding kinglet-owned-only, ValidatingWebhookConfiguration kinglet-validating$/m,
    );
    assert.match(result.stdout, /^its rights serve every namespace/m);
    assert.match(result.stdout, /valid until \d{4}-\d\d-\d\dT/);
    for (const file of [kubeconfig, token]) {
      assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600, `${file} is not 0600`);
    }
    assert.doesNotMatch(await Deno.readTextFile(kubeconfig), /token: |client-key/);

    // The directory as the unit's /var/lib/kinglet: kinglet reads the kubeconfig and the token beside it.
    await using operator = await startOperator({
      kubeconfig,
      args: [`--namespace=${teamA}`],
      env: { KINGLET_ALLOW_READ: dir },
    });
    await operator.ready();
    const converged = webAppReady(admin, teamA);

    const kinglet = new KubeClient(await loadConfig({ kubeconfig }));
    try {
      // RBAC cannot narrow a list or a watch by label, and kinglet lists the Secrets of its
      // DatabaseClusters: it reads every Secret's data, in every namespace. No get: it never asks
      // for one by name, which hides nothing from a list. Nor a delete by label: RBAC lets it
      // delete any claim in every namespace, and apply any Secret and Deployment; its ownership
      // policy takes back all but its own (docs/node-mode.md says so).
      const everywhere = (ns: string) => ({
        [`list Secrets in ${ns}`]: "allowed",
        [`watch Secrets in ${ns}`]: "allowed",
        [`get a Secret in ${ns}`]: 403,
        [`apply a Secret in ${ns}`]: POLICY,
        [`apply a Deployment in ${ns}`]: POLICY,
        [`delete a PersistentVolumeClaim in ${ns}`]: POLICY,
        [`apply a WebApp's Secret in ${ns}`]: "allowed",
        [`apply a WebApp's Deployment in ${ns}`]: "allowed",
      });
      assert.deepEqual(await rightsOnceApplied(kinglet, [teamA, teamB], true), {
        "list Secrets in every namespace": "allowed",
        "watch Secrets in every namespace": "allowed",
        "list namespaces": 403,
        "delete a namespace": 403,
        ...everywhere(teamA),
        ...everywhere(teamB),
      });
    } finally {
      kinglet.close();
    }
    await converged;
    assert.doesNotMatch(await operator.log(), /\b403\b|forbidden/i);
  } finally {
    await Promise.all([deleteNamespace(admin, teamA), deleteNamespace(admin, teamB)]);
    admin.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a token renewed by running install again is picked up by a running client, without a restart", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet_node_" });
  try {
    const { kubeconfig, token } = await install(dir);
    // A node whose token expired (the timer was stopped, say): the API server refuses it.
    await Deno.writeTextFile(token, "expired-token");
    const client = new KubeClient(await loadConfig({ kubeconfig }));
    try {
      await client.list(WEB_APPS, { namespace: "kinglet-system" }).then(
        () => assert.fail("a token the API server does not know was accepted"),
        (error) => assert.ok(error instanceof ApiError && error.status === 401, String(error)),
      );
      await install(dir);
      const list = await client.list(WEB_APPS, { namespace: "kinglet-system" });
      assert.ok(Array.isArray(list.items), "the renewed token was not used");
    } finally {
      client.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a namespace-scoped install (--namespace team-a): kinglet run --namespace team-a converges a WebApp there; Secrets, Deployments and PersistentVolumeClaims of team-b, and Secrets across the cluster, are out of reach", async () => {
  const admin = await adminClient();
  await installCrdsOnce(admin);
  const dir = await Deno.makeTempDir({ prefix: "kinglet_node_" });
  const teamA = await namespaceWithSecret(admin, "team-a");
  const teamB = await namespaceWithSecret(admin, "team-b");
  try {
    const { kubeconfig } = await install(dir, ["--namespace", teamA]);
    await using operator = await startOperator({
      kubeconfig,
      args: [`--namespace=${teamA}`],
      env: { KINGLET_ALLOW_READ: dir },
    });
    await operator.ready();
    const converged = webAppReady(admin, teamA);

    const kinglet = new KubeClient(await loadConfig({ kubeconfig }));
    try {
      assert.deepEqual(await rightsOnceApplied(kinglet, [teamA, teamB], false), {
        "list Secrets in every namespace": 403,
        "watch Secrets in every namespace": 403,
        "list namespaces": 403,
        "delete a namespace": 403,
        [`list Secrets in ${teamA}`]: "allowed",
        [`watch Secrets in ${teamA}`]: "allowed",
        [`get a Secret in ${teamA}`]: 403,
        [`apply a Secret in ${teamA}`]: POLICY,
        [`apply a Deployment in ${teamA}`]: POLICY,
        [`delete a PersistentVolumeClaim in ${teamA}`]: POLICY,
        [`apply a WebApp's Secret in ${teamA}`]: "allowed",
        [`apply a WebApp's Deployment in ${teamA}`]: "allowed",
        [`list Secrets in ${teamB}`]: 403,
        [`watch Secrets in ${teamB}`]: 403,
        [`get a Secret in ${teamB}`]: 403,
        [`apply a Secret in ${teamB}`]: 403,
        [`apply a Deployment in ${teamB}`]: 403,
        [`delete a PersistentVolumeClaim in ${teamB}`]: 403,
        [`apply a WebApp's Secret in ${teamB}`]: 403,
        [`apply a WebApp's Deployment in ${teamB}`]: 403,
      });
    } finally {
      kinglet.close();
    }
    await converged;
    assert.doesNotMatch(await operator.log(), /\b403\b|forbidden/i);
  } finally {
    await Promise.all([deleteNamespace(admin, teamA), deleteNamespace(admin, teamB)]);
    admin.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("credentials made for team-a: a run of every namespace is refused at start with exit 2, naming --namespace team-a, before it takes the Lease; install with them says it takes an admin kubeconfig", async () => {
  const admin = await adminClient();
  await installCrdsOnce(admin);
  const dir = await Deno.makeTempDir({ prefix: "kinglet_node_" });
  const teamA = await createNamespace(admin, "team-a");
  const lease = `kinglet-scope-${crypto.randomUUID().slice(0, 8)}`;
  try {
    const { kubeconfig, result } = await install(dir, ["--namespace", teamA]);
    assert.match(
      result.stdout,
      new RegExp(
        `^applied ServiceAccount kinglet-system/kinglet, ClusterRole kinglet, ClusterRoleBinding kinglet, Role ${teamA}/kinglet, RoleBinding ${teamA}/kinglet, `,
        "m",
      ),
    );
    assert.doesNotMatch(result.stdout, /deploy\/'s/);

    const wide = await runToExit(
      ["run", "--kubeconfig", kubeconfig, "--leader-elect", "--lease-name", lease],
      { env: { KINGLET_ALLOW_READ: dir } },
      120_000,
    );
    assert.equal(wide.code, 2, wide.stderr);
    assert.match(
      wide.stderr,
      new RegExp(
        `^kinglet: kinglet run watches every namespace, but the credentials of ${kubeconfig} may ` +
          `not list webapps\\.kinglet\\.dev across the cluster \\(403\\): they serve the namespace ` +
          `${teamA} only .* Run kinglet with --namespace ${teamA} .*or grant every namespace: ` +
          "kinglet install --kubeconfig <admin kubeconfig> --node-kubeconfig <path> ",
        "m",
      ),
    );
    assert.doesNotMatch(wide.stderr, /clusterrole\.yaml/);
    assert.equal(
      await getOrUndefined(admin, LEASES, lease, "kinglet-system"),
      undefined,
      "the refused run took the Lease",
    );

    const again = await runToExit(
      ["install", "--kubeconfig", kubeconfig, "--node-kubeconfig", join(dir, "again")],
      { env: { KINGLET_ALLOW_READ: dir, KINGLET_ALLOW_WRITE: dir } },
      60_000,
    );
    assert.equal(again.code, 2, again.stderr);
    assert.match(
      again.stderr,
      /holds the ServiceAccount kinglet-system\/kinglet's own credentials .*: run install with --kubeconfig <an admin kubeconfig>/,
    );
    assert.doesNotMatch(again.stderr, /clusterrole\.yaml/);
  } finally {
    await deleteNamespace(admin, teamA);
    admin.close();
    await Deno.remove(dir, { recursive: true });
  }
});
