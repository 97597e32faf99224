/**
 * Bad custom resources against one operator process (the deploy/ RBAC, the
 * start task's permissions): semantically invalid specs next to valid ones,
 * a WebApp near the 1.5 MiB object limit, fields the CRD does not know, a
 * child the API server refuses, and names at their length limits. Each gets
 * a precise answer on the object (a condition and an Event) or from the API
 * server at write time, without a crash or a retry storm, and the other
 * objects keep reconciling.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/reliability/bad_input_resources_test.ts
 */
import assert from "node:assert/strict";
import type { KubeClient } from "../../lib/kube/client.ts";
import { ApiError } from "../../lib/kube/errors.ts";
import { DEPLOYMENTS, PODS, SERVICES, STATEFUL_SETS } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { DATABASE_CLUSTERS } from "../../lib/operators/database/kind.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { kubectl, testDatastore } from "../_support/cluster.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";
import {
  adminClient,
  condition,
  createNamespace,
  deleteNamespace,
  eventsFor,
  getOrUndefined,
  waitFor,
} from "../_support/kube.ts";
import { type OperatorProcess, startOperator } from "../_support/operator.ts";
import { figure, fixed1, rssMiB } from "./_measure.ts";

function webApp(namespace: string, name: string, spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    metadata: { name, namespace },
    spec,
  };
}

function readyApp(client: KubeClient, namespace: string, name: string, timeoutMs = 60_000) {
  return waitFor(`WebApp ${name} Ready`, async () => {
    const app = await client.get(WEB_APPS, name, { namespace });
    return condition(app, "Ready")?.status === "True" && app;
  }, timeoutMs);
}

/** Reconcile errors and queue retries of the webapp controller during `ms`. */
async function churnDuring(operator: OperatorProcess, ms: number) {
  const read = async () => ({
    errors: await operator.metric("controller_runtime_reconcile_errors_total", {
      controller: "webapp",
    }),
    retries: await operator.metric("workqueue_retries_total", { name: "webapp" }),
    reconciles: await operator.metric("controller_runtime_reconcile_total", {
      controller: "webapp",
    }),
  });
  const before = await read();
  await new Promise((r) => setTimeout(r, ms));
  const after = await read();
  return {
    errors: after.errors - before.errors,
    retries: after.retries - before.retries,
    reconciles: after.reconciles - before.reconciles,
  };
}

/** The API server's refusal of `write`, which must fail. */
async function refusal(write: Promise<unknown>): Promise<ApiError> {
  const error = await write.then(() => undefined, (e) => e);
  assert.ok(error instanceof ApiError, `expected the API server to refuse, got ${error}`);
  return error;
}

