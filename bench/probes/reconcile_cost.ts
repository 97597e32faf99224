/**
 * What a reconcile that finds nothing to write costs, in CPU, when a child's
 * own event brought it, beside a reconcile of the primary's own no-op
 * change: kinglet's WebApp controller over the test kit's in-memory API
 * server, N WebApps Ready with their children in place, then
 *
 * - `requeue`: every WebApp's periodic requeue (set to 10 s here) comes due,
 *   so each is reconciled with nothing changed anywhere: the no-op;
 * - `child`: every WebApp's Deployment given a new status that changes no
 *   figure the WebApp reports (kube-controller-manager's `lastUpdateTime`),
 *   so each owner is reconciled through its child's event;
 * - `event`: as many Deployments that no WebApp owns given the same new
 *   status: the in-memory server's storing and the cache's taking in of one
 *   such event, without a reconcile, which `child` pays too.
 *
 * Each phase prints the process' CPU (user plus system, all threads) per
 * reconcile (per event for `event`) and the writes the reconciles made
 * (none expected).
 *
 *   deno run -A --v8-flags=--max-semi-space-size=1,--optimize-for-size,--no-opt bench/probes/reconcile_cost.ts [--size 1000]
 *
 * @module
 */
// deno-lint-ignore-file no-console -- prints its report
import { cpuUsage } from "node:process";
import { parseArgs } from "node:util";
import { Semaphore } from "../../lib/async/mod.ts";
import { DEPLOYMENTS, type KubeObject } from "../../lib/kube/mod.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { webAppController } from "../../lib/operators/webapp/reconcile.ts";
import { Caches } from "../../lib/runtime/cache/mod.ts";
import { Controller } from "../../lib/runtime/controller/mod.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";

const NAMESPACE = "bench";

interface Counts {
  reconciles: number;
  writes: number;
}

/** Resolves once `counts.reconciles` has not moved for `quietMs`. */
async function settled(counts: Counts, quietMs = 500): Promise<void> {
  let last = -1;
  while (last !== counts.reconciles) {
    last = counts.reconciles;
    await new Promise((resolve) => setTimeout(resolve, quietMs));
  }
}

/**
 * Runs `step`, then waits for the reconciles it brought (or `waitMs`);
 * CPU per reconcile, or per `per` when given.
 */
async function phase(
  name: string,
  counts: Counts,
  step: () => void,
  options: { waitMs?: number; per?: number } = {},
): Promise<void> {
  const before = { ...counts, cpu: cpuUsage() };
  step();
  if (options.waitMs) await new Promise((resolve) => setTimeout(resolve, options.waitMs));
  else await settled(counts);
  const cpu = cpuUsage(before.cpu);
  const reconciles = options.per ?? counts.reconciles - before.reconciles;
  const ms = (cpu.user + cpu.system) / 1000;
  console.log(
    `${name.padEnd(8)} ${options.per ? "events" : "reconciles"} ${reconciles}, writes ${
      counts.writes - before.writes
    }, ` +
      `CPU ${ms.toFixed(0)} ms, ${(ms / Math.max(1, reconciles)).toFixed(3)} ms per reconcile`,
  );
}

async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { size: { type: "string", default: "1000" } } });
  const size = Number(values.size);
  const cluster = new MemoryCluster({ namespaces: [NAMESPACE] });
  const counts: Counts = { reconciles: 0, writes: 0 };
  const apply = cluster.apply.bind(cluster);
  cluster.apply = (resource, object, options) => {
    counts.writes++;
    return apply(resource, object, options);
  };
  const spec = webAppController({ requeueAfterMs: 10_000 });
  const reconcile = spec.reconcile;
  spec.reconcile = (object, ctx) => {
    counts.reconciles++;
    return reconcile(object, ctx);
  };
  const caches = new Caches({ client: cluster });
  const controller = new Controller(spec, {
    client: cluster,
    events: { publish: () => {} },
    semaphore: new Semaphore(8),
    caches,
  });
  const stop = new AbortController();
  const running = Promise.all([caches.run(stop.signal), controller.run(stop.signal)]);

  const name = (i: number) => `app-${String(i).padStart(5, "0")}`;
  for (let i = 1; i <= size; i++) {
    cluster.put(WEB_APPS, {
      apiVersion: "kinglet.dev/v1alpha1",
      kind: "WebApp",
      metadata: { name: name(i), namespace: NAMESPACE },
      spec: { image: "registry.k8s.io/pause:3.10", replicas: 0, port: 8080 },
    });
  }
  await settled(counts);
  // kube-controller-manager's part: every Deployment observed and available at 0 replicas.
  const deploymentStatus = (time: string) => (d: KubeObject) => ({
    ...d,
    status: {
      observedGeneration: d.metadata?.generation,
      replicas: 0,
      conditions: [
        { type: "Available", status: "True", reason: "MinimumReplicasAvailable" },
        {
          type: "Progressing",
          status: "True",
          reason: "NewReplicaSetAvailable",
          lastUpdateTime: time,
        },
      ],
    },
  });
  const deployments = () => cluster.objects<KubeObject>(DEPLOYMENTS);
  for (const d of deployments()) {
    cluster.put(DEPLOYMENTS, deploymentStatus("2026-01-01T00:00:00Z")(d));
  }
  await settled(counts);
  const ready = cluster.objects<KubeObject & { status?: { phase?: string } }>(WEB_APPS)
    .filter((o) => o.status?.phase === "Ready").length;
  console.log(`${size} WebApps, ${ready} Ready, ${counts.reconciles} reconciles so far`);

  // Every WebApp was last reconciled just now, so the requeues come due together in 10 s:
  // the phases without requeues run before and right after that burst.
  const strays = deployments().map((d) => ({
    ...d,
    metadata: {
      name: `stray-${d.metadata?.name}`,
      namespace: NAMESPACE,
      labels: d.metadata?.labels,
    },
  }));
  for (const d of strays) cluster.put(DEPLOYMENTS, deploymentStatus("2026-01-01T00:00:00Z")(d));
  await settled(counts);
  const quiet = counts.reconciles;
  await phase("event", counts, () => {
    for (const d of strays) cluster.put(DEPLOYMENTS, deploymentStatus("2026-01-01T00:01:00Z")(d));
  }, { waitMs: 1_000, per: strays.length });
  if (counts.reconciles !== quiet) console.log("(a reconcile fell inside the event phase)");
  await phase("requeue", counts, () => {}, { waitMs: 10_000 });
  await phase("child", counts, () => {
    for (const d of deployments()) {
      if (d.metadata?.name?.startsWith("stray-")) continue;
      cluster.put(DEPLOYMENTS, deploymentStatus("2026-01-01T00:02:00Z")(d));
    }
  });
  stop.abort();
  await running;
}

if (import.meta.main) await main(Deno.args);
