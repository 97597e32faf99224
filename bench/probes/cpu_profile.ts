/**
 * Where a running Deno process' CPU goes: records a V8 CPU profile through
 * the inspector (Chrome DevTools Protocol), writes it as a `.cpuprofile`
 * (open it in Chrome DevTools or speedscope) and prints the top functions by
 * self time and self time rolled up by area: kinglet's `lib/` folders, npm
 * packages, Deno internals (`ext:`), V8 builtins, the garbage collector,
 * `(program)` (native code outside JavaScript: the event loop, I/O, TLS) and
 * `(idle)`.
 *
 * The process must run with `--inspect=127.0.0.1:<port>`:
 *
 *   deno run -A bench/probes/cpu_profile.ts --port 9229 --seconds 60 --out /tmp/kinglet.cpuprofile
 *
 * Without `--seconds` it records until SIGINT. Given `--pid` (the profiled
 * process) and `--metrics` (its `/metrics` URL), it also prints the process'
 * user plus system CPU over the window, the growth of
 * `controller_runtime_reconcile_total`, and their ratio in ms per reconcile.
 * `--interval-us` sets the sampling interval (default 500 µs); `--top` the
 * number of functions listed (default 25).
 *
 * Caveats: samples measure wall-clock time on the main JavaScript thread.
 * `/proc/<pid>/stat` counts CPU on every thread (V8's concurrent GC and
 * compiler, Tokio's I/O threads), while a sample also counts time the main
 * thread waited for a core on a loaded machine; so the profile's busy time
 * and the process' CPU differ in either direction, and shares within the
 * profile are the figures to read. With the inspector attached Deno reports
 * every `fetch` to it, shown as `(inspector reporting)`: subtract it.
 * Builtins such as `JSON.parse` appear by name with no URL. Sampling costs
 * the profiled process some CPU too.
 *
 * @module
 */
// deno-lint-ignore-file no-console -- prints its report
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { scrapeMetrics, sumSeries } from "../measure/metrics_scraper.ts";
import { readProcessTree } from "../measure/process_sampler.ts";

/** A V8 CPU profile as `Profiler.stop` returns it and `.cpuprofile` files hold it. */
export interface CpuProfile {
  nodes: ProfileNode[];
  /** Microseconds, on V8's monotonic clock. */
  startTime: number;
  endTime: number;
  /** Node id of each sample. */
  samples: number[];
  /** Microseconds from the previous sample (the first: from `startTime`). */
  timeDeltas: number[];
}

/** One node of the profile's call tree. */
export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

/** Self time of one function or area. */
export interface SelfTime {
  name: string;
  /** `path:line` of a function; empty for an area. */
  where: string;
  area: string;
  ms: number;
}

/** What {@link summarizeProfile} reports. */
export interface ProfileSummary {
  totalMs: number;
  /** Everything but `(idle)`: time the main thread was running. */
  busyMs: number;
  /** The part of `busyMs` spent reporting to the inspector, which an unprofiled process does not spend. */
  inspectorMs: number;
  /** Every function, largest self time first. */
  functions: SelfTime[];
  /** Self time by area, largest first. */
  areas: SelfTime[];
}

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const NPM = /\/(?:registry\.npmjs\.org|node_modules)\/((?:@[^/]+\/)?[^/@.][^/]*)\/(?:([^/]+)\/)?/;
const NPM_VERSION = /^\d+\.\d+\.\d+/;
/**
 * With an inspector attached Deno reports every `fetch` to it (the DevTools
 * Network domain); that work exists only while profiling.
 */
const INSPECTOR = "(inspector reporting)";

/**
 * `url` shortened to what names it: a repo-relative path, `npm:<package>/<file>`,
 * or the `ext:`/`node:` specifier as is.
 */
export function shortUrl(url: string, repo: string = REPO): string {
  if (url === "") return "";
  const path = url.startsWith("file://") ? fileURLToPath(url) : url;
  const npm = npmPackage(path);
  if (npm) return `npm:${npm.name}/${npm.file}`;
  if (path.startsWith(repo)) return path.slice(repo.length);
  return path;
}

function npmPackage(path: string): { name: string; file: string } | undefined {
  // The last node_modules segment names the package, in the global cache and in a local folder.
  const at = Math.max(path.lastIndexOf("/registry.npmjs.org/"), path.lastIndexOf("/node_modules/"));
  if (at < 0) return undefined;
  const match = NPM.exec(path.slice(at));
  if (!match) return undefined;
  const rest = path.slice(at + match[0].length);
  const file = match[2] && !NPM_VERSION.test(match[2]) ? `${match[2]}/${rest}` : rest;
  return { name: match[1]!, file: file.split("/").pop() ?? file };
}

