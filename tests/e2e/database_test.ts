/**
 * DatabaseCluster end to end: the operator runs as a separate process under
 * the deploy/ RBAC, against the real control plane where kwok makes pods
 * Ready and the pre-created volumes bind the StatefulSet's claims.
 */
import assert from "node:assert/strict";
import { assertNoDenials, denialsInLog } from "../../lib/testing/denials.ts";
import type { V1Secret, V1Service } from "@kubernetes/client-node";
import { EVENTS, PODS, SECRETS, SERVICES, STATEFUL_SETS } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { DATABASE_CLUSTERS } from "../../lib/operators/database/kind.ts";
import {
  adminClient,
  condition,
  createNamespace,
  deleteNamespace,
  getOrUndefined,
  waitFor,
} from "../_support/kube.ts";
import { startOperator } from "../_support/operator.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";
import {
  clusterEvent,
  clusterEvents,
  clusterPods,
  databaseCluster,
  type DatabaseStatus,
  dataClaims,
  decode,
  podReady,
  type StatefulSet,
} from "./_database.ts";

Deno.test("databasecluster lifecycle: create, scale, credentials, invalid spec, degrade, drift repair, delete retaining volumes", async (t) => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "e2e-dbc");
  // The most verbose level, so that the password check below covers every log line.
  await using operator = await startOperator({
    kubeconfig: await operatorKubeconfig(),
    args: ["--log-level=trace"],
  });
  await operator.ready();
  const name = "orders";
  const get = () => client.get(DATABASE_CLUSTERS, name, { namespace: ns });
  const ready = (replicas: number) =>
    waitFor(`DatabaseCluster ${name} Ready with ${replicas} ready replicas`, async () => {
      const dbc = await get();
      const status = dbc.status as DatabaseStatus | undefined;
      return status?.phase === "Ready" && condition(dbc, "Ready")?.status === "True" &&
        status.observedGeneration === dbc.metadata?.generation &&
        status.replicas === replicas && status.readyReplicas === replicas && dbc;
    });
  const statefulSet = () => client.get<StatefulSet>(STATEFUL_SETS, name, { namespace: ns });
  const event = (reason: string, note: string) => clusterEvent(client, ns, name, reason, note);
  const scale = async (replicas: number) => {
    await client.patch(DATABASE_CLUSTERS, name, { spec: { replicas } }, {
      type: "merge",
      namespace: ns,
    });
  };
  let credentials: { uid?: string; resourceVersion?: string; data?: Record<string, string> } = {};
  let password = "";

  try {
    await t.step(
      "a new DatabaseCluster gets its children, a Ready pod, a Bound volume and a ClusterReady Event",
      async () => {
        await client.create(
          DATABASE_CLUSTERS,
          databaseCluster(ns, name, {
            engine: "postgres",
            version: "17",
            storage: { size: "1Gi" },
            resources: { requests: { cpu: "100m", memory: "256Mi" }, limits: { memory: "512Mi" } },
          }),
        );
        const dbc = await ready(1);
        const spec = dbc.spec as { replicas: number; deletionPolicy: string };
        assert.equal(spec.replicas, 1, "replicas defaults to 1");
        assert.equal(spec.deletionPolicy, "Retain", "deletionPolicy defaults to Retain");
        assert(dbc.metadata?.finalizers?.includes("kinglet.dev/cleanup"), "the finalizer is set");
        const status = dbc.status as DatabaseStatus;
        assert.equal(status.secretName, `${name}-credentials`);
        assert.equal(status.endpoint, `${name}.${ns}.svc.cluster.local:5432`);

        const sts = await statefulSet();
        assert.equal(sts.metadata?.ownerReferences?.[0]?.uid, dbc.metadata?.uid);
        assert.equal(sts.spec?.serviceName, `${name}-headless`);
        assert.equal(
          sts.spec?.template.spec?.containers[0]?.image,
          "docker.io/library/postgres:17",
        );
        assert.deepEqual(sts.spec?.persistentVolumeClaimRetentionPolicy, {
          whenDeleted: "Retain",
          whenScaled: "Retain",
        });
        const headless = await client.get<V1Service & KubeObject>(SERVICES, `${name}-headless`, {
          namespace: ns,
        });
        assert.equal(headless.spec?.clusterIP, "None");
        assert.equal(headless.metadata?.ownerReferences?.[0]?.uid, dbc.metadata?.uid);
        const service = await client.get<V1Service & KubeObject>(SERVICES, name, {
          namespace: ns,
        });
        assert.equal(service.spec?.selector?.["statefulset.kubernetes.io/pod-name"], `${name}-0`);
        assert.equal(service.spec?.ports?.[0]?.port, 5432);

        const pods = await clusterPods(client, ns, name);
        assert.deepEqual(pods.map((p) => p.metadata?.name), [`${name}-0`]);
        assert(pods.every(podReady), "the pod is Ready");
        assert.match(pods[0]?.spec?.nodeName ?? "", /^kwok-node-\d$/, "not on a tainted GPU node");
        const [claim] = await dataClaims(client, ns, name, 1);
        assert.equal(claim?.status?.phase, "Bound");
        assert.equal(claim?.spec?.resources?.requests?.storage, "1Gi");

        const ready1 = await event("ClusterReady", "Creating → Ready: 1 of 1 replicas ready");
        assert.equal(ready1.type, "Normal");
        assert.equal((await clusterEvents(client, ns, name, "ClusterReady")).length, 1);
        await event("CredentialsCreated", `created Secret ${name}-credentials`);
      },
    );

    await t.step(
      "the credentials Secret holds a generated password pods read by reference",
      async () => {
        const secret = await client.get<V1Secret & KubeObject>(SECRETS, `${name}-credentials`, {
          namespace: ns,
        });
        assert.equal(secret.type, "kubernetes.io/basic-auth");
        assert.equal(secret.immutable, true);
        assert.deepEqual(Object.keys(secret.data ?? {}).sort(), [
          "host",
          "password",
          "port",
          "uri",
          "username",
        ]);
        password = decode(secret, "password");
        assert.match(password, /^[A-Za-z0-9]{32}$/);
        const host = `${name}.${ns}.svc.cluster.local`;
        assert.equal(decode(secret, "username"), "postgres");
        assert.equal(decode(secret, "host"), host);
        assert.equal(decode(secret, "port"), "5432");
        assert.equal(
          decode(secret, "uri"),
          `postgresql://postgres:${password}@${host}:5432/postgres`,
        );
        credentials = {
          uid: secret.metadata?.uid,
          resourceVersion: secret.metadata?.resourceVersion,
          data: secret.data,
        };
        const sts = await statefulSet();
        assert(!JSON.stringify(sts).includes(password), "the password is not in the StatefulSet");
        const env = sts.spec?.template.spec?.containers[0]?.env ?? [];
        assert.deepEqual(env.find((e) => e.name === "POSTGRES_PASSWORD")?.valueFrom?.secretKeyRef, {
          name: `${name}-credentials`,
          key: "password",
        });
      },
    );

    await t.step(
      "scaling up and down goes Ready → Scaling → Ready with an Event for each transition",
      async () => {
        await scale(2);
        await ready(2);
        assert.equal((await statefulSet()).spec?.replicas, 2);
        const pods = await clusterPods(client, ns, name);
        assert.deepEqual(pods.map((p) => p.metadata?.name), [`${name}-0`, `${name}-1`]);
        assert(pods.every(podReady), "both pods are Ready");
        const claims = await dataClaims(client, ns, name, 2);
        assert.deepEqual(claims.map((c) => c?.status?.phase), ["Bound", "Bound"]);
        await event("ScalingStarted", "Ready → Scaling: Scaling from 1 to 2 replicas");
        await event("ScalingCompleted", "Scaling → Ready: 2 of 2 replicas ready");

        await scale(1);
        await ready(1);
        assert.equal((await statefulSet()).spec?.replicas, 1);
        await waitFor(
          `only ${name}-0 left`,
          async () => (await clusterPods(client, ns, name)).length === 1,
        );
        await event("ScalingStarted", "Ready → Scaling: Scaling from 2 to 1 replicas");
        await event("ScalingCompleted", "Scaling → Ready: 1 of 1 replicas ready");
        const [, second] = await dataClaims(client, ns, name, 2);
        assert.equal(second?.status?.phase, "Bound", "scaling down keeps the volume");
        assert.equal(second?.metadata?.deletionTimestamp, undefined);
      },
    );

    await t.step("reconciles after creation never rewrite the credentials Secret", async () => {
      const secret = await client.get<V1Secret & KubeObject>(SECRETS, `${name}-credentials`, {
        namespace: ns,
      });
      assert.equal(secret.metadata?.uid, credentials.uid);
      assert.equal(secret.metadata?.resourceVersion, credentials.resourceVersion);
      assert.deepEqual(secret.data, credentials.data);
      const created = await clusterEvents(client, ns, name, "CredentialsCreated");
      assert.equal(created.length, 1, "the Secret was created once");
    });

    await t.step(
      "an unsupported version gets InvalidSpec and one Warning Event, a fix recovers",
      async () => {
        await client.patch(DATABASE_CLUSTERS, name, { spec: { version: "13" } }, {
          type: "merge",
          namespace: ns,
        });
        const dbc = await waitFor("InvalidSpec True", async () => {
          const dbc = await get();
          return condition(dbc, "InvalidSpec")?.status === "True" && dbc;
        });
        const message = 'spec.version: "13" is not a supported postgres version; use 14, 15, ' +
          "16 or 17, optionally with a minor (e.g. 17.2), or set spec.image";
        assert.equal(condition(dbc, "InvalidSpec")?.message, message);
        assert.equal(condition(dbc, "Ready")?.status, "False");
        const status = dbc.status as DatabaseStatus;
        assert.equal(status.observedGeneration, dbc.metadata?.generation);
        assert.equal(status.phase, "Ready", "the lifecycle state is kept");
        assert.equal(
          (await statefulSet()).spec?.template.spec?.containers[0]?.image,
          "docker.io/library/postgres:17",
          "the children are left alone",
        );
        const events = await waitFor("the InvalidSpec Event", async () => {
          const events = await clusterEvents(client, ns, name, "InvalidSpec");
          return events.length > 0 && events;
        });
        assert.equal(events[0]?.type, "Warning");
        assert.equal(events[0]?.note, message);
        const before = await operator.metric("controller_runtime_reconcile_total", {
          controller: "databasecluster",
        });
        await new Promise((r) => setTimeout(r, 2_000));
        const after = await operator.metric("controller_runtime_reconcile_total", {
          controller: "databasecluster",
        });
        assert(after - before <= 1, `no retry storm: ${after - before} reconciles in 2 s`);
        assert.equal(
          (await clusterEvents(client, ns, name, "InvalidSpec")).length,
          1,
          "one Warning Event, not a storm",
        );

        await client.patch(DATABASE_CLUSTERS, name, { spec: { version: "17" } }, {
          type: "merge",
          namespace: ns,
        });
        await waitFor("InvalidSpec False after the fix", async () => {
          const dbc = await get();
          return condition(dbc, "InvalidSpec")?.status === "False" &&
            condition(dbc, "Ready")?.status === "True" &&
            (dbc.status as DatabaseStatus).observedGeneration === dbc.metadata?.generation;
        });
      },
    );

    await t.step(
      "a pod that stops being ready turns the cluster Degraded, its return Ready",
      async () => {
        const setReady = (status: "True" | "False") =>
          client.patch(PODS, `${name}-0`, {
            status: { conditions: [{ type: "Ready", status }] },
          }, { type: "strategic", subresource: "status", namespace: ns });
        await setReady("False");
        await waitFor("phase Degraded", async () => {
          const dbc = await get();
          return (dbc.status as DatabaseStatus).phase === "Degraded" &&
            condition(dbc, "Degraded")?.status === "True";
        });
        const degraded = await event(
          "ReplicasUnavailable",
          "Ready → Degraded: 0 of 1 replicas ready",
        );
        assert.equal(degraded.type, "Warning");
        await setReady("True");
        await ready(1);
        await event("Recovered", "Degraded → Ready: 1 of 1 replicas ready");
      },
    );

    await t.step("a child deleted or edited by someone else is restored", async () => {
      const before = await client.get(SERVICES, `${name}-headless`, { namespace: ns });
      await client.delete(SERVICES, `${name}-headless`, { namespace: ns });
      await waitFor("the headless Service recreated", async () => {
        const service = await getOrUndefined<V1Service & KubeObject>(
          client,
          SERVICES,
          `${name}-headless`,
          ns,
        );
        return service !== undefined && service.metadata?.uid !== before.metadata?.uid &&
          service.spec?.clusterIP === "None";
      });
      await client.patch(STATEFUL_SETS, name, { spec: { replicas: 3 } }, {
        type: "merge",
        namespace: ns,
      });
      await waitFor(
        "the StatefulSet back at 1 replica",
        async () => (await statefulSet()).spec?.replicas === 1,
      );
      await ready(1);
      await waitFor(
        `only ${name}-0 left`,
        async () => (await clusterPods(client, ns, name)).length === 1,
      );
    });

    await t.step(
      "deleting with deletionPolicy Retain runs the finalizer, removes the children, keeps the volumes and their credentials",
      async () => {
        const claimsBefore = await dataClaims(client, ns, name, 2);
        const secretBefore = await client.get(SECRETS, `${name}-credentials`, { namespace: ns });
        await client.delete(DATABASE_CLUSTERS, name, { namespace: ns });
        await waitFor(
          "the DatabaseCluster gone",
          async () => (await getOrUndefined(client, DATABASE_CLUSTERS, name, ns)) === undefined,
        );
        await event(
          "DeletionRequested",
          "Ready → Terminating: The DatabaseCluster is being deleted",
        );
        await waitFor(
          "the StatefulSet, Services and pods gone",
          async () =>
            (await getOrUndefined(client, STATEFUL_SETS, name, ns)) === undefined &&
            (await getOrUndefined(client, SERVICES, name, ns)) === undefined &&
            (await getOrUndefined(client, SERVICES, `${name}-headless`, ns)) === undefined &&
            (await clusterPods(client, ns, name)).length === 0,
        );
        const secretAfter = await client.get(SECRETS, `${name}-credentials`, { namespace: ns });
        assert.equal(secretAfter.metadata?.uid, secretBefore.metadata?.uid, "the Secret is kept");
        assert.deepEqual(secretAfter.data, secretBefore.data, "with the password the volumes hold");
        assert.equal(secretAfter.metadata?.ownerReferences, undefined, "released by the cluster");
        assert.equal(
          secretAfter.metadata?.labels?.["kinglet.dev/owner-name"],
          name,
          "still kinglet's, as its ownership policy requires",
        );
        const claimsAfter = await dataClaims(client, ns, name, 2);
        for (const [i, claim] of claimsAfter.entries()) {
          assert.equal(claim?.metadata?.uid, claimsBefore[i]?.metadata?.uid, `claim ${i} kept`);
          assert.equal(claim?.metadata?.deletionTimestamp, undefined, `claim ${i} not deleted`);
          assert.equal(claim?.status?.phase, "Bound");
        }
        assert.equal((await clusterEvents(client, ns, name, "VolumesDeleted")).length, 0);
      },
    );

    await t.step(
      "the operator exits cleanly, and neither its log nor any Event holds the password",
      async () => {
        assert.equal(await operator.stop(), 0, "SIGTERM exits 0");
        // Under deploy/'s RBAC and ownership policy: not one request refused.
        assertNoDenials(denialsInLog(await operator.log()), "kinglet");
        const log = await operator.log();
        assert(log.includes(`${ns}/${name}`), "the log mentions the cluster, so it was written");
        assert(!log.includes(password), "the password is not in the operator log");
        const events = await client.list(EVENTS, { namespace: ns });
        assert(events.items.length > 0);
        for (const event of events.items) {
          assert(
            !JSON.stringify(event).includes(password),
            `the password is in Event ${event.reason}`,
          );
        }
      },
    );
  } finally {
    await deleteNamespace(client, ns);
    client.close();
  }
});

