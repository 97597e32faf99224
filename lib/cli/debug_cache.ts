// deno-lint-ignore-file no-console -- the command's output is its interface
/**
 * `kinglet debug cache`: what a running kinglet caches, read from its
 * `/debug/cache` endpoint and printed as tables. Without `--cache`, one row
 * per cache (keys, resident objects, bytes, freshness); with it, one row per
 * key of that cache (resourceVersion, resident or evicted, bytes), every page.
 *
 * @example
 * ```ts ignore
 * import { debugCommand } from "./debug_cache.ts";
 * await debugCommand(["cache", "--address", "127.0.0.1:8080", "--cache", "secrets"]);
 * ```
 *
 * @module
 */
import { describeError } from "../kube/errors.ts";
import type { CacheKeysPage } from "../runtime/cache/cache_debug.ts";
import { type FlagSpec, formatHelp, parseFlags, UsageError } from "./flags.ts";
import { suggest } from "./suggest.ts";
import { formatTable } from "./table.ts";

/** Flags of `kinglet debug cache`. */
export const DEBUG_CACHE_FLAGS: readonly FlagSpec[] = [
  {
    name: "address",
    type: "string",
    default: "127.0.0.1:8080",
    help: "Where the kinglet serves /debug/cache: its --metrics-bind-address, or a URL.",
  },
  {
    name: "cache",
    type: "string",
    default: "",
    help: "List the keys of this cache (a name from the summary, e.g. secrets).",
  },
  {
    name: "token",
    type: "string",
    default: "",
    help:
      "A bearer token for a kinglet that protects /debug/cache (in a pod): one allowed to get it, e.g. kubectl create token.",
  },
  {
    name: "page-size",
    type: "integer",
    default: "500",
    help: "Keys fetched per request.",
  },
];

/** What `/debug/cache` answers without `?cache=`, as far as the table shows it. */
export interface CacheSummary {
  phase: string;
  memory?: { rssBytes?: number };
  controllers?: { name: string; queueDepth: number; inFlight: number }[];
  caches: Record<string, {
    keys: number;
    objects: number;
    bytes: number;
    evictions: number;
    synced: boolean;
    resourceVersion?: string;
    restarts: number;
  }>;
}

/**
 * Runs `kinglet debug <args>`; resolves to the exit code.
 *
 * @throws {UsageError} on an unknown subcommand or bad flags.
 * @throws {Error} when the kinglet cannot be reached or answers with an error.
 */
export async function debugCommand(args: readonly string[]): Promise<number> {
  const [sub, ...rest] = args;
  const flags = sub === "cache" ? parseFlags(DEBUG_CACHE_FLAGS, rest, {}) : undefined;
  if (flags?.help || sub === undefined || sub === "--help" || sub === "-h") {
    console.log(formatHelp("kinglet debug cache [flags]", DEBUG_CACHE_FLAGS));
    return 0;
  }
  if (!flags) {
    const near = suggest(sub, ["cache"]);
    throw new UsageError(
      `unknown debug command "${sub}"${near ? ` (did you mean ${near}?)` : "; use cache"}`,
    );
  }
  const base = endpoint(flags.values.address ?? "");
  const bearer = flags.values.token || undefined;
  const cache = flags.values.cache;
  if (!cache) {
    console.log(summaryTable(await fetchJson<CacheSummary>(base, "", bearer)));
    return 0;
  }
  const pages: CacheKeysPage[] = [];
  let token: string | undefined;
  do {
    const query = new URLSearchParams({ cache, limit: flags.values["page-size"] ?? "500" });
    if (token) query.set("continue", token);
    const page = await fetchJson<CacheKeysPage>(base, `?${query}`, bearer);
    pages.push(page);
    token = page.continue;
  } while (token);
  console.log(keysTable(pages));
  return 0;
}

/**
 * The `/debug/cache` URL of an address as `--metrics-bind-address` takes it
 * (`:8080` means this host), or of a URL given whole.
 *
 * @throws {UsageError} when `address` is neither.
 */
export function endpoint(address: string): string {
  if (/^https?:\/\//.test(address)) return `${address.replace(/\/+$/, "")}/debug/cache`;
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:/]*):(\d{1,5})$/.exec(address);
  if (!match) {
    throw new UsageError(
      `--address=${
        JSON.stringify(address)
      }: expected host:port, :port or a URL, e.g. 127.0.0.1:8080`,
    );
  }
  const host = !match[1] || match[1] === "0.0.0.0" ? "127.0.0.1" : match[1];
  return `http://${host}:${match[2]}/debug/cache`;
}

/** The summary as a table, one row per cache, under a line of process figures. */
export function summaryTable(summary: CacheSummary): string {
  const rss = summary.memory?.rssBytes;
  const queued = (summary.controllers ?? []).map((c) => `${c.name} ${c.queueDepth}`).join(", ");
  const head = `phase ${summary.phase}` +
    (rss === undefined ? "" : `, RSS ${mebibytes(rss)}`) +
    (queued ? `, queue depth ${queued}` : "");
  const rows = Object.entries(summary.caches).map(([name, c]) => [
    name,
    c.synced ? "yes" : "no",
    String(c.keys),
    String(c.objects),
    String(c.keys - c.objects),
    mebibytes(c.bytes),
    String(c.evictions),
    c.resourceVersion ?? "",
  ]);
  const header = ["CACHE", "SYNCED", "KEYS", "RESIDENT", "EVICTED", "BYTES", "EVICTIONS", "RV"];
  return `${head}\n\n${formatTable(header, rows)}`;
}

/** Every key of the pages as a table, then a count. */
export function keysTable(pages: readonly CacheKeysPage[]): string {
  const items = pages.flatMap((page) => page.items);
  const rows = items.map((i) => [
    i.key,
    i.resourceVersion,
    i.resident ? "resident" : "evicted",
    i.bytes === null ? "-" : String(i.bytes),
  ]);
  const resident = items.filter((i) => i.resident).length;
  const cache = pages[0]?.cache ?? "";
  return `${formatTable(["KEY", "RESOURCEVERSION", "STATE", "BYTES"], rows)}\n\n` +
    `${items.length} keys in ${cache}, ${resident} resident, ${items.length - resident} evicted`;
}

function mebibytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

async function fetchJson<T>(base: string, query: string, token?: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(base + query, {
      signal: AbortSignal.timeout(10_000),
      ...(token && { headers: { authorization: `Bearer ${token}` } }),
    });
  } catch (error) {
    throw new Error(
      `cannot reach kinglet at ${base}: ${describeError(error)}; ` +
        "is it running, and is --address its --metrics-bind-address?",
    );
  }
  const text = await response.text();
  if (!response.ok) {
    let message = text.trim();
    try {
      message = JSON.parse(text).error ?? message;
    } catch {
      // Not JSON: the text itself says what went wrong.
    }
    throw new Error(`${base}${query}: ${response.status} ${message}`);
  }
  return JSON.parse(text) as T;
}
