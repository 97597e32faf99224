/**
 * WebApp end to end: the operator runs as a separate process under the
 * deploy/ RBAC, against the real control plane where kwok makes pods Ready.
 */
import assert from "node:assert/strict";
import { assertNoDenials, denialsInLog } from "../../lib/testing/denials.ts";
import { DEPLOYMENTS, SERVICES } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import {
  adminClient,
  condition,
  createNamespace,
  deleteNamespace,
  eventsFor,
  getOrUndefined,
  waitFor,
} from "../_support/kube.ts";
import { startOperator } from "../_support/operator.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";

interface Deployment extends KubeObject {
  spec: {
    replicas: number;
    template: { spec: { containers: { image: string; env?: { name: string }[] }[] } };
  };
  status?: { readyReplicas?: number };
}

function webApp(namespace: string, name: string, spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    metadata: { name, namespace },
    spec,
  };
}

Deno.test("webapp lifecycle: create, scale, update, invalid spec, drift repair, delete", async (t) => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "e2e-wa");
  await using operator = await startOperator({ kubeconfig: await operatorKubeconfig() });
  await operator.ready();
  const name = "shop";
  const ready = (replicas: number) =>
    waitFor(`WebApp ${name} Ready with ${replicas} ready replicas`, async () => {
      const app = await client.get(WEB_APPS, name, { namespace: ns });
      const status = app.status as { readyReplicas?: number; phase?: string } | undefined;
      return condition(app, "Ready")?.status === "True" && status?.readyReplicas === replicas &&
        app;
    });
  const deployment = () => client.get<Deployment>(DEPLOYMENTS, name, { namespace: ns });

  try {
    await t.step("a new WebApp gets a Deployment and Service and becomes Ready", async () => {
      await client.create(WEB_APPS, webApp(ns, name, { image: "nginx:1.27", replicas: 2 }));
      const app = await ready(2);
      const status = app.status as { url?: string; observedGeneration?: number };
      assert.equal(status.url, `http://${name}.${ns}.svc.cluster.local:8080`);
      assert.equal(status.observedGeneration, app.metadata?.generation);
      const service = await client.get(SERVICES, name, { namespace: ns });
      assert.equal(service.metadata?.ownerReferences?.[0]?.uid, app.metadata?.uid);
      assert.equal(service.metadata?.labels?.["app.kubernetes.io/managed-by"], "kinglet");
    });

    await t.step("scaling up and down reaches the new replica count", async () => {
      await client.patch(WEB_APPS, name, { spec: { replicas: 3 } }, {
        type: "merge",
        namespace: ns,
      });
      await ready(3);
      assert.equal((await deployment()).spec.replicas, 3);
      await client.patch(WEB_APPS, name, { spec: { replicas: 1 } }, {
        type: "merge",
        namespace: ns,
      });
      await ready(1);
      assert.equal((await deployment()).spec.replicas, 1);
    });

    await t.step("a new image rolls out to the Deployment", async () => {
      await client.patch(WEB_APPS, name, { spec: { image: "nginx:1.28" } }, {
        type: "merge",
        namespace: ns,
      });
      await waitFor(
        "the Deployment to carry nginx:1.28",
        async () => (await deployment()).spec.template.spec.containers[0]?.image === "nginx:1.28",
      );
      await ready(1);
    });

    await t.step(
      "an invalid spec gets InvalidSpec and one Warning Event, a fix recovers",
      async () => {
        // Passes the CRD schema, fails semantic validation: requests above limits.
        const resources = { requests: { cpu: "2" }, limits: { cpu: "1" } };
        await client.patch(WEB_APPS, name, { spec: { resources } }, {
          type: "merge",
          namespace: ns,
        });
        const app = await waitFor("InvalidSpec True", async () => {
          const app = await client.get(WEB_APPS, name, { namespace: ns });
          return condition(app, "InvalidSpec")?.status === "True" && app;
        });
        assert.match(condition(app, "InvalidSpec")?.message ?? "", /spec\.resources/);
        assert.equal((app.status as { phase?: string }).phase, "Invalid");
        const events = await waitFor("the InvalidSpec Event", async () => {
          const events = await eventsFor(client, ns, name, "InvalidSpec");
          return events.length > 0 && events;
        });
        assert.equal(events.length, 1, "one Warning Event, not a storm");
        assert.equal(events[0]?.type, "Warning");
        // Only an invalid spec fails here, so failed reconciles count its retries.
        const failed = () =>
          operator.metric("controller_runtime_reconcile_total", {
            controller: "webapp",
            result: "error",
          });
        const errorsBefore = await failed();
        await new Promise((r) => setTimeout(r, 2_000));
        const retries = (await failed()) - errorsBefore;
        assert.ok(retries <= 1, `no retry storm: ${retries} failed reconciles in 2 s`);
        await client.patch(WEB_APPS, name, { spec: { resources: { limits: { cpu: "2" } } } }, {
          type: "merge",
          namespace: ns,
        });
        await waitFor("InvalidSpec False after the fix", async () => {
          const app = await client.get(WEB_APPS, name, { namespace: ns });
          return condition(app, "InvalidSpec")?.status === "False" &&
            condition(app, "Ready")?.status === "True";
        });
      },
    );

    await t.step("a child edited or deleted by someone else is restored", async () => {
      await client.patch(DEPLOYMENTS, name, { spec: { replicas: 5 } }, {
        type: "merge",
        namespace: ns,
      });
      await waitFor(
        "the Deployment back at 1 replica",
        async () => (await deployment()).spec.replicas === 1,
      );
      const before = await client.get(SERVICES, name, { namespace: ns });
      await client.delete(SERVICES, name, { namespace: ns });
      await waitFor("the Service recreated", async () => {
        const service = await getOrUndefined(client, SERVICES, name, ns);
        return service !== undefined && service.metadata?.uid !== before.metadata?.uid;
      });
    });

    await t.step("deleting the WebApp removes its children", async () => {
      await client.delete(WEB_APPS, name, { namespace: ns });
      await waitFor(
        "the WebApp gone",
        async () => (await getOrUndefined(client, WEB_APPS, name, ns)) === undefined,
      );
      await waitFor(
        "the Deployment and Service gone",
        async () =>
          (await getOrUndefined(client, DEPLOYMENTS, name, ns)) === undefined &&
          (await getOrUndefined(client, SERVICES, name, ns)) === undefined,
      );
    });

    assert.equal(await operator.stop(), 0, "SIGTERM exits 0");
    // Under deploy/'s RBAC and ownership policy: not one request refused.
    assertNoDenials(denialsInLog(await operator.log()), "kinglet");
  } finally {
    await deleteNamespace(client, ns);
    client.close();
  }
});

Deno.test("an operator restarted mid-convergence still converges every WebApp", async () => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "e2e-restart");
  const kubeconfig = await operatorKubeconfig();
  try {
    const first = await startOperator({ kubeconfig });
    await first.ready();
    const names = Array.from({ length: 20 }, (_, i) => `app-${i}`);
    await Promise.all(
      names.map((n) => client.create(WEB_APPS, webApp(ns, n, { image: "nginx", replicas: 1 }))),
    );
    await first.stop("SIGKILL");
    await using second = await startOperator({ kubeconfig });
    await second.ready();
    await waitFor("all 20 WebApps Ready", async () => {
      const list = await client.list(WEB_APPS, { namespace: ns });
      return list.items.length === 20 &&
        list.items.every((a) => condition(a, "Ready")?.status === "True");
    }, 120_000);
    assert.equal(await second.stop(), 0);
  } finally {
    await deleteNamespace(client, ns);
    client.close();
  }
});
