/**
 * The manager's HTTP endpoints: `/healthz`, `/readyz`, `/metrics` and
 * `/debug/cache`, on one or two listeners (controller-runtime serves metrics
 * and probes on separate ports; pass the same address twice to share one).
 *
 * @example
 * ```ts
 * import { serveEndpoints } from "./http.ts";
 * const stop = new AbortController();
 * const servers = serveEndpoints([{ address: "127.0.0.1:0", routes: {
 *   "/healthz": () => new Response("ok"),
 * } }], stop.signal);
 * servers[0]!.port; // the port the kernel picked
 * stop.abort();
 * await Promise.all(servers.map((s) => s.finished));
 * ```
 *
 * @module
 */
import { describeError } from "../../kube/errors.ts";
import { logger } from "../../log.ts";

/** A route handler; runs for GET and HEAD only. */
export type Route = (request: Request) => Response | Promise<Response>;

/** One listener and what it serves. */
export interface Listener {
  /** `host:port`, `:port` (all interfaces) or `0`/empty to disable. */
  address: string;
  /** Handlers by path. */
  routes: Record<string, Route>;
}

/** A running listener. */
export interface RunningListener {
  /** The address it was asked to listen on. */
  address: string;
  /** The port it listens on (the one picked, for port 0). */
  port: number;
  /** Settles once the listener has closed. */
  finished: Promise<void>;
}

/**
 * Parses `host:port`, `:port` or `[v6]:port`.
 *
 * @throws {TypeError} with the flag's expected form when `address` is malformed.
 */
export function parseAddress(address: string): { hostname: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:]*)):(\d{1,5})$/.exec(address);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) {
    throw new TypeError(
      `Cannot listen on '${address}': expected host:port, :port or [ipv6]:port, e.g. ':8080' or '127.0.0.1:8081'`,
    );
  }
  return { hostname: match[1] ?? (match[2] || "0.0.0.0"), port };
}

/** Whether an address flag turns its listener off (`0` or empty, as controller-runtime). */
export function isDisabled(address: string): boolean {
  return address === "" || address === "0";
}

/**
 * Serves each enabled listener until `signal` aborts; listeners with the same
 * address are merged into one.
 *
 * @throws {Deno.errors.AddrInUse} (or another listen error) when an address cannot be bound.
 */
export function serveEndpoints(listeners: Listener[], signal: AbortSignal): RunningListener[] {
  const merged = new Map<string, Record<string, Route>>();
  for (const l of listeners) {
    if (isDisabled(l.address)) continue;
    merged.set(l.address, { ...merged.get(l.address), ...l.routes });
  }
  const log = logger("http");
  return [...merged].map(([address, routes]) => {
    const { hostname, port } = parseAddress(address);
    const server = Deno.serve({
      hostname,
      port,
      signal,
      onListen: () => {},
      onError: (error) => {
        log.error("handler failed: {error}", { error: describeError(error) });
        return new Response("internal error\n", { status: 500 });
      },
    }, (request) => {
      const path = new URL(request.url).pathname;
      const route = routes[path];
      if (!route) return new Response("not found\n", { status: 404 });
      if (request.method !== "GET" && request.method !== "HEAD") {
        return new Response("method not allowed\n", {
          status: 405,
          headers: { allow: "GET, HEAD" },
        });
      }
      return route(request);
    });
    const addr = server.addr as Deno.NetAddr;
    log.info("serving {routes} on {address}", {
      routes: Object.keys(routes).join(" "),
      address: `${addr.hostname}:${addr.port}`,
    });
    return { address, port: addr.port, finished: server.finished };
  });
}
