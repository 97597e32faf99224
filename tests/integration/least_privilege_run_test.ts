/**
 * kinglet confined the way it ships: authenticated as the deploy/ service
 * account (so only its RBAC applies) and run under the Deno permissions and
 * V8 flags that `deno task start` and the compiled binary use. It must take
 * the Lease, reconcile a WebApp and an InferenceService (its GPU pod on a
 * kwok GPU node) to Ready, run a DatabaseCluster's whole lifecycle (Secret,
 * StatefulSet, finalizer, volume cleanup), write Events, and release the
 * Lease on SIGTERM, without a single denial: all three of kinglet's
 * operators, under the RBAC generated from their ControllerSpecs and the
 * ownership policy deploy/ ships beside it (which lets it delete the
 * volume claims its StatefulSet made, and nothing it does not own).
 *
 * Then an author's kind of operator, one that RBAC alone cannot confine:
 * a site per Gadget, a Namespace and a NetworkPolicy in it, owned
 * `anywhere`. Under the rules derived from its spec and the
 * ValidatingAdmissionPolicy derived beside them, it makes, restores and
 * deletes its own, and is refused (a 403 naming the policy) relabelling
 * `kube-system`, patching, taking over by server-side apply, creating
 * beside or deleting another team's NetworkPolicy. Both run on the oldest
 * supported Kubernetes (`deno task test:oldest`) and the newest.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { grantsFromEnv } from "../../hack/_permissions.ts";
import { Semaphore } from "../../lib/async/semaphore.ts";
import { isForbidden } from "../../lib/kube/errors.ts";
import { NAMESPACES } from "../../lib/kube/resources.ts";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";
import { Caches } from "../../lib/runtime/cache/caches.ts";
import { Controller } from "../../lib/runtime/controller/controller.ts";
import { OWNER_LABELS, ownerKind } from "../../lib/runtime/children/owner_labels.ts";
import type { ControllerSpec } from "../../lib/runtime/controller/spec.ts";
import { controllerRules } from "../../lib/runtime/rbac/mod.ts";
import { testServiceAccount } from "../../lib/testing/service_account.ts";
import { kubectl, type KubectlResult, testKubeconfig } from "../_support/cluster.ts";
import { kingletArgs } from "../_support/kinglet_bundle.ts";
import { createNamespace, deleteNamespace, getOrUndefined, waitFor } from "../_support/kube.ts";
import { KINGLET_SERVICE_ACCOUNT, serviceAccountKubeconfig } from "../_support/service_account.ts";
import { type Gadget, gadget, GADGETS, gadgetScope } from "./_gadgets.ts";

const CRDS_DIR = fileURLToPath(new URL("../../crds/", import.meta.url));
const SA = KINGLET_SERVICE_ACCOUNT;

async function ok(args: string[], stdin?: string): Promise<string> {
  const result: KubectlResult = await kubectl(args, { stdin });
  assert.equal(result.code, 0, `kubectl ${args.join(" ")} failed: ${result.stderr}`);
  return result.stdout;
}

async function getJson<T>(args: string[]): Promise<T | undefined> {
  const result = await kubectl(["get", ...args, "-o", "json"]);
  return result.code === 0 ? JSON.parse(result.stdout) as T : undefined;
}

/**
 * Polls `probe` every 250 ms until it returns a value other than undefined;
 * a timeout shows the end of `log`.
 */
