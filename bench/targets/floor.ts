/**
 * The Deno floor: the least an operator on Deno must do while idle, and
 * nothing else, measured by the harness beside kinglet (`--target
 * kinglet,deno-floor --scenarios idle`) so that kinglet's idle figure splits
 * into what the runtime and its I/O cost and what kinglet adds.
 *
 * It reads the kubeconfig with kinglet's loader, opens one HTTP/2 client over
 * TLS to the API server as kinglet's transport does, lists and then watches
 * the target's kind (decoded as kinglet's client decodes a watch), and serves `/metrics`,
 * `/healthz` and `/readyz` on the two ports the harness gives it. It
 * reconciles nothing, so its target runs only the idle scenario.
 *
 *   deno run -A bench/targets/floor.ts --kubeconfig=<file> --metrics-bind-address=127.0.0.1:8080 \
 *     --health-probe-bind-address=127.0.0.1:8081 [--resource=/apis/kinglet.dev/v1alpha1/webapps]
 *
 * @module
 */
// deno-lint-ignore-file no-console -- a terminal program
import { loadConfig } from "../../lib/kube/config.ts";
import { isGone } from "../../lib/kube/errors.ts";
import { decodeWatchStream } from "../../lib/kube/watch.ts";

const DEFAULT_RESOURCE = "/apis/kinglet.dev/v1alpha1/webapps";

/** The floor's command line. */
export interface FloorOptions {
  kubeconfig: string;
  metrics: { hostname: string; port: number };
  probes: { hostname: string; port: number };
  /** The collection's path on the API server, without a query. */
  resource: string;
}

/**
 * Reads `--name=value` arguments.
 *
 * @throws {TypeError} naming the argument that is missing, unknown or not `host:port`.
 */
export function parseFloorArgs(args: readonly string[]): FloorOptions {
  const values = new Map<string, string>();
  for (const arg of args) {
    const match = /^--([a-z-]+)=(.+)$/.exec(arg);
    if (!match) throw new TypeError(`floor: expected --name=value, got ${JSON.stringify(arg)}`);
    values.set(match[1]!, match[2]!);
  }
  const known = ["kubeconfig", "metrics-bind-address", "health-probe-bind-address", "resource"];
  const unknown = [...values.keys()].find((name) => !known.includes(name));
  if (unknown) throw new TypeError(`floor: unknown flag --${unknown} (known: ${known.join(", ")})`);
  const required = (name: string): string => {
    const value = values.get(name);
    if (value === undefined) throw new TypeError(`floor: --${name} is required`);
    return value;
  };
  return {
    kubeconfig: required("kubeconfig"),
    metrics: address("metrics-bind-address", required("metrics-bind-address")),
    probes: address("health-probe-bind-address", required("health-probe-bind-address")),
    resource: values.get("resource") ?? DEFAULT_RESOURCE,
  };
}

function address(flag: string, value: string): { hostname: string; port: number } {
  const at = value.lastIndexOf(":");
  const port = Number(value.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new TypeError(`floor: --${flag} must be host:port, got ${JSON.stringify(value)}`);
  }
  return { hostname: value.slice(0, at), port };
}

/** Lists the collection, then watches it from the list's resourceVersion until `signal` aborts. */
async function listAndWatch(options: FloorOptions, ready: () => void, signal: AbortSignal) {
  const config = await loadConfig({ kubeconfig: options.kubeconfig });
  const client = Deno.createHttpClient({
    http2: true,
    ...(config.caCert && { caCerts: [config.caCert] }),
    ...(config.clientCert && config.clientKey &&
      { cert: config.clientCert, key: config.clientKey }),
  });
  const get = async (query: string) => {
    const token = await config.auth.token(signal);
    const response = await fetch(`${config.server}${options.resource}?${query}`, {
      client,
      signal,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    if (!response.ok) {
      throw new Error(`floor: GET ${options.resource} answered ${response.status}`);
    }
    return response;
  };
  let version = "";
  while (!signal.aborted) {
    if (!version) {
      const list = await (await get("limit=500")).json();
      version = list.metadata.resourceVersion;
      ready();
    }
    const watch = await get(`watch=1&allowWatchBookmarks=true&resourceVersion=${version}`);
    try {
      for await (
        const event of decodeWatchStream(watch.body!, { path: options.resource, signal })
      ) {
        version = event.object.metadata?.resourceVersion ?? version;
      }
    } catch (error) {
      if (!isGone(error)) throw error;
      version = ""; // expired: list again
    }
  }
}

async function main(args: string[]): Promise<number> {
  let options: FloorOptions;
  try {
    options = parseFloorArgs(args);
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  const stop = new AbortController();
  for (const s of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(s, () => stop.abort());
  let listed = false;
  const serve = (at: { hostname: string; port: number }, handler: Deno.ServeHandler) =>
    Deno.serve({ ...at, signal: stop.signal, onListen() {} }, handler);
  const servers = [
    serve(options.metrics, () => new Response("floor_up 1\n")),
    serve(options.probes, (request) => {
      const path = new URL(request.url).pathname;
      if (path === "/healthz") return new Response("ok");
      if (path === "/readyz") {
        return new Response(listed ? "ok" : "listing", { status: listed ? 200 : 503 });
      }
      return new Response("not found", { status: 404 });
    }),
  ];
  let code = 0;
  try {
    await listAndWatch(options, () => listed = true, stop.signal);
  } catch (error) {
    if (!stop.signal.aborted) {
      console.error(error instanceof Error ? error.message : error);
      code = 1;
    }
  }
  stop.abort();
  await Promise.all(servers.map((s) => s.finished));
  return code;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
