// deno-lint-ignore-file no-console -- a terminal program
/**
 * The dev loop (`deno task dev`): starts the local control plane, installs
 * the CRDs, applies `deploy/samples/`, runs the operator as `deno task start`
 * would (the bundle, rebuilt when a source changed), and shows the custom resources as they converge, until Ctrl-C
 * stops the operator (SIGTERM, so it drains and exits) and the cluster.
 *
 * In a terminal, one view is redrawn in place every two seconds (see
 * `_dev_view.ts`): the custom resources with phase, ready/desired and age,
 * the last Events, and the operator's resident memory, reconciles per second
 * and queue depth from its `/metrics`; the operator's log goes to a file
 * named at the bottom. Without a terminal (piped, in CI), `kubectl get`
 * tables are printed line by line every five seconds, the operator's log
 * interleaved.
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
import { install } from "../lib/cli/install.ts";
import { KubeClient } from "../lib/kube/client.ts";
import { loadConfig } from "../lib/kube/config.ts";
import { EVENTS } from "../lib/kube/resources.ts";
import type { KubeObject, Resource } from "../lib/kube/types.ts";
import { DATABASE_CLUSTERS, INFERENCE_SERVICES, WEB_APPS } from "../lib/operators/mod.ts";
import { systemClock } from "../lib/async/clock.ts";
import { startCluster } from "../lib/testing/control_plane/mod.ts";
import { type MetricSums, operatorFigures, redraw, renderView, sumMetrics } from "./_dev_view.ts";
import { buildBundle, BuildError } from "./build.ts";
import { denoFlags, grantsFromEnv, kingletEnv } from "./_permissions.ts";

const SAMPLES = new URL("../deploy/samples/", import.meta.url).pathname;
const log = (message: string) => console.error(`[dev] ${message}`);

async function main(args: string[]): Promise<number> {
  const stop = new AbortController();
  for (const s of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(s, () => stop.abort());
  // Before the cluster starts: a source that does not compile stops the loop at once.
  let entry: string;
  try {
    ({ entry } = await buildBundle({ log }));
  } catch (error) {
    if (!(error instanceof BuildError)) throw error;
    log(error.message);
    return 1;
  }
  log("starting the local control plane (the first run builds it from Go modules)");
  await using cluster = await startCluster({ signal: stop.signal, log });
  const kubectl = `${cluster.binDir}/kubectl`;
  log(`cluster up at ${cluster.server}`);
  log(`export KUBECONFIG=${cluster.kubeconfig} PATH=${cluster.binDir}:$PATH`);
  using client = closing(new KubeClient(await loadConfig({ kubeconfig: cluster.kubeconfig })));
  log(
    `CRDs Established: ${
      (await install(client.value, { namespace: "kinglet-system" })).join(", ")
    }`,
  );
  const grants = grantsFromEnv({ ...Deno.env.toObject(), KINGLET_ALLOW_READ: cluster.kubeconfig });
  const command = Deno.execPath();
  const runArgs = [
    "run",
    ...denoFlags(grants),
    entry,
    "run",
    "--kubeconfig",
    cluster.kubeconfig,
    "--log-format=text",
    "--metrics-bind-address=127.0.0.1:8080",
    "--health-probe-bind-address=127.0.0.1:8081",
  ];
  const live = Deno.stdout.isTerminal();
  const logFile = live ? await Deno.makeTempFile({ prefix: "kinglet-dev-", suffix: ".log" }) : "";
  const operator = new Deno.Command(command, {
    args: runArgs,
    env: kingletEnv(Deno.env.toObject()),
    stdin: "null",
    ...(live && { stdout: "piped", stderr: "piped" }),
  }).spawn();
  const copying = live ? copyToFile([operator.stdout, operator.stderr], logFile) : undefined;
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
  const exited = operator.status.then(() => true);
  const hasExited = () => Promise.race([exited, Promise.resolve(false)]);
  if (live) {
    await liveView(client.value, cluster.server, logFile, stop.signal, hasExited);
  } else {
    await lineByLine(kubectl, cluster.kubeconfig, stop.signal, hasExited);
  }
  log("stopping the operator (SIGTERM) and the cluster");
  try {
    operator.kill("SIGTERM");
  } catch { /* already gone */ }
  const { code } = await operator.status;
  await copying;
  log(`operator exited with ${code}${live ? `; its log: ${logFile}` : ""}`);
  return code;
}

/** `kubectl get` tables every five seconds, for a log file or CI. */
async function lineByLine(
  kubectl: string,
  kubeconfig: string,
  signal: AbortSignal,
  hasExited: () => Promise<boolean>,
): Promise<void> {
  while (!signal.aborted) {
    const table = await run(kubectl, [
      "--kubeconfig",
      kubeconfig,
      "get",
      "wa,dbc,isvc",
      "--all-namespaces",
    ]).catch((e) => String(e));
    console.log(`\n${new Date().toISOString()}\n${table.trim()}`);
    await systemClock.sleep(5_000, signal).catch(() => {});
    if (await hasExited()) {
      log("the operator exited; stopping");
      return;
    }
  }
}

const KINDS: Resource[] = [WEB_APPS, DATABASE_CLUSTERS, INFERENCE_SERVICES];
const encoder = new TextEncoder();

/** One screen redrawn in place every two seconds, on the terminal's alternate screen. */
async function liveView(
  client: KubeClient,
  server: string,
  logFile: string,
  signal: AbortSignal,
  hasExited: () => Promise<boolean>,
): Promise<void> {
  const write = (text: string) => Deno.stdout.writeSync(encoder.encode(text));
  let previous: { sums: MetricSums; at: number } | undefined;
  write("\x1b[?1049h");
  try {
    while (!signal.aborted && !(await hasExited())) {
      const now = Date.now();
      const [resources, events, metrics] = await Promise.all([
        Promise.all(KINDS.map((kind) => listAll(client, kind))).then((lists) => lists.flat()),
        listAll(client, EVENTS),
        fetch("http://127.0.0.1:8080/metrics").then((r) => r.text()).catch(() => undefined),
      ]);
      const sums = metrics === undefined ? undefined : sumMetrics(metrics);
      const operator = sums && operatorFigures(sums, previous?.sums, now - (previous?.at ?? now));
      if (sums) previous = { sums, at: now };
      const lines = renderView(
        { now, server, resources, events, logFile, ...(operator && { operator }) },
        Deno.consoleSize().columns,
      );
      write(redraw(lines));
      await systemClock.sleep(2_000, signal).catch(() => {});
    }
  } finally {
    write("\x1b[?1049l");
  }
  if (await hasExited()) log("the operator exited; stopping");
}

/** Every object of `resource` in every namespace; none while the server does not answer. */
async function listAll(client: KubeClient, resource: Resource): Promise<KubeObject[]> {
  try {
    return (await client.list(resource)).items;
  } catch {
    return [];
  }
}

/** Copies the operator's output into `path` as it comes, so the file can be followed. */
async function copyToFile(
  streams: ReadableStream<Uint8Array>[],
  path: string,
): Promise<void> {
  const file = await Deno.open(path, { append: true });
  try {
    await Promise.all(streams.map(async (stream) => {
      for await (const chunk of stream) await file.write(chunk);
    }));
  } finally {
    file.close();
  }
}

/** A client closed at the end of the scope. */
function closing(client: KubeClient): { value: KubeClient } & Disposable {
  return { value: client, [Symbol.dispose]: () => client.close() };
}

async function run(command: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${command} ${args.join(" ")} failed:\n${text}`);
  return text;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