Deno.test("bad custom resources get precise answers and never stop the others", async (t) => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "rel-badcr");
  await using operator = await startOperator({ kubeconfig: await operatorKubeconfig() });
  await operator.ready();
  try {
    await t.step(
      "an invalid spec gets InvalidSpec while a valid neighbour becomes Ready",
      async () => {
        const started = performance.now();
        await client.create(
          WEB_APPS,
          webApp(ns, "bad", {
            image: "nginx:1.27",
            resources: { requests: { memory: "2Gi" }, limits: { memory: "1Gi" } },
          }),
        );
        await client.create(WEB_APPS, webApp(ns, "good", { image: "nginx:1.27" }));
        const bad = await waitFor("InvalidSpec on bad", async () => {
          const app = await client.get(WEB_APPS, "bad", { namespace: ns });
          return condition(app, "InvalidSpec")?.status === "True" && app;
        });
        const invalidMs = performance.now() - started;
        assert.match(
          condition(bad, "InvalidSpec")?.message ?? "",
          /^spec\.resources\.requests\.memory: .*limit/,
        );
        await readyApp(client, ns, "good");
        const readyMs = performance.now() - started;
        assert.equal(await getOrUndefined(client, DEPLOYMENTS, "bad", ns), undefined);
        const churn = await churnDuring(operator, 3_000);
        assert.equal(churn.retries, 0, "an invalid spec is not retried");
        assert.equal((await eventsFor(client, ns, "bad", "InvalidSpec")).length, 1);
        figure(
          `invalid spec beside a valid one: InvalidSpec after ${fixed1(invalidMs / 1000)} s, the ` +
            `valid one Ready after ${fixed1(readyMs / 1000)} s; ${churn.retries} retries and ` +
            `${churn.reconciles} reconciles in the next 3 s; 1 Warning Event`,
        );
      },
    );

    await t.step(
      "a child the API server refuses is reported as InvalidSpec, not retried",
      async () => {
        // Passes kinglet's validation; the API server refuses the Deployment (a key with a space).
        const env = [{ name: "TOKEN", valueFrom: { secretKeyRef: { name: "s", key: "bad key" } } }];
        await client.create(WEB_APPS, webApp(ns, "refused", { image: "nginx:1.27", env }));
        const app = await waitFor("InvalidSpec on refused", async () => {
          const app = await client.get(WEB_APPS, "refused", { namespace: ns });
          return condition(app, "InvalidSpec")?.status === "True" && app;
        });
        assert.match(
          condition(app, "InvalidSpec")?.message ?? "",
          /^the API server rejected a child object: patch \/apis\/apps\/v1\/namespaces\/.*\/deployments\/refused.*secretKeyRef\.key: Invalid value: "bad key"/,
        );
        assert.equal((app.status as { phase?: string }).phase, "Invalid");
        const churn = await churnDuring(operator, 3_000);
        assert.equal(churn.retries, 0, "a refused child is not retried until the spec changes");
        await client.patch(WEB_APPS, "refused", {
          spec: {
            env: [{ name: "TOKEN", valueFrom: { secretKeyRef: { name: "s", key: "token" } } }],
          },
        }, { type: "merge", namespace: ns });
        await waitFor("the fixed WebApp out of InvalidSpec", async () => {
          const fixed = await client.get(WEB_APPS, "refused", { namespace: ns });
          return condition(fixed, "InvalidSpec")?.status === "False";
        });
        figure(
          `child refused by the API server (422): InvalidSpec with the server's message, ` +
            `${churn.retries} retries in 3 s, recovered after the spec was fixed`,
        );
      },
    );

    await t.step(
      "a WebApp of 1.4 MB of env values is reconciled, without a retry storm",
      async () => {
        const value = "v".repeat(10_000);
        const env = Array.from({ length: 140 }, (_, i) => ({ name: `BLOB_${i}`, value }));
        const rssBefore = await rssMiB(operator.pid);
        const started = performance.now();
        await client.create(WEB_APPS, webApp(ns, "huge", { image: "nginx:1.27", env }));
        const app = await readyApp(client, ns, "huge", 120_000);
        const readyMs = performance.now() - started;
        const deployment = await client.get<KubeObject & { spec: { template: unknown } }>(
          DEPLOYMENTS,
          "huge",
          { namespace: ns },
        );
        const size = JSON.stringify(app).length;
        assert.ok(size > 1_400_000, `the WebApp is ${size} bytes`);
        assert.ok(JSON.stringify(deployment.spec.template).includes(`"BLOB_139"`));
        const churn = await churnDuring(operator, 3_000);
        assert.equal(churn.errors, 0);
        assert.equal(churn.retries, 0);
        const rssAfter = await rssMiB(operator.pid);
        figure(
          `huge WebApp (${fixed1(size / 1_000_000)} MB as JSON): Ready in ` +
            `${fixed1(readyMs / 1000)} s; operator RSS ${fixed1(rssBefore)} → ${
              fixed1(rssAfter)
            } MiB; ` +
            `${churn.errors} errors, ${churn.retries} retries in the next 3 s`,
        );
      },
    );

    await t.step(
      "a WebApp over etcd's request limit is refused at write time on etcd, and served on kine",
      async () => {
        const value = "v".repeat(100_000);
        const env = Array.from({ length: 20 }, (_, i) => ({ name: `BLOB_${i}`, value }));
        const huge = webApp(ns, "too-huge", { image: "nginx:1.27", env });
        if (testDatastore() === "etcd") {
          const error = await refusal(client.create(WEB_APPS, huge));
          assert.ok([413, 500].includes(error.status), error.message);
          assert.match(error.message, /too large/i);
          figure(`WebApp of 2 MB: refused by the API server (${error.status} ${error.reason})`);
          return;
        }
        // kine (SQLite) has no 1.5 MiB value limit: only the API server's 3 MiB request limit.
        await client.create(WEB_APPS, huge);
        await readyApp(client, ns, "too-huge");
        await client.delete(WEB_APPS, "too-huge", { namespace: ns });
        figure("WebApp of 2 MB on kine: stored, and Ready like any other");
      },
    );

    await t.step(
      "fields the CRD does not know are pruned (client) or refused (kubectl)",
      async () => {
        const created = await client.create(
          WEB_APPS,
          webApp(ns, "extra", {
            image: "nginx:1.27",
            colour: "blue",
            env: [{ name: "A", value: "1", secret: true }],
          }),
        );
        const spec = created.spec as Record<string, unknown>;
        assert.equal(spec.colour, undefined, "pruned");
        assert.deepEqual(spec.env, [{ name: "A", value: "1" }]);
        await readyApp(client, ns, "extra");
        const strict = await kubectl(["create", "-f", "-"], {
          stdin: JSON.stringify(webApp(ns, "strict", { image: "nginx:1.27", colour: "blue" })),
        });
        assert.notEqual(strict.code, 0);
        assert.match(strict.stderr, /unknown field "spec\.colour"/);
        const typed = await refusal(
          client.create(WEB_APPS, webApp(ns, "typed", { image: "nginx:1.27", replicas: "three" })),
        );
        assert.equal(typed.status, 422);
        assert.match(
          typed.message,
          /spec\.replicas: Invalid value: "string": spec\.replicas in body must be of type integer/,
        );
        figure(
          "unknown fields: pruned on a default create (object Ready), refused by kubectl's strict " +
            "validation; a wrong type refused with 422",
        );
      },
    );

    await t.step(
      "names at their length limits: 63 for a WebApp, 52 for a DatabaseCluster",
      async () => {
        const long = `w${"a".repeat(61)}z`;
        assert.equal(long.length, 63);
        await client.create(WEB_APPS, webApp(ns, long, { image: "nginx:1.27" }));
        await readyApp(client, ns, long, 90_000);
        await client.get(SERVICES, long, { namespace: ns });
        const pods = await client.list(PODS, {
          namespace: ns,
          labelSelector: `app.kubernetes.io/instance=${long}`,
        });
        assert.equal(pods.items.length, 1);
        const tooLong = await refusal(
          client.create(WEB_APPS, webApp(ns, `${long}x`, { image: "nginx:1.27" })),
        );
        assert.match(
          tooLong.message,
          /metadata\.name: Invalid value: .*must be a DNS label of at most 63 characters/,
        );

        const db = `d${"b".repeat(50)}z`;
        assert.equal(db.length, 52);
        await client.create(DATABASE_CLUSTERS, {
          apiVersion: "kinglet.dev/v1alpha2",
          kind: "DatabaseCluster",
          metadata: { name: db, namespace: ns },
          spec: { engine: "postgres", version: "17", replicas: 1, storage: { size: "1Gi" } },
        });
        const ready = await waitFor(`DatabaseCluster ${db} Ready`, async () => {
          const dbc = await client.get(DATABASE_CLUSTERS, db, { namespace: ns });
          return condition(dbc, "Ready")?.status === "True" && dbc;
        }, 120_000);
        assert.equal(condition(ready, "InvalidSpec")?.status, "False");
        await client.get(STATEFUL_SETS, db, { namespace: ns });
        await client.get(SERVICES, `${db}-headless`, { namespace: ns });
        const dbTooLong = await refusal(
          client.create(DATABASE_CLUSTERS, {
            apiVersion: "kinglet.dev/v1alpha2",
            kind: "DatabaseCluster",
            metadata: { name: `${db}x`, namespace: ns },
            spec: { engine: "postgres", version: "17", replicas: 1, storage: { size: "1Gi" } },
          }),
        );
        assert.match(dbTooLong.message, /at most 52 characters/);
        figure(
          "name limits: a 63-character WebApp and a 52-character DatabaseCluster become Ready with " +
            "valid children; 64 and 53 characters are refused by the CRD with the reason",
        );
      },
    );
  } finally {
    // While the operator runs: the DatabaseCluster's finalizer needs it to go.
    await deleteNamespace(client, ns).finally(() => client.close());
  }
  assert.equal(await operator.stop(), 0, "the operator never crashed and stops cleanly");
});