async function eventually<T>(
  what: string,
  log: () => string,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    assert.ok(
      Date.now() < deadline,
      `timed out after 90 s waiting for ${what}; kinglet's log ends with:\n${log().slice(-4000)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

/** Collects a child's output while it runs, so its pipe never fills. */
function collect(stream: ReadableStream<Uint8Array>): () => string {
  let text = "";
  const done = stream.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (text += chunk) }),
  );
  done.catch(() => {});
  return () => text;
}

interface Lease {
  spec?: { holderIdentity?: string };
}

Deno.test("kinglet reconciles under the deploy/ RBAC and the binary's permissions", async () => {
  await ok(["apply", "--server-side", "-k", CRDS_DIR]);
  await ok([
    "wait",
    "--for=condition=Established",
    "--timeout=60s",
    ...["webapps", "databaseclusters", "inferenceservices"].map((p) => `crd/${p}.kinglet.dev`),
  ]);
  const kubeconfig = await serviceAccountKubeconfig(testKubeconfig(), SA.namespace, SA.name);
  const namespace = `least-${crypto.randomUUID().slice(0, 8)}`;
  await ok(["create", "namespace", namespace]);

  const health = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: await kingletArgs([
      "run",
      "--kubeconfig",
      kubeconfig,
      "--leader-elect",
      `--metrics-bind-address=127.0.0.1:${freePort()}`,
      `--health-probe-bind-address=127.0.0.1:${health}`,
      "--log-level=debug",
    ], { grants: grantsFromEnv({ KINGLET_ALLOW_READ: kubeconfig }) }),
    // Only what a node's systemd would give it; nothing of the test runner's KINGLET_* leaks in.
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? "/" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = collect(child.stdout);
  const stderr = collect(child.stderr);
  let exited = false;
  const status = child.status.finally(() => exited = true);

  try {
    await eventually("/readyz", stderr, async () => {
      assert.ok(!exited, `kinglet exited early:\n${stderr()}`);
      const response = await fetch(`http://127.0.0.1:${health}/readyz`).catch(() => undefined);
      await response?.body?.cancel();
      return response?.ok ? true : undefined;
    });
    const held = await eventually("the Lease", stderr, async () => {
      const lease = await getJson<Lease>(["lease", "kinglet-leader", "-n", SA.namespace]);
      return lease?.spec?.holderIdentity || undefined;
    });

    // Both at once: their Deployments roll out on the kwok nodes side by side.
    await ok(["apply", "-n", namespace, "-f", "-"], webApp());
    await ok(["apply", "-n", namespace, "-f", "-"], inferenceService());
    for (const [kind, name] of [["webapp", "web"], ["inferenceservice", "chat"]] as const) {
      await eventually(`the ${kind} ${name} to be Ready`, stderr, async () => {
        const object = await getJson<{ status?: { phase?: string } }>([
          kind,
          name,
          "-n",
          namespace,
        ]);
        return object?.status?.phase === "Ready" ? true : undefined;
      });
    }

    await ok(["apply", "-n", namespace, "-f", "-"], databaseCluster());
    await eventually("the StatefulSet and credentials Secret", stderr, async () => {
      const set = await getJson(["statefulset", "db", "-n", namespace]);
      const secret = await getJson(["secret", "db-credentials", "-n", namespace]);
      return set && secret ? true : undefined;
    });
    type Claims = { items: { metadata: { uid: string; deletionTimestamp?: string } }[] };
    const claims = await eventually("the StatefulSet's volume claims", stderr, async () => {
      const list = await getJson<Claims>(["pvc", "-n", namespace]);
      return list?.items.length ? list.items.map((claim) => claim.metadata.uid) : undefined;
    });
    await ok(["delete", "databasecluster", "db", "-n", namespace, "--wait=false"]);
    await eventually("the DatabaseCluster to be gone", stderr, async () => {
      const result = await kubectl(["get", "databasecluster", "db", "-n", namespace]);
      return result.code !== 0 && /NotFound/.test(result.stderr) ? true : undefined;
    });
    // By uid: the claims are Pending (no volume binds on kwok), so their pod is never scheduled and
    // does not protect them; the StatefulSet, until the garbage collector deletes it, may make a
    // claim of the same name anew for its Pending pod, which its own retention policy deletes.
    const remaining = await getJson<Claims>(["pvc", "-n", namespace]);
    const kept = remaining?.items.filter((claim) =>
      claims.includes(claim.metadata.uid) && !claim.metadata.deletionTimestamp
    );
    assert.deepEqual(kept, [], "deletionPolicy: Delete must have deleted every volume claim");
    type Events = { items: { reason?: string; note?: string; regarding?: { kind?: string } }[] };
    const events = await eventually("cleanup's VolumesDeleted Event", stderr, async () => {
      const list = await getJson<Events>(["events.events.k8s.io", "-n", namespace]);
      return list?.items.some((e) => e.reason === "VolumesDeleted") ? list : undefined;
    });
    const cleanup = events.items.find((e) => e.reason === "VolumesDeleted");
    assert.equal(cleanup?.regarding?.kind, "DatabaseCluster");
    assert.match(cleanup?.note ?? "", /^deleted [1-9]\d* PersistentVolumeClaims/);
    // Not the Deployments': the controller manager writes Events about them, of the same names.
    for (const kind of ["WebApp", "InferenceService"]) {
      assert.ok(
        events.items.some((e) => e.regarding?.kind === kind),
        `no Event about the ${kind}`,
      );
    }

    child.kill("SIGTERM");
    const { code } = await status;
    assert.equal(code, 0, `kinglet exited with ${code}:\n${stderr()}`);
    const released = await getJson<Lease>(["lease", "kinglet-leader", "-n", SA.namespace]);
    assert.ok(!released?.spec?.holderIdentity, `${held} kept the Lease after SIGTERM`);
    const output = stdout() + stderr();
    assert.doesNotMatch(output, /forbidden|NotCapable|may not|Requires \w+ access/i, output);
  } finally {
    if (!exited) child.kill("SIGKILL");
    await status;
    await kubectl(["delete", "namespace", namespace, "--wait=false"]);
  }
});

