// deno-lint-ignore-file no-console -- a terminal program
/**
 * The dev loop (`deno task dev`): starts the local control plane, installs
 * the CRDs, applies `deploy/samples/`, runs the operator as `deno task start`
 * would, and prints the custom resources as they converge, until Ctrl-C
 * stops the operator (SIGTERM, so it drains and exits) and the cluster.
 *
 * ```sh
 * deno task dev                 # everything above
 * deno task dev --no-samples    # an empty cluster with the operator
 * ```
 *
 * While it runs, `export KUBECONFIG=<printed path>` and use kubectl from the
 * printed bin folder against the same cluster.
 *
 * @module
 */
import { installCrds } from "../lib/cli/install.ts";
import { KubeClient } from "../lib/kube/client.ts";
import { loadConfig } from "../lib/kube/config.ts";
import { systemClock } from "../lib/runtime/clock.ts";
import { startCluster } from "./cluster.ts";
import { denoFlags, grantsFromEnv, MALLOC_ENV } from "./_permissions.ts";

const SAMPLES = new URL("../deploy/samples/", import.meta.url).pathname;
const log = (message: string) => console.error(`[dev] ${message}`);

async function main(args: string[]): Promise<number> {
  const stop = new AbortController();
  for (const s of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(s, () => stop.abort());
  log("starting the local control plane (the first run builds it from Go modules)");
  await using cluster = await startCluster({ signal: stop.signal, log });
  const kubectl = `${cluster.binDir}/kubectl`;
  log(`cluster up at ${cluster.server}`);
  log(`export KUBECONFIG=${cluster.kubeconfig} PATH=${cluster.binDir}:$PATH`);
  const client = new KubeClient(await loadConfig({ kubeconfig: cluster.kubeconfig }));
  try {
    log(
      `CRDs Established: ${
        (await installCrds(client, { namespace: "kinglet-system" })).join(", ")
      }`,
    );
  } finally {
    client.close();
  }
  const grants = grantsFromEnv({ ...Deno.env.toObject(), KINGLET_ALLOW_READ: cluster.kubeconfig });
  const command = Deno.execPath();
  const runArgs = [
    "run",
    ...denoFlags(grants),
    new URL("../main.ts", import.meta.url).pathname,
    "run",
    "--kubeconfig",
    cluster.kubeconfig,
    "--log-format=text",
    "--metrics-bind-address=127.0.0.1:8080",
    "--health-probe-bind-address=127.0.0.1:8081",
  ];
  const operator = new Deno.Command(command, { args: runArgs, env: MALLOC_ENV, stdin: "null" })
    .spawn();
  log(`operator running (pid ${operator.pid}); metrics on http://127.0.0.1:8080/metrics`);
  if (!args.includes("--no-samples")) {
    const applied = await run(kubectl, [
      "--kubeconfig",
      cluster.kubeconfig,
      "apply",
      "-f",
      SAMPLES,
    ]);
    log(`samples applied:\n${applied.trim()}`);
  }
  while (!stop.signal.aborted) {
    const table = await run(kubectl, [
      "--kubeconfig",
      cluster.kubeconfig,
      "get",
      "wa,dbc,isvc",
      "--all-namespaces",
    ]).catch((e) => String(e));
    console.log(`\n${new Date().toISOString()}\n${table.trim()}`);
    await systemClock.sleep(5_000, stop.signal).catch(() => {});
    if (await Promise.race([operator.status.then(() => true), Promise.resolve(false)])) {
      log("the operator exited; stopping");
      break;
    }
  }
  log("stopping the operator (SIGTERM) and the cluster");
  try {
    operator.kill("SIGTERM");
  } catch { /* already gone */ }
  const { code } = await operator.status;
  log(`operator exited with ${code}`);
  return code;
}

async function run(command: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${command} ${args.join(" ")} failed:\n${text}`);
  return text;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