/** The area a frame's self time rolls up to. */
export function areaOf(functionName: string, url: string, repo: string = REPO): string {
  if (functionName.startsWith("op_inspector_") || url.includes("inspector_network_bridge")) {
    return INSPECTOR;
  }
  if (url === "") {
    if (functionName.startsWith("(")) return functionName;
    return functionName.startsWith("op_") ? "Deno ops (op_*)" : "V8 builtins (no url)";
  }
  if (url.startsWith("ext:")) return `Deno ${url.split("/")[0]}`;
  if (url.startsWith("node:")) return `Deno ${url}`;
  const path = url.startsWith("file://") ? fileURLToPath(url) : url;
  const npm = npmPackage(path);
  if (npm) return `npm:${npm.name}`;
  if (!path.startsWith(repo)) return "other";
  const parts = path.slice(repo.length).split("/");
  if (parts[0] === "lib" && parts.length > 2) return `kinglet lib/${parts[1]}`;
  return `kinglet ${parts.length > 1 ? `${parts[0]}/` : parts[0]}`;
}

/**
 * Self time per function and per area. A sample lasts until the next one,
 * as DevTools counts it; the last lasts until the profile's `endTime`.
 */
export function summarizeProfile(profile: CpuProfile, repo: string = REPO): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  let time = profile.startTime;
  const times = profile.timeDeltas.map((delta) => (time += delta));
  for (let i = 0; i < profile.samples.length; i++) {
    const duration = (times[i + 1] ?? profile.endTime) - times[i]!;
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, duration));
  }
  const functions = new Map<string, SelfTime>();
  const areas = new Map<string, SelfTime>();
  let totalUs = 0;
  let idleUs = 0;
  let inspectorUs = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const name = functionName || "(anonymous)";
    const where = url === "" ? "" : `${shortUrl(url, repo)}:${lineNumber + 1}`;
    const area = areaOf(name, url, repo);
    add(functions, `${name}\0${where}`, { name, where, area, ms: us / 1000 });
    add(areas, area, { name: area, where: "", area, ms: us / 1000 });
    totalUs += us;
    if (name === "(idle)") idleUs += us;
    if (area === INSPECTOR) inspectorUs += us;
  }
  const sorted = (map: Map<string, SelfTime>) => [...map.values()].sort((a, b) => b.ms - a.ms);
  return {
    totalMs: totalUs / 1000,
    busyMs: (totalUs - idleUs) / 1000,
    inspectorMs: inspectorUs / 1000,
    functions: sorted(functions),
    areas: sorted(areas),
  };
}

function add(map: Map<string, SelfTime>, key: string, entry: SelfTime): void {
  const current = map.get(key);
  if (current) current.ms += entry.ms;
  else map.set(key, entry);
}

/** Lines of the summary's two tables; shares are of total and of busy (non-idle) time. */
export function formatSummary(summary: ProfileSummary, top = 25): string[] {
  const share = (ms: number, of: number) => of > 0 ? `${(100 * ms / of).toFixed(1)}%` : "-";
  const row = (e: SelfTime) => [
    e.ms.toFixed(1),
    share(e.ms, summary.totalMs),
    e.name === "(idle)" ? "-" : share(e.ms, summary.busyMs),
  ];
  const groups = new Map<string, number>();
  for (const area of summary.areas) {
    const group = area.name.startsWith("kinglet ")
      ? "kinglet"
      : area.name.startsWith("npm:")
      ? "npm packages"
      : area.name.startsWith("Deno ")
      ? "Deno internals"
      : undefined;
    if (group) groups.set(group, (groups.get(group) ?? 0) + area.ms);
  }
  return [
    `Profile: ${(summary.totalMs / 1000).toFixed(1)} s recorded, main thread busy ` +
    `${(summary.busyMs / 1000).toFixed(2)} s (${share(summary.busyMs, summary.totalMs)}), ` +
    `of which ${(summary.inspectorMs / 1000).toFixed(2)} s reporting to the inspector.`,
    "",
    `Top ${top} functions by self time:`,
    ...table(
      ["function", "where", "self ms", "self %", "% busy"],
      summary.functions.slice(0, top).map((f) => [f.name, f.where || f.area, ...row(f)]),
    ),
    "",
    "Self time by area:",
    ...table(
      ["area", "self ms", "self %", "% busy"],
      [
        ...summary.areas.map((a) => [a.name, ...row(a)]),
        ...[...groups].map((
          [name, ms],
        ) => [`= all ${name}`, ...row({ name, where: "", area: name, ms })]),
      ],
    ),
  ];
}

function table(header: string[], rows: string[][]): string[] {
  const clip = (cell: string) => cell.length > 60 ? `${cell.slice(0, 57)}...` : cell;
  const cells = [header, ...rows].map((r) => r.map(clip));
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) =>
    r.map((c, i) => (i < header.length - 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ").trimEnd()
  );
}

