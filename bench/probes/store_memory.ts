/**
 * What the store costs in memory: heap and RSS with 5,000 ConfigMap-like
 * objects of about 3 KB of JSON each (with `managedFields` as the API server
 * sends them), kept whole, through the default transform (which drops
 * `managedFields` and the last-applied annotation), and under a budget of
 * 1,000 full objects (evicted ones read back by a stubbed fetch), once just
 * filled and once after every key was read back.
 *
 *   deno run -A --v8-flags=--expose-gc bench/probes/store_memory.ts
 *
 * Each case runs in a fresh process, since RSS rarely shrinks once grown:
 * the process measures itself after a full GC, fills a store by applying
 * ADDED events parsed from JSON one at a time (as a watch delivers them),
 * collects garbage again and measures the difference. Extra V8 flags for the
 * cases (e.g. `--max-semi-space-size=1`) may follow `--`.
 *
 * @module
 */
import type { KubeObject } from "../../lib/kube/types.ts";
import { Store, type StoreOptions } from "../../lib/runtime/cache/store.ts";

const OBJECTS = 5_000;
const BUDGET = 1_000;
const CASES = ["whole", "stripped", "budget", "budget-read-all"] as const;
type Case = typeof CASES[number];

/** What one case measured, in bytes. */
interface Measurement {
  case: Case;
  objects: number;
  keys: number;
  jsonBytes: number;
  managedFieldsBytes: number;
  heapDelta: number;
  rssDelta: number;
  rss: number;
  peakRss: number | undefined;
  estimate: number;
  evictions: number;
  misses: number;
}

const encoder = new TextEncoder();
function print(line = ""): void {
  Deno.stdout.writeSync(encoder.encode(`${line}\n`));
}

/** The JSON of ConfigMap `i`, about 3 KB, a third of it managedFields. */
function configMapJson(i: number): string {
  const id = String(i).padStart(5, "0");
  const keys = [
    "LOG_LEVEL",
    "FEATURE_FLAGS",
    "CACHE_TTL",
    "UPSTREAM_URL",
    "MAX_CONNECTIONS",
    "REQUEST_TIMEOUT",
    "RETRY_BUDGET",
    "TRACING_ENDPOINT",
    "METRICS_PORT",
    "REGION",
  ];
  const labels = {
    "app.kubernetes.io/name": `service-${id}`,
    "app.kubernetes.io/part-of": `shop-${i % 17}`,
    "app.kubernetes.io/managed-by": "kinglet",
    "tier": i % 2 ? "backend" : "frontend",
  };
  const yaml = Array.from(
    { length: 40 },
    (_, line) => `  setting_${line}: value-${id}-${(i * 31 + line * 7) % 1000}`,
  ).join("\n");
  const data: Record<string, string> = {
    "application.yaml": `server:\n  port: ${8000 + (i % 100)}\n${yaml}\n`,
  };
  keys.forEach((key, k) => data[key] = `${key.toLowerCase()}-${id}-${k}`);
  const fields = (names: string[]) => Object.fromEntries(names.map((n) => [`f:${n}`, {}]));
  const time = `2026-11-${String(1 + (i % 28)).padStart(2, "0")}T10:00:00Z`;
  return JSON.stringify({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `service-${id}-config`,
      namespace: `team-${i % 40}`,
      uid: crypto.randomUUID(),
      resourceVersion: String(100_000 + i),
      creationTimestamp: time,
      labels,
      annotations: { "kinglet.dev/revision": String(i % 9) },
      managedFields: [
        {
          manager: "kubectl-client-side-apply",
          operation: "Update",
          apiVersion: "v1",
          time,
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:data": { ".": {}, ...fields(Object.keys(data)) },
            "f:metadata": { "f:labels": { ".": {}, ...fields(Object.keys(labels)) } },
          },
        },
        {
          manager: "helm",
          operation: "Update",
          apiVersion: "v1",
          time,
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:metadata": {
              "f:annotations": { ".": {}, "f:meta.helm.sh/release-name": {} },
              "f:labels": fields(["app.kubernetes.io/name", "app.kubernetes.io/part-of"]),
            },
          },
        },
        {
          manager: "kinglet",
          operation: "Apply",
          apiVersion: "v1",
          time,
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:metadata": {
              "f:annotations": { "f:kinglet.dev/revision": {} },
              "f:labels": fields(["app.kubernetes.io/managed-by", "tier"]),
            },
          },
        },
      ],
    },
    data,
  });
}