function webApp(): string {
  return JSON.stringify({
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    metadata: { name: "web" },
    spec: { image: "registry.example/web:1", replicas: 1, port: 8080 },
  });
}

/** An InferenceService on an A100: a Deployment whose pod only the kwok GPU node takes. */
function inferenceService(): string {
  return JSON.stringify({
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "InferenceService",
    metadata: { name: "chat" },
    spec: { model: "HuggingFaceTB/SmolLM2-360M-Instruct", gpuType: "A100" },
  });
}

function databaseCluster(): string {
  return JSON.stringify({
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "DatabaseCluster",
    metadata: { name: "db" },
    spec: {
      engine: "postgres",
      version: "17",
      replicas: 1,
      storage: { size: "1Gi" },
      deletionPolicy: "Delete",
    },
  });
}

/** `networking.k8s.io/v1` NetworkPolicy, which kinglet's own operators never write. */
const NETWORK_POLICIES: Resource = {
  group: "networking.k8s.io",
  version: "v1",
  plural: "networkpolicies",
  kind: "NetworkPolicy",
  namespaced: true,
};

type Policy = KubeObject & { spec?: { policyTypes?: string[] } };

/**
 * A site per Gadget, as an author's operator makes one: a Namespace of its
 * own (labelled with its Pod Security level) and a NetworkPolicy in it, both
 * owned `anywhere` (by owner labels), its status, its Events.
 */
function siteController(): ControllerSpec<Gadget> {
  const labelSelector = `${OWNER_LABELS.kind}=${ownerKind(GADGETS)}`;
  return {
    name: "sites",
    resource: GADGETS,
    owns: [
      { resource: NAMESPACES, anywhere: true, labelSelector },
      { resource: NETWORK_POLICIES, anywhere: true, labelSelector },
    ],
    async reconcile(gadget, { children, status, events, signal }) {
      const site = `${gadget.metadata!.namespace}-site`;
      await children.apply(NAMESPACES, {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: site, labels: { "pod-security.kubernetes.io/enforce": "baseline" } },
      }, signal);
      await children.apply(NETWORK_POLICIES, {
        apiVersion: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        metadata: { name: "deny-ingress", namespace: site },
        spec: { podSelector: {}, policyTypes: ["Ingress"] },
      }, signal);
      await status({ site }, signal);
      events.publish({ type: "Normal", reason: "SiteReady", action: "Reconcile", note: site });
      return {};
    },
  };
}

/** What `write` was refused with: a 403 naming the policy, retried until the policy answers. */
async function refused(what: string, policy: string, write: () => Promise<unknown>) {
  return await waitFor(`${what} refused by ${policy}`, async () => {
    try {
      await write();
    } catch (error) {
      if (isForbidden(error) && String(error).includes(policy)) return (error as Error).message;
      throw error;
    }
    throw new Error(`${what} was allowed`);
  }, 30_000);
}