/** A DevTools Protocol session over the inspector's WebSocket. */
class CdpSession {
  #socket: WebSocket;
  #next = 1;
  #pending = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>();

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.onmessage = (event) => {
      const message = JSON.parse(String(event.data));
      const waiter = this.#pending.get(message.id);
      if (!waiter) return;
      this.#pending.delete(message.id);
      if (message.error) waiter.reject(new Error(`CDP: ${JSON.stringify(message.error)}`));
      else waiter.resolve(message.result);
    };
    socket.onclose = () => {
      for (const waiter of this.#pending.values()) {
        waiter.reject(new Error("The inspector closed the connection"));
      }
      this.#pending.clear();
    };
  }

  /**
   * Connects to the first target the inspector at `host:port` lists.
   *
   * @throws {Error} when nothing listens there or it lists no target.
   */
  static async connect(host: string, port: number): Promise<CdpSession> {
    const response = await fetch(`http://${host}:${port}/json/list`);
    const targets = await response.json() as { webSocketDebuggerUrl?: string }[];
    const url = targets.find((t) => t.webSocketDebuggerUrl)?.webSocketDebuggerUrl;
    if (!url) throw new Error(`The inspector at ${host}:${port} lists no debuggable target`);
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = () => reject(new Error(`Cannot open ${url}`));
    });
    return new CdpSession(socket);
  }

  send<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (r: unknown) => void, reject });
      this.#socket.send(JSON.stringify({ id, method, params }));
    });
  }

  close(): void {
    this.#socket.close();
  }
}

/** The process' CPU seconds and reconciles so far, when `--pid` and `--metrics` were given. */
async function readCounters(pid?: number, metrics?: string) {
  const cpuSeconds = pid === undefined ? undefined : readProcessTree(pid)?.cpuSeconds;
  const reconciles = metrics === undefined
    ? undefined
    : sumSeries(await scrapeMetrics(metrics), "controller_runtime_reconcile_total");
  return { cpuSeconds, reconciles };
}

function positive(flag: string, value: string | undefined, fallback: number): number {
  const number = value === undefined ? fallback : Number(value);
  if (!Number.isFinite(number) || number <= 0) {
    throw new RangeError(`Cannot profile: '--${flag}' must be a positive number, got ${value}`);
  }
  return number;
}

async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      host: { type: "string", default: "127.0.0.1" },
      port: { type: "string", default: "9229" },
      seconds: { type: "string" },
      out: { type: "string", default: "kinglet.cpuprofile" },
      "interval-us": { type: "string", default: "500" },
      top: { type: "string", default: "25" },
      pid: { type: "string" },
      metrics: { type: "string" },
    },
  });
  const seconds = values.seconds === undefined ? undefined : positive("seconds", values.seconds, 0);
  const pid = values.pid === undefined ? undefined : positive("pid", values.pid, 0);
  const session = await CdpSession.connect(values.host, positive("port", values.port, 9229));
  await session.send("Profiler.enable");
  await session.send("Profiler.setSamplingInterval", {
    interval: Math.round(positive("interval-us", values["interval-us"], 500)),
  });
  const before = await readCounters(pid, values.metrics);
  await session.send("Profiler.start");
  console.error(`profiling ${seconds === undefined ? "until SIGINT" : `for ${seconds} s`}...`);

  const stop = Promise.withResolvers<void>();
  const onSignal = () => stop.resolve();
  Deno.addSignalListener("SIGINT", onSignal);
  const timer = seconds === undefined ? undefined : setTimeout(onSignal, seconds * 1000);
  await stop.promise;
  clearTimeout(timer);
  Deno.removeSignalListener("SIGINT", onSignal);

  const { profile } = await session.send<{ profile: CpuProfile }>("Profiler.stop");
  const after = await readCounters(pid, values.metrics);
  session.close();
  await Deno.writeTextFile(values.out, JSON.stringify(profile));
  console.log(`wrote ${values.out}`);
  const summary = summarizeProfile(profile);
  for (const line of formatSummary(summary, positive("top", values.top, 25))) console.log(line);

  if (before.cpuSeconds !== undefined && after.cpuSeconds !== undefined) {
    const cpuMs = (after.cpuSeconds - before.cpuSeconds) * 1000;
    console.log(
      `\nProcess CPU (user+sys, all threads): ${cpuMs.toFixed(0)} ms; ` +
        `main thread busy in the profile: ${summary.busyMs.toFixed(0)} ms.`,
    );
    if (before.reconciles !== undefined && after.reconciles !== undefined) {
      const reconciles = after.reconciles - before.reconciles;
      const per = reconciles > 0 ? (cpuMs / reconciles).toFixed(2) : "-";
      const busyPer = reconciles > 0 ? (summary.busyMs / reconciles).toFixed(2) : "-";
      console.log(
        `Reconciles: ${reconciles}; CPU per reconcile ${per} ms (main thread ${busyPer} ms).`,
      );
    }
  }
}

if (import.meta.main) await main(Deno.args);
