/**
 * The CPU floor of a backlog of WebApps for a Deno client: what kinglet's own
 * Kubernetes client alone costs to make the writes `backlog-N` needs and to
 * decode the watch events they cause, with none of the runtime (no caches,
 * queue, reconciles, Events or metrics). Per WebApp it applies the
 * Deployment and the Service (at once), then writes the status twice
 * (progressing, then ready), as kinglet does, `--in-flight` WebApps at
 * once, while three watches (WebApps, Deployments, Services) decode every
 * event; it ends once the events have been quiet for 3 s.
 *
 *   deno run -A hack/with_cluster.ts -- deno run -A \
 *     --v8-flags=--max-semi-space-size=1,--optimize-for-size,--no-opt bench/probes/backlog_floor.ts
 *
 * Run it with kinglet's V8 flags (above) to compare with a `backlog-N` of the
 * bench. The kubeconfig (`--kubeconfig`, else `KINGLET_TEST_KUBECONFIG`) must
 * allow installing the WebApp CRD and creating a namespace; the probe creates
 * `--objects` WebApps in a namespace of its own (not counted), then counts the
 * process CPU (user plus system, all threads, from `/proc/self/stat`) from its
 * first write to the end, quiet seconds included, and deletes the namespace.
 * Prints one JSON line.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { DEPLOYMENTS, NAMESPACES, SERVICES } from "../../lib/kube/resources.ts";
import type { Resource } from "../../lib/kube/types.ts";
import { crdDocuments } from "../../lib/cli/install.ts";
import { installCrds } from "../../lib/runtime/crds/mod.ts";
import { renderWebApp } from "../../lib/operators/webapp/render.ts";
import { WEB_APPS, type WebApp } from "../../lib/operators/webapp/kind.ts";
import { paced } from "../harness/pace.ts";
import { readProcessTree } from "../measure/process_sampler.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    kubeconfig: { type: "string" },
    objects: { type: "string", default: "1000" },
    "in-flight": { type: "string", default: "8" },
  },
});
const objects = Number(values.objects);
const inFlight = Number(values["in-flight"]);
const kubeconfig = values.kubeconfig ?? Deno.env.get("KINGLET_TEST_KUBECONFIG");
if (!kubeconfig) throw new Error("Cannot probe: give --kubeconfig or set KINGLET_TEST_KUBECONFIG");
for (const [name, value] of [["objects", objects], ["in-flight", inFlight]] as const) {
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`Cannot probe: --${name} must be a whole number above 0, got ${value}`);
  }
}

/** Seconds of CPU this process has used, user plus system, on every thread. */
function cpuSeconds(): number {
  return readProcessTree(Deno.pid)!.cpuSeconds;
}

const client = new KubeClient(await loadConfig({ kubeconfig }), { qps: 1e6, burst: 1e6 });
const namespace = `backlog-floor-${Date.now().toString(36)}`;
const webAppCrd = crdDocuments().filter((crd) => crd.spec.names.plural === WEB_APPS.plural);
await installCrds(client, webAppCrd, { fieldManager: "backlog-floor" });
await client.create(NAMESPACES, {
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name: namespace },
});
const apps: WebApp[] = Array.from({ length: objects }, (_, i) => ({
  apiVersion: "kinglet.dev/v1alpha1",
  kind: "WebApp",
  metadata: { name: `app-${String(i + 1).padStart(5, "0")}`, namespace },
  spec: { image: "registry.k8s.io/pause:3.10", replicas: 0, port: 8080 },
}));
const created = new Map<string, WebApp>();
/** Sends `work` for every item, `inFlight` at once, as fast as the server answers. */
const eachAtOnce = <T>(items: T[], inFlight: number, work: (item: T) => Promise<void>) =>
  paced(items, { ratePerSecond: Infinity, inFlight }, undefined, work);

await eachAtOnce(apps, 32, async (app) => {
  created.set(app.metadata.name!, await client.create(WEB_APPS, app));
});

const stop = new AbortController();
let events = 0;
let lastEvent = performance.now();
async function watch(resource: Resource): Promise<void> {
  try {
    for await (const _ of client.watch(resource, { namespace, signal: stop.signal })) {
      events++;
      lastEvent = performance.now();
    }
  } catch (e) {
    if (!stop.signal.aborted) throw e;
  }
}

const condition = (ready: boolean) => ({
  observedGeneration: 1,
  conditions: [{
    type: "Ready",
    status: ready ? "True" : "False",
    reason: ready ? "Available" : "Progressing",
    message: ready ? "every replica is available" : "waiting for the Deployment",
    lastTransitionTime: new Date().toISOString(),
  }],
});

const cpuBefore = cpuSeconds();
const started = performance.now();
const watches = [WEB_APPS, DEPLOYMENTS, SERVICES].map((resource) => watch(resource));
let requests = 0;
await eachAtOnce([...created.values()], inFlight, async (app) => {
  const { deployment, service } = renderWebApp(app);
  const apply = { fieldManager: "kinglet", force: true } as const;
  await Promise.all([
    client.apply(DEPLOYMENTS, deployment, apply),
    client.apply(SERVICES, service, apply),
  ]);
  const { apiVersion, kind, metadata: { name } } = app;
  for (const ready of [false, true]) {
    const status = { apiVersion, kind, metadata: { name, namespace }, status: condition(ready) };
    await client.apply(WEB_APPS, status, { ...apply, subresource: "status" });
  }
  requests += 4;
});
const written = performance.now();
while (performance.now() - lastEvent < 3_000) await new Promise((r) => setTimeout(r, 250));
stop.abort();
await Promise.all(watches);
const cpu = cpuSeconds() - cpuBefore;
Deno.stdout.writeSync(new TextEncoder().encode(`${
  JSON.stringify({
    objects,
    inFlight,
    requests,
    events,
    writtenSeconds: Math.round(written - started) / 1000,
    cpuSeconds: Math.round(cpu * 100) / 100,
    cpuMsPerObject: Math.round(cpu / objects * 1e5) / 100,
    load: Deno.loadavg()[0],
  })
}\n`));
await client.delete(NAMESPACES, namespace);
client.close();
