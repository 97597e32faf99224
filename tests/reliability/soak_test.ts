/**
 * Soak: WebApps are created, updated and deleted at a steady rate for a
 * while, with the store's memory budget below the live population, and the
 * operator (a separate process under the deploy/ RBAC) is sampled the whole
 * time: resident memory, queue depth and open file descriptors (every
 * connection and timer-backed resource holds one). After the churn stops
 * every WebApp still alive must converge.
 *
 * `KINGLET_SOAK_SECONDS` sets the churn's length: 60 s in `deno task test`,
 * longer by `deno task test:soak` (see tests/reliability/README.md).
 */
import assert from "node:assert/strict";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { adminClient, createNamespace, deleteNamespace } from "../_support/kube.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";
import type { OperatorProcess } from "../_support/operator.ts";
import { allConverged, createWebApps, reconciles, startWebAppOperator } from "./_faults.ts";
import { figure, fixed1, leastSquaresSlope, type Point, rssMiB } from "./_measure.ts";

const SECONDS = Number(Deno.env.get("KINGLET_SOAK_SECONDS") ?? "60");
/** WebApps alive at any time once the population is built. */
const POPULATION = 60;
/** The store keeps this many full objects per kind; the rest is index only. */
const BUDGET = 20;
/** Changes per second: a create, an update and a delete in turn. */
const RATE = 6;
const SAMPLE_EVERY_MS = 2_000;
/** Memory growth after warm-up that the soak tolerates, for heap noise. */
const RSS_BOUND_MIB = 24;
/** Descriptors beyond the warm-up's highest that the soak tolerates. */
const FD_BOUND = 16;

interface Sample {
  at: number;
  rss: number;
  depth: number;
  fds: number;
}

Deno.test(`a ${SECONDS} s churn under a memory budget keeps memory, queue and descriptors bounded`, async () => {
  assert.ok(SECONDS >= 30, `KINGLET_SOAK_SECONDS must be 30 or more, got ${SECONDS}`);
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "soak");
  try {
    await using operator = await startWebAppOperator(await operatorKubeconfig(), ns, [
      `--cache-max-objects=${BUDGET}`,
    ]);
    let exited = false;
    operator.status.then(() => (exited = true));
    await operator.ready();

    let next = 0;
    const alive: string[] = [];
    const born = () => `soak-${next++}`;
    const first = Array.from({ length: POPULATION }, born);
    await createWebApps(client, ns, first);
    alive.push(...first);
    await allConverged(client, ns, alive.length);

    const started = performance.now();
    const samples: Sample[] = [];
    const sampling = sampleUntil(operator, samples, started, SECONDS * 1000);
    let changes = 0;
    let failures = 0;
    for (let tick = 0; performance.now() - started < SECONDS * 1000; tick++) {
      const due = started + (tick * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      try {
        await churn(tick % 3, client, ns, alive, born);
        changes++;
      } catch (error) {
        // The test's own request failing says nothing about the operator; it is counted.
        failures++;
        if (failures > 3) throw error;
      }
    }
    await sampling;
    const churnEnded = performance.now();
    await allConverged(client, ns, alive.length, 180_000);
    const convergedAfter = performance.now() - churnEnded;

    assert.equal(exited, false, "the operator process is still running");
    const warm = samples.filter((s) => s.at >= (SECONDS * 1000) / 3);
    const warmUp = samples.filter((s) => s.at < (SECONDS * 1000) / 3);
    assert.ok(warm.length >= 5 && warmUp.length >= 2, `${samples.length} samples`);
    const warmUpRss = Math.max(...warmUp.map((s) => s.rss));
    const peakRss = Math.max(...warm.map((s) => s.rss));
    const slope = leastSquaresSlope(warm.map((s) => ({ x: s.at / 60_000, y: s.rss }) as Point));
    const maxDepth = Math.max(...samples.map((s) => s.depth));
    const warmUpFds = Math.max(...warmUp.map((s) => s.fds));
    const lastFds = samples.at(-1)!.fds;
    const perObject = (await reconciles(operator)) / next;
    figure(
      `soak ${SECONDS} s: ${changes} changes at ${RATE}/s over ${POPULATION} live WebApps ` +
        `(budget ${BUDGET}), ${next} created in all; RSS slope after warm-up ` +
        `${fixed1(slope)} MiB/min, RSS ${fixed1(Math.min(...warm.map((s) => s.rss)))}–` +
        `${fixed1(peakRss)} MiB (warm-up peak ${
          fixed1(warmUpRss)
        }); queue depth max ${maxDepth}; ` +
        `file descriptors ${warmUpFds} → ${lastFds}; ${fixed1(perObject)} reconciles per WebApp; ` +
        `converged ${fixed1(convergedAfter / 1000)} s after the churn`,
    );
    assert.ok(
      peakRss <= warmUpRss + RSS_BOUND_MIB,
      `RSS grew from ${fixed1(warmUpRss)} MiB at warm-up to ${fixed1(peakRss)} MiB`,
    );
    assert.ok(
      maxDepth <= POPULATION + RATE * 2,
      `queue depth reached ${maxDepth} with ${POPULATION} live WebApps`,
    );
    assert.ok(
      lastFds <= warmUpFds + FD_BOUND,
      `open descriptors grew from ${warmUpFds} to ${lastFds}: connections or files leak`,
    );
    assert.equal(await operator.stop(), 0);
  } finally {
    await deleteNamespace(client, ns);
    client.close();
  }
});

/** One change: 0 creates a WebApp, 1 updates one, 2 deletes the oldest. */
async function churn(
  kind: number,
  client: Awaited<ReturnType<typeof adminClient>>,
  ns: string,
  alive: string[],
  born: () => string,
): Promise<void> {
  if (kind === 0) {
    const name = born();
    await createWebApps(client, ns, [name]);
    alive.push(name);
  } else if (kind === 1) {
    const name = alive[Math.floor(Math.random() * alive.length)]!;
    const replicas = 1 + Math.floor(Math.random() * 3);
    await client.patch(WEB_APPS, name, { spec: { replicas } }, { type: "merge", namespace: ns });
  } else {
    const name = alive.shift()!;
    await client.delete(WEB_APPS, name, { namespace: ns });
  }
}

/** Samples the operator every {@link SAMPLE_EVERY_MS} until `durationMs` after `started`. */
async function sampleUntil(
  operator: OperatorProcess,
  samples: Sample[],
  started: number,
  durationMs: number,
): Promise<void> {
  while (performance.now() - started < durationMs) {
    samples.push({
      at: performance.now() - started,
      rss: await rssMiB(operator.pid),
      depth: await operator.metric("workqueue_depth", { controller: "webapp" }),
      fds: await openDescriptors(operator.pid),
    });
    await new Promise((r) => setTimeout(r, SAMPLE_EVERY_MS));
  }
}

async function openDescriptors(pid: number): Promise<number> {
  let count = 0;
  for await (const _ of Deno.readDir(`/proc/${pid}/fd`)) count++;
  return count;
}
