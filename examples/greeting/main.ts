/**
 * Runs the Greeting operator until SIGINT or SIGTERM:
 *
 * ```sh
 * deno run --allow-net --allow-read --allow-env --allow-sys=hostname examples/greeting/main.ts
 * ```
 *
 * It connects as kubectl would (`KUBECONFIG`, in-cluster, `~/.kube/config`),
 * installs the Greeting CRD, and serves `/healthz` and `/readyz` on
 * `HEALTH_ADDRESS` (default `127.0.0.1:8081`) and `/metrics` on
 * `METRICS_ADDRESS` (default `127.0.0.1:8080`).
 *
 * @module
 */
import { Manager, setupLogging } from "@kinglet/kinglet/runtime";
import { greetingController } from "./greeting.ts";
import { greetings } from "./schema.ts";

setupLogging({ level: "info" }); // a failing reconcile is logged, not only counted
const manager = new Manager({
  crds: [greetings.crd()], // most operators ship their CRDs in their manifests instead
  reportingController: "example.kinglet.dev/greeting",
  metricsAddress: Deno.env.get("METRICS_ADDRESS"),
  healthAddress: Deno.env.get("HEALTH_ADDRESS"),
});
manager.add(greetingController);
await manager.run(); // until SIGINT or SIGTERM; drains, then flushes the Events