Deno.test("an operator under its RBAC and ownership policy does its own work and is refused another's", async () => {
  await using scope = await gadgetScope("least-policy");
  const { client: admin, namespace } = scope;
  const spec = siteController();
  await using account = await testServiceAccount(
    { client: admin, kubeconfig: testKubeconfig(), namespace },
    { name: "sites", rules: controllerRules([spec]), policy: [spec] },
  );
  const policy = `${namespace}-sites-owned-only`;
  const site = `${namespace}-site`;
  const team = await createNamespace(admin, "team");
  const caches = new Caches({ client: account.client, backoff: { initialMs: 100, maxMs: 1_000 } });
  const controller = new Controller<Gadget>(spec, {
    client: account.client,
    semaphore: new Semaphore(4),
    caches,
  });
  const stop = new AbortController();
  const running = Promise.all([caches.run(stop.signal), controller.run(stop.signal)]);
  try {
    await admin.create(GADGETS, gadget("g"), { namespace });
    const made = await waitFor("the site's namespace and policy", async () => {
      const g = await admin.get<Gadget>(GADGETS, "g", { namespace });
      const ns = await getOrUndefined(admin, NAMESPACES, site);
      const np = await getOrUndefined<Policy>(admin, NETWORK_POLICIES, "deny-ingress", site);
      return g.status?.site === site && ns && np && { ns, np };
    });
    assert.equal(made.ns.metadata?.labels?.[OWNER_LABELS.kind], ownerKind(GADGETS));
    await admin.patch(NETWORK_POLICIES, "deny-ingress", {
      spec: { policyTypes: ["Ingress", "Egress"] },
    }, { type: "merge", namespace: site });
    await waitFor("the edited policy restored", async () => {
      const np = await getOrUndefined<Policy>(admin, NETWORK_POLICIES, "deny-ingress", site);
      return np?.spec?.policyTypes?.join() === "Ingress";
    });
    account.assertNoDenials();

    // Dry runs: admission answers them as it would the write, and nothing changes if it did not.
    const dryRun = true;
    const relabel = await refused(
      "relabelling kube-system",
      policy,
      () =>
        account.client.patch(NAMESPACES, "kube-system", {
          metadata: { labels: { "pod-security.kubernetes.io/enforce": "privileged" } },
        }, { type: "merge", dryRun }),
    );
    assert.match(relabel, /may not change namespaces kube-system: it is not owned by sites/);
    await admin.create(NETWORK_POLICIES, {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: "allow-web", namespace: team },
      spec: { podSelector: {}, policyTypes: ["Ingress"], ingress: [{}] },
    });
    const theirs = await refused(
      "patching another team's NetworkPolicy",
      policy,
      () =>
        account.client.patch(NETWORK_POLICIES, "allow-web", {
          spec: { ingress: [] },
        }, { type: "merge", namespace: team, dryRun }),
    );
    assert.match(theirs, new RegExp(`may not change networkpolicies ${team}/allow-web`));
    const labels = { ...made.ns.metadata?.labels };
    delete labels["pod-security.kubernetes.io/enforce"];
    delete labels["kubernetes.io/metadata.name"];
    await refused(
      "taking another team's NetworkPolicy by applying the owner labels",
      policy,
      () =>
        account.client.apply(NETWORK_POLICIES, {
          apiVersion: "networking.k8s.io/v1",
          kind: "NetworkPolicy",
          metadata: { name: "allow-web", namespace: team, labels },
        }, { fieldManager: "sites", force: true, dryRun }),
    );
    await refused(
      "creating a NetworkPolicy it would not own",
      policy,
      () =>
        account.client.create(NETWORK_POLICIES, {
          apiVersion: "networking.k8s.io/v1",
          kind: "NetworkPolicy",
          metadata: { name: "open", namespace: team },
          spec: { podSelector: {} },
        }, { dryRun }),
    );
    await refused(
      "deleting another team's NetworkPolicy",
      policy,
      () => account.client.delete(NETWORK_POLICIES, "allow-web", { namespace: team }),
    );
    await account.client.create(NETWORK_POLICIES, {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: "deny-ingress", namespace: team, labels },
      spec: { podSelector: {} },
    }, { dryRun });
    const probes = account.denials.length;

    await admin.delete(GADGETS, "g", { namespace });
    await waitFor(
      "the gadget gone with its site",
      async () => (await getOrUndefined(admin, GADGETS, "g", namespace)) === undefined,
    );
    const ns = await getOrUndefined(admin, NAMESPACES, site);
    assert.ok(!ns || ns.metadata?.deletionTimestamp, "the site's namespace was left");
    assert.equal(account.denials.length, probes, "the operator was refused its own cleanup");
  } finally {
    stop.abort();
    await running;
    await deleteNamespace(admin, team);
    await deleteNamespace(admin, site).catch(() => {});
  }
});
