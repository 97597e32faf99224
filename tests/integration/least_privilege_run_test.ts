/**
 * kinglet confined the way it ships: authenticated as the deploy/ service
 * account (so only its RBAC applies) and run under the Deno permissions and
 * V8 flags that `deno task start` and the compiled binary use. It must take
 * the Lease, reconcile a WebApp and an InferenceService (its GPU pod on a
 * kwok GPU node) to Ready, run a DatabaseCluster's whole lifecycle (Secret,
 * StatefulSet, finalizer, volume cleanup), write Events, and release the
 * Lease on SIGTERM, without a single denial: all three of kinglet's
 * operators, under the RBAC generated from their ControllerSpecs.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { grantsFromEnv } from "../../hack/_permissions.ts";
import { kubectl, type KubectlResult, testKubeconfig } from "../_support/cluster.ts";
import { kingletArgs } from "../_support/kinglet_bundle.ts";
import { KINGLET_SERVICE_ACCOUNT, serviceAccountKubeconfig } from "../_support/service_account.ts";

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
    const claims = await eventually("the StatefulSet's volume claims", stderr, async () => {
      const list = await getJson<{ items: unknown[] }>(["pvc", "-n", namespace]);
      return list?.items.length ? list.items.length : undefined;
    });
    assert.ok(claims >= 1);
    await ok(["delete", "databasecluster", "db", "-n", namespace, "--wait=false"]);
    await eventually("the DatabaseCluster to be gone", stderr, async () => {
      const result = await kubectl(["get", "databasecluster", "db", "-n", namespace]);
      return result.code !== 0 && /NotFound/.test(result.stderr) ? true : undefined;
    });
    const remaining = await getJson<{ items: { metadata: { deletionTimestamp?: string } }[] }>([
      "pvc",
      "-n",
      namespace,
    ]);
    assert.ok(
      remaining?.items.every((claim) => claim.metadata.deletionTimestamp),
      "deletionPolicy: Delete must have deleted every volume claim",
    );
    const events = await getJson<{ items: { regarding?: { kind?: string } }[] }>([
      "events.events.k8s.io",
      "-n",
      namespace,
    ]);
    // Not the Deployments': the controller manager writes Events about them, of the same names.
    for (const kind of ["WebApp", "InferenceService"]) {
      assert.ok(
        events?.items.some((e) => e.regarding?.kind === kind),
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
