/**
 * What one API request costs the client: process CPU (user plus system, all
 * threads, from `/proc/self/stat`) per request and requests per second, for
 * GETs and for server-side-apply PATCHes of one ConfigMap, a fixed number in
 * flight; and the time of the first request on a new connection, with and
 * without a client certificate.
 *
 *   deno run -A hack/with_cluster.ts -- deno run -A bench/probes/request_cpu.ts
 *   deno run -A bench/probes/request_cpu.ts --kubeconfig ~/.kube/config --requests 2000 --in-flight 8
 *
 * The kubeconfig (`--kubeconfig`, else `KINGLET_TEST_KUBECONFIG`) must allow
 * creating a namespace; the probe works in one of its own and deletes it.
 * Flow control is off, so the API server sets the pace. The CPU clock ticks
 * every 10 ms: ask for enough requests that a phase uses a second or more.
 * Prints one JSON line per phase, with the load average at its end, since
 * other work on the machine slows the server and so the rate, not the CPU.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { KubeClient } from "../../lib/kube/client.ts";
import { type ClusterConfig, loadConfig } from "../../lib/kube/config.ts";
import { CONFIG_MAPS, NAMESPACES } from "../../lib/kube/resources.ts";
import { noToken } from "../../lib/kube/token_source.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    kubeconfig: { type: "string" },
    requests: { type: "string", default: "2000" },
    "in-flight": { type: "string", default: "8" },
  },
});
const requests = Number(values.requests);
const inFlight = Number(values["in-flight"]);
const kubeconfig = values.kubeconfig ?? Deno.env.get("KINGLET_TEST_KUBECONFIG");
if (!kubeconfig) throw new Error("Cannot probe: give --kubeconfig or set KINGLET_TEST_KUBECONFIG");

const encoder = new TextEncoder();

function print(line: unknown): void {
  Deno.stdout.writeSync(encoder.encode(`${JSON.stringify(line)}\n`));
}

/** CPU this process used so far, in ms (user plus system; clock ticks of 10 ms). */
function cpuMs(): number {
  const fields = Deno.readTextFileSync("/proc/self/stat").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function loadAverage(): string {
  return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
}

async function phase(name: string, count: number, request: (i: number) => Promise<unknown>) {
  let next = 0;
  const cpu = cpuMs();
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    for (let i = next++; i < count; i = next++) await request(i);
  }));
  const seconds = (performance.now() - started) / 1000;
  const used = cpuMs() - cpu;
  print({
    phase: name,
    requests: count,
    inFlight,
    seconds: Number(seconds.toFixed(2)),
    cpuMs: used,
    cpuUsPerRequest: Math.round(used * 1000 / count),
    requestsPerSecond: Math.round(count / seconds),
    loadAverage: loadAverage(),
  });
}

/** Milliseconds of the first request of five new clients, each on a new connection. */
async function firstRequests(config: ClusterConfig): Promise<number[]> {
  const times = [];
  for (let i = 0; i < 5; i++) {
    const client = new KubeClient(config);
    const started = performance.now();
    // An anonymous client is refused, which is an answer all the same.
    await client.get(NAMESPACES, "default").catch(() => {});
    times.push(Math.round((performance.now() - started) * 10) / 10);
    client.close();
  }
  return times;
}

const config = await loadConfig({ kubeconfig });
const client = new KubeClient(config, { qps: 0 });
const namespace = `probe-${crypto.randomUUID().slice(0, 8)}`;
await client.create(NAMESPACES, {
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name: namespace },
});
try {
  const configMap = (i: number) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "probe", namespace, labels: { app: "probe" } },
    data: { round: String(i % 2), text: "x".repeat(600) },
  });
  const apply = (i: number) =>
    client.apply(CONFIG_MAPS, configMap(i), { fieldManager: "probe", force: true });
  await apply(0);
  await phase("warm-up", 400, () => client.get(CONFIG_MAPS, "probe", { namespace }));
  await phase("get", requests, () => client.get(CONFIG_MAPS, "probe", { namespace }));
  await phase("apply", requests, apply);
  const { clientCert, clientKey, ...withoutCertificate } = config;
  const anonymous = { ...withoutCertificate, auth: noToken };
  print({
    phase: "first-request-ms",
    ...(clientCert && clientKey ? { withClientCertificate: await firstRequests(config) } : {}),
    withoutClientCertificate: await firstRequests(anonymous),
  });
} finally {
  await client.delete(NAMESPACES, namespace);
  client.close();
}
