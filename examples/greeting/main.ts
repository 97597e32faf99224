/**
 * Runs the Greeting operator until SIGINT or SIGTERM:
 *
 * ```sh
 * deno run --allow-net --allow-read --allow-env examples/greeting/main.ts
 * ```
 *
 * It connects as kubectl would (`KUBECONFIG`, or in-cluster), installs the
 * Greeting CRD, and serves `/healthz` and `/readyz` on `HEALTH_ADDRESS`
 * (default `127.0.0.1:8081`) and `/metrics` on `METRICS_ADDRESS` (default
 * `127.0.0.1:8080`).
 *
 * @module
 */
import { CUSTOM_RESOURCE_DEFINITIONS, KubeClient, loadConfig } from "../../lib/kube/mod.ts";
import { EventRecorder, eventSink, Manager } from "../../lib/runtime/mod.ts";
import { GREETING_CRD } from "./crd.ts";
import { greetingController } from "./greeting.ts";

const client = new KubeClient(await loadConfig());
// An operator that ships on its own may install its CRD; most ship it in their manifests.
await client.apply(CUSTOM_RESOURCE_DEFINITIONS, GREETING_CRD, {
  fieldManager: "greeting-operator",
  force: true,
});

const stop = new AbortController();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => stop.abort());
}
const events = new EventRecorder(eventSink(client), {
  reportingController: "example.kinglet.dev/greeting",
  reportingInstance: Deno.env.get("HOSTNAME") ?? "greeting-operator",
});
const manager = new Manager({
  client,
  metricsAddress: Deno.env.get("METRICS_ADDRESS") ?? "127.0.0.1:8080",
  healthAddress: Deno.env.get("HEALTH_ADDRESS") ?? "127.0.0.1:8081",
});
manager.add(greetingController(client, events));
await manager.run(stop.signal); // drains reconciles in flight once `stop` aborts
await events.flush(AbortSignal.timeout(5_000));
client.close();
