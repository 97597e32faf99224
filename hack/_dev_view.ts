/**
 * The screen `deno task dev` redraws in place in a terminal: the custom
 * resources with phase, ready/desired and age; the last Events; and the
 * operator's own figures from its `/metrics` (resident memory, reconciles per
 * second, queue depth). Pure: the caller gathers a {@link DevSnapshot} and
 * writes what {@link renderView} returns.
 *
 * @module
 */
import type { KubeObject } from "../lib/kube/types.ts";
import { formatTable } from "../lib/cli/table.ts";

/** What one frame shows. */
export interface DevSnapshot {
  /** `clock.now()` when it was gathered, in ms since the epoch. */
  now: number;
  server: string;
  /** WebApps, DatabaseClusters and InferenceServices together. */
  resources: KubeObject[];
  /** events.k8s.io/v1 Events, any order; the newest are shown. */
  events: KubeObject[];
  /** From the operator's `/metrics`; undefined while it does not answer. */
  operator?: OperatorFigures;
  /** Where the operator's log goes, since the screen is taken. */
  logFile: string;
}

/** The operator's own figures, as its `/metrics` reports them. */
export interface OperatorFigures {
  rssBytes: number;
  /** Reconciles per second since the previous scrape; undefined on the first. */
  reconcilesPerSecond: number | undefined;
  queueDepth: number;
}

/** Samples of `/metrics` summed by metric name, labels ignored. */
export type MetricSums = Map<string, number>;

/** Events shown at most. */
const EVENT_LINES = 8;

/**
 * Sums every sample of each metric in a Prometheus text exposition; comments
 * and malformed lines are skipped.
 */
export function sumMetrics(text: string): MetricSums {
  const sums: MetricSums = new Map();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{.*\})?\s+(\S+)/.exec(line);
    const value = match ? Number(match[2]) : NaN;
    if (!match || !Number.isFinite(value)) continue;
    sums.set(match[1]!, (sums.get(match[1]!) ?? 0) + value);
  }
  return sums;
}

/**
 * The figures of one scrape, with the reconcile rate against the previous
 * scrape (`previous` taken `elapsedMs` earlier).
 */
export function operatorFigures(
  current: MetricSums,
  previous: MetricSums | undefined,
  elapsedMs: number,
): OperatorFigures {
  const total = (sums: MetricSums) => sums.get("controller_runtime_reconcile_total") ?? 0;
  const rate = previous && elapsedMs > 0
    ? Math.max(0, total(current) - total(previous)) / (elapsedMs / 1000)
    : undefined;
  return {
    rssBytes: current.get("process_resident_memory_bytes") ?? 0,
    reconcilesPerSecond: rate,
    queueDepth: current.get("workqueue_depth") ?? 0,
  };
}

/** `5s`, `3m`, `2h`, `4d`: the age column of `kubectl get`, coarsened to one unit. */
export function age(sinceMs: number, nowMs: number): string {
  const seconds = Math.max(0, Math.floor((nowMs - sinceMs) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/** The frame as lines, each cut to `columns` characters so nothing wraps. */
export function renderView(snapshot: DevSnapshot, columns: number): string[] {
  const { now } = snapshot;
  const figures = snapshot.operator;
  const operator = figures
    ? `operator: RSS ${(figures.rssBytes / 1024 / 1024).toFixed(1)} MiB, ` +
      `${figures.reconcilesPerSecond?.toFixed(1) ?? "-"} reconciles/s, ` +
      `queue depth ${figures.queueDepth}`
    : "operator: /metrics not answering yet";
  const rows = [...snapshot.resources]
    .sort((a, b) => `${a.kind}/${key(a)}`.localeCompare(`${b.kind}/${key(b)}`))
    .map((o) => {
      const status = (o.status ?? {}) as { phase?: string; readyReplicas?: number };
      const spec = (o as { spec?: { replicas?: number } }).spec ?? {};
      const created = Date.parse(String(o.metadata?.creationTimestamp ?? ""));
      return [
        o.kind ?? "",
        key(o),
        status.phase ?? "-",
        `${status.readyReplicas ?? 0}/${spec.replicas ?? "-"}`,
        Number.isNaN(created) ? "-" : age(created, now),
      ];
    });
  const events = [...snapshot.events]
    .sort((a, b) => eventTime(b) - eventTime(a))
    .slice(0, EVENT_LINES)
    .map((e) => {
      const regarding = (e as { regarding?: { kind?: string; name?: string } }).regarding;
      const t = eventTime(e);
      return [
        t ? age(t, now) : "-",
        String((e as { type?: string }).type ?? ""),
        String((e as { reason?: string }).reason ?? ""),
        `${regarding?.kind ?? ""}/${regarding?.name ?? ""}`,
        String((e as { note?: string }).note ?? ""),
      ];
    });
  const lines = [
    `kinglet dev: ${snapshot.server}   ${new Date(now).toISOString()}   (Ctrl-C stops)`,
    operator,
    "",
    ...(rows.length
      ? formatTable(["KIND", "NAME", "PHASE", "READY", "AGE"], rows).split("\n")
      : ["no WebApps, DatabaseClusters or InferenceServices yet"]),
    "",
    "Last events:",
    ...(events.length
      ? formatTable(["AGE", "TYPE", "REASON", "OBJECT", "NOTE"], events).split("\n")
      : ["none yet"]),
    "",
    `operator log: ${snapshot.logFile}`,
  ];
  return lines.map((line) => line.length > columns ? line.slice(0, columns) : line);
}

/**
 * The ANSI bytes that draw `lines` over the previous frame: cursor home, each
 * line cleared to its end, then everything below cleared.
 */
export function redraw(lines: readonly string[]): string {
  return `\x1b[H${lines.map((line) => `${line}\x1b[K`).join("\n")}\n\x1b[J`;
}

function key(o: KubeObject): string {
  const { namespace, name } = o.metadata ?? {};
  return namespace ? `${namespace}/${name}` : name ?? "";
}

/** When an Event last happened, in ms; 0 when it says nothing. */
function eventTime(e: KubeObject): number {
  const event = e as { eventTime?: string; series?: { lastObservedTime?: string } };
  const when = event.series?.lastObservedTime ?? event.eventTime ??
    e.metadata?.creationTimestamp;
  const ms = Date.parse(String(when ?? ""));
  return Number.isNaN(ms) ? 0 : ms;
}
