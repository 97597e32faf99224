/**
 * Runs the Backup operator until SIGINT or SIGTERM:
 *
 * ```sh
 * deno run --allow-net --allow-read --allow-env --allow-sys=hostname examples/backup/main.ts
 * ```
 *
 * Apply its CRD first (`kubectl apply -f examples/backup/crds/`), and its
 * webhook configuration (`kubectl apply -f examples/backup/webhooks.yaml`)
 * where the API server runs on this machine, which it sends to
 * https://127.0.0.1:9443: the operator installs neither, so that its run
 * path never loads zod. It connects
 * as kubectl would (`KUBECONFIG`, in-cluster, `~/.kube/config`), campaigns
 * for the Lease `default/backup-operator` so that one replica of several is
 * active, and serves `/healthz` and `/readyz` on `HEALTH_ADDRESS` (default
 * `127.0.0.1:8081`), `/metrics` on `METRICS_ADDRESS` (default
 * `127.0.0.1:8080`) and its admission webhook over HTTPS on
 * `WEBHOOK_ADDRESS` (default `127.0.0.1:9443`, where `webhooks.yaml` sends
 * the API server beside it), on every replica, leader or not. Its CA and
 * certificate live in the Secret `default/backup-operator-webhook-tls`,
 * made and rotated by the operator, which puts the CA into the
 * configuration.
 *
 * @module
 */
import { Manager, setupLogging } from "@kinglet/kinglet/runtime";
import { backupController } from "./backup.ts";
import { backupWebhook, webhookServing } from "./webhook.ts";

setupLogging({ level: "info" }); // a failing reconcile is logged, not only counted
const manager = new Manager({
  reportingController: "example.kinglet.dev/backup",
  leaderElection: { namespace: "default", name: "backup-operator" }, // one replica is active
  metricsAddress: Deno.env.get("METRICS_ADDRESS"),
  healthAddress: Deno.env.get("HEALTH_ADDRESS"),
  webhook: { ...webhookServing, address: Deno.env.get("WEBHOOK_ADDRESS") },
});
manager.add(backupController);
manager.addWebhook(backupWebhook);
await manager.run(); // until SIGINT or SIGTERM; drains, releases the Lease, flushes the Events
