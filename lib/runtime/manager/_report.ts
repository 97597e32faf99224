/**
 * What the manager's endpoints report of it: why it is not ready
 * (`/readyz`) and what each cache holds (`/debug/cache`), read from its
 * phase, caches and controllers without changing them.
 *
 * @module
 */
import type { Caches } from "../cache/caches.ts";
import type { MemoryStats } from "../memory/governor.ts";

/** Where the manager is in its life. */
export type Phase = "starting" | "standby" | "syncing" | "running" | "stopping";

/**
 * Why a manager in `phase` is not ready; empty when it is. A standby is
 * ready (it serves and waits); a leader is ready when every cache synced
 * and saw watch activity within `staleAfterMs` (default 11 minutes).
 */
export function readiness(
  phase: Phase,
  caches: Caches,
  now: number,
  staleAfterMs = 660_000,
): string[] {
  if (phase === "standby") return [];
  if (phase === "starting" || phase === "stopping") return [phase];
  const problems: string[] = [];
  for (const { resource, reflector } of caches.entries()) {
    const f = reflector.freshness;
    if (!f.synced) {
      problems.push(`${resource.plural}: not synced${f.lastError ? `: ${f.lastError}` : ""}`);
    } else if (f.lastActivityAt === undefined || now - f.lastActivityAt > staleAfterMs) {
      problems.push(`${resource.plural}: no watch activity for ${staleAfterMs / 1000}s`);
    }
  }
  return problems;
}

/** What {@link debugReport} reads. */
export interface ReportSource {
  phase: Phase;
  caches: Caches;
  now: number;
  memoryLimit?: MemoryStats;
  controllers: readonly {
    spec: { name: string };
    queue: { len: number };
    inFlight: number;
  }[];
}

/** Sizes and freshness of every cache, the process' memory and each controller's queue. */
export function debugReport(source: ReportSource): Record<string, unknown> {
  const { now } = source;
  const kinds: Record<string, unknown> = {};
  for (const { name, reflector } of source.caches.entries()) {
    const f = reflector.freshness;
    kinds[name] = {
      ...reflector.store.stats(),
      synced: f.synced,
      resourceVersion: f.resourceVersion,
      restarts: f.restarts,
      lastActivitySecondsAgo: f.lastActivityAt === undefined
        ? null
        : Math.round((now - f.lastActivityAt) / 1000),
    };
  }
  const memory = Deno.memoryUsage();
  return {
    phase: source.phase,
    memory: {
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      heapTotalBytes: memory.heapTotal,
      externalBytes: memory.external,
    },
    ...(source.memoryLimit && { memoryLimit: source.memoryLimit }),
    controllers: source.controllers.map((c) => ({
      name: c.spec.name,
      queueDepth: c.queue.len,
      inFlight: c.inFlight,
    })),
    caches: kinds,
  };
}
