/**
 * Runs the Greeting operator until SIGINT or SIGTERM:
 *
 * ```sh
 * deno run --allow-net --allow-read --allow-env --allow-sys=hostname examples/greeting/main.ts
 * ```
 *
 * Apply its CRD first (`kubectl apply -f examples/greeting/crds/`): the
 * operator does not install it, so that its run path never loads zod. It
 * connects as kubectl would (`KUBECONFIG`, in-cluster, `~/.kube/config`),
 * and serves `/healthz` and `/readyz` on `HEALTH_ADDRESS` (default
 * `127.0.0.1:8081`) and `/metrics` on `METRICS_ADDRESS` (default
 * `127.0.0.1:8080`).
 *
 * @module
 */
import { Manager, setupLogging } from "@kinglet/kinglet/runtime";
import { greetingController } from "./greeting.ts";

setupLogging({ level: "info" }); // a failing reconcile is logged, not only counted
const manager = new Manager({
  reportingController: "example.kinglet.dev/greeting",
  metricsAddress: Deno.env.get("METRICS_ADDRESS"),
  healthAddress: Deno.env.get("HEALTH_ADDRESS"),
});
manager.add(greetingController);
await manager.run(); // until SIGINT or SIGTERM; drains, then flushes the Events
