/**
 * Runs the Widget operator until SIGINT or SIGTERM (`deno task start`).
 *
 * Apply its CRD first (`deno task crds`, then `kubectl apply -f crds/`;
 * deployed, deploy/kustomization.yaml applies it): the operator never installs
 * it, so that its run path loads no zod, and its least-privilege RBAC holds no
 * right to. It takes the flags `kinglet run` takes to connect, log and keep a
 * memory limit (`--help` lists them): `--kubeconfig` and `--context`,
 * else it connects as kubectl would (`KUBECONFIG`, in-cluster,
 * `~/.kube/config`); each flag is also set by its variable under the prefix
 * of src/operator.ts. It serves `/healthz` and `/readyz` on
 * `HEALTH_ADDRESS` (default `127.0.0.1:8081`) and `/metrics` on
 * `METRICS_ADDRESS` (default `127.0.0.1:8080`).
 *
 * Deployed (deploy/'s Deployment and systemd unit pass `--leader-elect`), it
 * campaigns for the Lease of src/operator.ts and keeps under the memory limit
 * of `--memory-limit`. `install --kubeconfig <admin> --node-kubeconfig <path>`
 * applies its RBAC and writes a kubeconfig of the operator's own
 * ServiceAccount (deploy/systemd/'s credentials service runs it). A bad flag
 * or variable exits 2, which the units do not restart on; a failure, 1.
 *
 * @module
 */
import { exitOnError, operatorFlags } from "@kinglet/kinglet/cli";
import { Manager, setupLogging } from "@kinglet/kinglet/runtime";
import { widgetController } from "./src/controller.ts";
import { operator } from "./src/operator.ts";

if (Deno.args[0] === "install") {
  // deploy/systemd/'s credentials service: this operator's own kubeconfig, from the admin's.
  const { runNodeInstall } = await import("@kinglet/kinglet/deploy");
  const args = Deno.args.slice(1);
  Deno.exit(await runNodeInstall(operator, args).catch((error) => exitOnError(operator, error)));
}
const flags = operatorFlags(operator); // --help prints the flags; a bad one is said, exit 2
setupLogging(flags.logging); // a failing reconcile is logged, not only counted
const manager = new Manager({
  reportingController: "example.org/widget-operator",
  connection: flags.connection,
  metricsAddress: Deno.env.get("METRICS_ADDRESS"),
  healthAddress: Deno.env.get("HEALTH_ADDRESS"),
  memoryLimit: flags.memoryLimit,
  ...(flags.leaderElect && {
    leaderElection: { namespace: operator.namespace, name: operator.leaseName },
  }),
});
manager.add(widgetController);
// Until SIGINT or SIGTERM: drains, flushes the Events. A lost Lease exits 1, to campaign again.
const outcome = await manager.run().catch((error) => exitOnError(operator, error));
Deno.exit(outcome === "stopped" ? 0 : 1);