/**
 * Collects garbage fully (three rounds, for weak references and finalizers).
 *
 * @throws {Error} unless the process runs with `--v8-flags=--expose-gc`.
 */
export function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) {
    throw new Error(
      "Cannot measure: run with --v8-flags=--expose-gc so that garbage can be collected first",
    );
  }
  for (let i = 0; i < 3; i++) collect();
}

function peakRss(): number | undefined {
  try {
    const status = Deno.readTextFileSync("/proc/self/status");
    const kib = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
    return kib === undefined ? undefined : Number(kib) * 1024;
  } catch {
    return undefined;
  }
}

async function measure(which: Case): Promise<Measurement> {
  const options: StoreOptions<KubeObject> = which === "whole"
    ? { transform: (object) => object }
    : which.startsWith("budget")
    ? {
      budget: { maxObjects: BUDGET },
      fetch: (key) => Promise.resolve(JSON.parse(configMapJson(Number(key.slice(-12, -7))))),
    }
    : {};
  gc();
  const before = Deno.memoryUsage();
  const store = new Store(options);
  let jsonBytes = 0;
  let managedFieldsBytes = 0;
  for (let i = 0; i < OBJECTS; i++) {
    const text = configMapJson(i);
    const object = JSON.parse(text);
    jsonBytes += text.length;
    managedFieldsBytes += JSON.stringify(object.metadata.managedFields).length;
    store.apply({ type: "applied", object });
  }
  if (which === "budget-read-all") {
    // Every key read once: the churn of reading evicted objects back costs memory too.
    for (const key of store.keys()) await store.getOrFetch(key);
  }
  gc();
  const after = Deno.memoryUsage();
  const stats = store.stats();
  return {
    case: which,
    objects: stats.objects,
    keys: stats.keys,
    jsonBytes: jsonBytes / OBJECTS,
    managedFieldsBytes: managedFieldsBytes / OBJECTS,
    heapDelta: after.heapUsed - before.heapUsed,
    rssDelta: after.rss - before.rss,
    rss: after.rss,
    peakRss: peakRss(),
    estimate: stats.bytes,
    evictions: stats.evictions,
    misses: stats.misses,
  };
}

async function runCase(which: Case, v8Flags: string[]): Promise<Measurement> {
  const flags = ["--expose-gc", ...v8Flags].join(",");
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `--v8-flags=${flags}`, import.meta.filename!, "--case", which],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!output.success) throw new Error(`The ${which} case failed with code ${output.code}`);
  return JSON.parse(new TextDecoder().decode(output.stdout)) as Measurement;
}

function mib(bytes: number | undefined): string {
  return bytes === undefined ? "n/a" : (bytes / 2 ** 20).toFixed(1);
}

function table(results: Measurement[]): string[] {
  const header = [
    "case",
    "full objects",
    "keys",
    "heap MiB",
    "heap B/key",
    "RSS Δ MiB",
    "RSS MiB",
    "peak RSS MiB",
    "estimate MiB",
    "evictions",
    "misses",
  ];
  const rows = results.map((r) => [
    r.case,
    String(r.objects),
    String(r.keys),
    mib(r.heapDelta),
    String(Math.round(r.heapDelta / r.keys)),
    mib(r.rssDelta),
    mib(r.rss),
    mib(r.peakRss),
    mib(r.estimate),
    String(r.evictions),
    String(r.misses),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join("  ");
  return [line(header), ...rows.map(line)];
}

if (import.meta.main) {
  const caseArg = Deno.args.indexOf("--case");
  if (caseArg >= 0) {
    const which = Deno.args[caseArg + 1] as Case;
    if (!CASES.includes(which)) {
      throw new TypeError(`Unknown case '${which}': expected one of ${CASES.join(", ")}`);
    }
    print(JSON.stringify(await measure(which)));
  } else {
    const dashes = Deno.args.indexOf("--");
    const v8Flags = dashes >= 0 ? Deno.args.slice(dashes + 1) : [];
    const results: Measurement[] = [];
    for (const which of CASES) results.push(await runCase(which, v8Flags));
    const { jsonBytes: json, managedFieldsBytes: managed } = results[0]!;
    print(
      `Store memory: ${OBJECTS} ConfigMaps of ${Math.round(json)} B of JSON each ` +
        `(${Math.round(managed)} B of it managedFields) ` +
        `(${mib(json * OBJECTS)} MiB), budget ${BUDGET}; deno ${Deno.version.deno}, ` +
        `v8 flags: --expose-gc${v8Flags.map((f) => ` ${f}`).join("")}`,
    );
    print();
    for (const line of table(results)) print(line);
  }
}
