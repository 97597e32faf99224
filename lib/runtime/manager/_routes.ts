/**
 * What the manager serves: `/metrics` and `/debug/cache` on one address
 * (behind the endpoint auth, when there is one), `/healthz` and `/readyz`
 * on another, both on loopback unless told otherwise.
 *
 * @module
 */
import { cacheKeysPage } from "../cache/cache_debug.ts";
import type { Caches } from "../cache/caches.ts";
import type { RuntimeMetrics } from "../metrics/metrics.ts";
import { CONTENT_TYPE } from "../metrics/prometheus.ts";
import type { EndpointAuth } from "./endpoint_auth.ts";
import type { Listener, Route } from "./http.ts";
import type { ManagerOptions } from "./options.ts";

/** What the endpoints read of a manager. */
export interface Served {
  metrics: RuntimeMetrics;
  caches: Caches;
  /** What each cache holds, for `/debug/cache`. */
  debugCache(): Record<string, unknown>;
  /** Why the manager is not ready; empty when it is. */
  readiness(): string[];
}

/** The listeners of `manager`, at the addresses `options` name. */
export function managerRoutes(
  manager: Served,
  options: Pick<ManagerOptions, "metricsAddress" | "metricsAuth" | "healthAddress">,
): Listener[] {
  const json = (body: unknown, status = 200) =>
    new Response(JSON.stringify(body, null, 2), {
      status,
      headers: { "content-type": "application/json" },
    });
  return [
    {
      address: options.metricsAddress ?? "127.0.0.1:8080",
      routes: protect(options.metricsAuth, {
        "/metrics": () =>
          new Response(manager.metrics.render(), { headers: { "content-type": CONTENT_TYPE } }),
        "/debug/cache": (request) => {
          const query = new URL(request.url).searchParams;
          const name = query.get("cache");
          if (name === null) return json(manager.debugCache());
          const found = manager.caches.entries().find((e) => e.name === name);
          if (!found) {
            const known = manager.caches.entries().map((e) => e.name).join(", ");
            return json({ error: `no cache "${name}"; known: ${known}` }, 404);
          }
          try {
            return json(cacheKeysPage(name, found.reflector.store, {
              limit: query.get("limit"),
              continue: query.get("continue"),
            }));
          } catch (error) {
            if (error instanceof RangeError) return json({ error: error.message }, 400);
            throw error;
          }
        },
      }),
    },
    {
      address: options.healthAddress ?? "127.0.0.1:8081",
      routes: {
        "/healthz": () => new Response("ok\n"),
        "/readyz": () => {
          const problems = manager.readiness();
          return problems.length
            ? new Response(`not ready:\n${problems.join("\n")}\n`, { status: 503 })
            : new Response("ok\n");
        },
      },
    },
  ];
}

/** `routes`, each answered only once `auth` lets its request through. */
function protect(auth: EndpointAuth | undefined, routes: Record<string, Route>) {
  if (!auth) return routes;
  return Object.fromEntries(
    Object.entries(routes).map(([path, route]): [string, Route] => [
      path,
      async (request) => (await auth(request)) ?? await route(request),
    ]),
  );
}