Deno.test("a DatabaseCluster with deletionPolicy Delete takes every volume with it, even one scaled away", async () => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "e2e-dbc-delete");
  await using operator = await startOperator({ kubeconfig: await operatorKubeconfig() });
  await operator.ready();
  const name = "sessions";
  const ready = (replicas: number) =>
    waitFor(`DatabaseCluster ${name} Ready with ${replicas} ready replicas`, async () => {
      const dbc = await client.get(DATABASE_CLUSTERS, name, { namespace: ns });
      const status = dbc.status as DatabaseStatus | undefined;
      return status?.phase === "Ready" &&
        status.observedGeneration === dbc.metadata?.generation &&
        status.replicas === replicas && status.readyReplicas === replicas;
    });
  try {
    await client.create(
      DATABASE_CLUSTERS,
      databaseCluster(ns, name, {
        engine: "mysql",
        version: "8.4",
        replicas: 2,
        storage: { size: "2Gi" },
        deletionPolicy: "Delete",
      }),
    );
    await ready(2);
    const sts = await client.get<StatefulSet>(STATEFUL_SETS, name, { namespace: ns });
    assert.equal(sts.spec?.template.spec?.containers[0]?.image, "docker.io/library/mysql:8.4");
    assert.equal(sts.spec?.persistentVolumeClaimRetentionPolicy?.whenDeleted, "Delete");
    const claims = await dataClaims(client, ns, name, 2);
    assert.deepEqual(claims.map((c) => c?.status?.phase), ["Bound", "Bound"]);

    // The StatefulSet keeps the claim of a pod scaled away (whenScaled: Retain)
    // and does not delete it with itself: only kinglet's finalizer does.
    await client.patch(DATABASE_CLUSTERS, name, { spec: { replicas: 1 } }, {
      type: "merge",
      namespace: ns,
    });
    await ready(1);
    await client.delete(DATABASE_CLUSTERS, name, { namespace: ns });
    await waitFor(
      "the DatabaseCluster gone",
      async () => (await getOrUndefined(client, DATABASE_CLUSTERS, name, ns)) === undefined,
    );
    const deleted = await clusterEvent(
      client,
      ns,
      name,
      "VolumesDeleted",
      "deleted 2 PersistentVolumeClaims (deletionPolicy: Delete)",
    );
    assert.equal(deleted.type, "Normal");
    await waitFor("both claims deleted", async () => {
      const after = await dataClaims(client, ns, name, 2);
      return after.every((c) => c === undefined || c.metadata?.deletionTimestamp !== undefined);
    });
    await waitFor(
      "the StatefulSet and Services gone",
      async () =>
        (await getOrUndefined(client, STATEFUL_SETS, name, ns)) === undefined &&
        (await getOrUndefined(client, SERVICES, name, ns)) === undefined &&
        (await getOrUndefined(client, SERVICES, `${name}-headless`, ns)) === undefined,
    );
    assert.equal(await operator.stop(), 0, "SIGTERM exits 0");
    // Under deploy/'s RBAC and ownership policy: not one request refused.
    assertNoDenials(denialsInLog(await operator.log()), "kinglet");
  } finally {
    await deleteNamespace(client, ns);
    client.close();
  }
});
