/**
 * The harness takes the measured kind's scope from its CRD and addresses the
 * objects of a cluster-scoped kind without a namespace: creates, patches,
 * deletes, the tracker's list and watch.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { KubeClient } from "../../lib/kube/client.ts";
import { resourcePath } from "../../lib/kube/resources.ts";
import { noToken } from "../../lib/kube/token_source.ts";
import {
  createObjects,
  deleteObjects,
  removeObjects,
  updateObjects,
} from "../../bench/harness/load.ts";
import { ReadinessTracker } from "../../bench/measure/readiness_tracker.ts";
import {
  buildTarget,
  loadTarget,
  objectScope,
  renderObject,
  type Target,
} from "../../bench/harness/target.ts";

function crdYaml(scope: "Namespaced" | "Cluster"): string {
  return [
    "apiVersion: apiextensions.k8s.io/v1",
    "kind: CustomResourceDefinition",
    "metadata: { name: edgesites.example.com }",
    "spec:",
    "  group: example.com",
    `  scope: ${scope}`,
    "  names: { kind: EdgeSite, plural: edgesites, singular: edgesite, listKind: EdgeSiteList }",
    "",
  ].join("\n");
}

/** Writes an EdgeSite target beside a CRD of `scope` (after an unrelated one) and loads it. */
async function edgeSiteTarget(scope: "Namespaced" | "Cluster", plural = "edgesites") {
  const dir = await Deno.makeTempDir();
  const other = crdYaml("Namespaced").replaceAll("edgesite", "webapp").replace(
    "example.com\n",
    "kinglet.dev\n",
  );
  await Deno.writeTextFile(join(dir, "crds.yaml"), `${other}---\n${crdYaml(scope)}`);
  await Deno.writeTextFile(
    join(dir, "edgesite.json"),
    JSON.stringify({
      name: "edgesite",
      command: ["{deno}", "run", "main.ts", "--kubeconfig={kubeconfig}"],
      crds: ["crds.yaml"],
      plural,
      object: {
        apiVersion: "example.com/v1",
        kind: "EdgeSite",
        metadata: { name: "{name}", namespace: "{namespace}" },
        spec: { siteNamespace: "{namespace}-{index}" },
      },
      update: { spec: { quota: "2" } },
      ready: { path: "status.conditions[type=Ready].status", equals: "True" },
    }),
  );
  return { dir, load: () => loadTarget(join(dir, "edgesite.json")) };
}

async function withTarget(
  scope: "Namespaced" | "Cluster",
  body: (target: Target) => void | Promise<void>,
): Promise<void> {
  const { dir, load } = await edgeSiteTarget(scope);
  try {
    await body(await load());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a target's kind takes its scope from its CRD", async () => {
  await withTarget("Cluster", (target) => {
    assert.equal(target.resource.namespaced, false);
    assert.deepEqual(objectScope(target, "bench"), {});
    assert.equal(
      resourcePath(target.resource, { ...objectScope(target, "bench"), name: "app-00001" }),
      "/apis/example.com/v1/edgesites/app-00001",
    );
    const object = renderObject(target, {
      name: "app-1",
      namespace: "bench",
      index: 0,
      replicas: 1,
    });
    assert.deepEqual(object.metadata, { name: "app-1" });
    assert.deepEqual(object.spec, { siteNamespace: "bench-0" });
  });
  await withTarget("Namespaced", (target) => {
    assert.equal(target.resource.namespaced, true);
    assert.equal(
      resourcePath(target.resource, objectScope(target, "bench")),
      "/apis/example.com/v1/namespaces/bench/edgesites",
    );
    const object = renderObject(target, {
      name: "app-1",
      namespace: "bench",
      index: 0,
      replicas: 1,
    });
    assert.deepEqual(object.metadata, { name: "app-1", namespace: "bench" });
  });
});

Deno.test("a target whose build writes its CRDs takes its kind's scope once built", async () => {
  const { dir } = await edgeSiteTarget("Cluster");
  try {
    const file = join(dir, "edgesite.json");
    const raw = JSON.parse(await Deno.readTextFile(file));
    await Deno.rename(join(dir, "crds.yaml"), join(dir, "built.yaml"));
    raw.build = ["{deno}", "eval", "Deno.copyFileSync('built.yaml', 'crds.yaml')"];
    await Deno.writeTextFile(file, JSON.stringify(raw));
    const target = await loadTarget(file);
    await buildTarget(target);
    assert.equal(target.resource.namespaced, false);
    assert.deepEqual(objectScope(target, "bench"), {});
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a target whose CRDs do not define its kind is refused, naming the kind", async () => {
  const { dir, load } = await edgeSiteTarget("Cluster", "edgesite");
  try {
    await assert.rejects(load, (error: Error) =>
      error instanceof TypeError &&
      error.message.includes("none of its 'crds' defines edgesite.example.com"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the load and the tracker address a cluster-scoped kind without a namespace", async () => {
  const seen: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    seen.push(`${req.method} ${url.pathname}${url.searchParams.has("watch") ? " (watch)" : ""}`);
    if (req.method === "GET" && url.searchParams.has("watch")) return new Response("");
    if (req.method === "GET") {
      return Response.json({ kind: "EdgeSiteList", metadata: { resourceVersion: "1" }, items: [] });
    }
    const body = req.body ? await req.text() : "";
    const name = url.pathname.split("/").at(-1) === "edgesites"
      ? JSON.parse(body).metadata.name
      : url.pathname.split("/").at(-1);
    return Response.json({ apiVersion: "example.com/v1", kind: "EdgeSite", metadata: { name } });
  });
  const client = new KubeClient({
    server: `http://127.0.0.1:${server.addr.port}`,
    auth: noToken,
    namespace: "default",
    source: "test",
  });
  try {
    await withTarget("Cluster", async (target) => {
      const tracker = new ReadinessTracker({
        client,
        resource: target.resource,
        ...objectScope(target, "bench"),
        rule: target.ready,
        now: () => 0,
      });
      const workload = { client, target, namespace: "bench", tracker, replicas: 1 };
      const pace = { ratePerSecond: 1000 };
      await createObjects(workload, ["app-1"], pace);
      await updateObjects(workload, ["app-1"], pace);
      await deleteObjects(workload, ["app-1"], pace);
      await removeObjects(client, target, ["app-1"]);
      const watching = new AbortController();
      const run = tracker.run(watching.signal);
      while (!seen.some((line) => line.endsWith("(watch)"))) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      watching.abort();
      await run;
    });
  } finally {
    client.close();
    await server.shutdown();
  }
  const collection = "/apis/example.com/v1/edgesites";
  assert.deepEqual(seen.slice(0, 6), [
    `POST ${collection}`,
    `PATCH ${collection}/app-1`,
    `DELETE ${collection}/app-1`,
    `DELETE ${collection}/app-1`,
    `GET ${collection}`,
    `GET ${collection} (watch)`,
  ]);
});
