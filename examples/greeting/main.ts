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
import { Manager, setupLogging } from "../../lib/runtime/mod.ts";
import { GREETING_CRD } from "./crd.ts";
import { greetingController, MANAGER } from "./greeting.ts";

setupLogging({ level: "info" }); // a failing reconcile is logged, not only counted
const client = new KubeClient(await loadConfig());
// An operator that ships on its own may install its CRD; most ship it in their manifests.
await client.apply(CUSTOM_RESOURCE_DEFINITIONS, GREETING_CRD, {
  fieldManager: MANAGER,
  force: true,
});

const stop = new AbortController();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => stop.abort());
}
const manager = new Manager({
  client,
  reportingController: "example.kinglet.dev/greeting",
  // The default, the host's name, needs --allow-sys=hostname.
  reportingInstance: Deno.env.get("HOSTNAME") ?? MANAGER,
  metricsAddress: Deno.env.get("METRICS_ADDRESS") ?? "127.0.0.1:8080",
  healthAddress: Deno.env.get("HEALTH_ADDRESS") ?? "127.0.0.1:8081",
});
manager.add(greetingController);
await manager.run(stop.signal); // drains reconciles in flight, then flushes their Events
client.close();
