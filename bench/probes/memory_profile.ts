/**
 * Where a running process' resident memory goes, from /proc: anonymous
 * memory (V8's heap, malloc, thread stacks) against file-backed pages (the
 * executable's code and data, shared with every other process running it),
 * the largest mappings, and, given kinglet's `/debug/cache` URL, V8's own
 * view of its heap. Beside it the same split of an idle Deno process started
 * with the same V8 flags: the floor that any program on this runtime pays.
 *
 *   deno run -A bench/probes/memory_profile.ts <pid> [--debug-cache http://127.0.0.1:8080/debug/cache] [--v8-flags=...]
 *
 * @module
 */
// deno-lint-ignore-file no-console -- prints its report
import { parseArgs } from "node:util";
import { V8_FLAGS } from "../../lib/build/mod.ts";

/** The split of one process' resident memory, in bytes. */
export interface MemorySplit {
  rss: number;
  anon: number;
  file: number;
  shmem: number;
  /** The largest mappings by resident size: path (or `[anon]`, `[heap]`, `[stack]`) and bytes. */
  top: { mapping: string; bytes: number }[];
}

/**
 * Reads `/proc/<pid>/status` and `/proc/<pid>/smaps` of `pid`.
 *
 * @throws {Deno.errors.NotFound} when the process is gone.
 */
export function readMemorySplit(pid: number, topCount = 8): MemorySplit {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1] ?? 0) * 1024;
  const byMapping = new Map<string, number>();
  let mapping = "";
  for (const line of Deno.readTextFileSync(`/proc/${pid}/smaps`).split("\n")) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (header) {
      mapping = header[1] || "[anon]";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB$/.exec(line);
    if (rss) byMapping.set(mapping, (byMapping.get(mapping) ?? 0) + Number(rss[1]) * 1024);
  }
  const top = [...byMapping].map(([m, bytes]) => ({ mapping: m, bytes }))
    .sort((a, b) => b.bytes - a.bytes).slice(0, topCount);
  return { rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile"), shmem: kb("RssShmem"), top };
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

function print(title: string, split: MemorySplit): void {
  console.log(
    `${title}: RSS ${mib(split.rss)} = anonymous ${mib(split.anon)} + file-backed ` +
      `${mib(split.file)} + shared memory ${mib(split.shmem)}`,
  );
  for (const { mapping, bytes } of split.top) {
    console.log(`  ${mib(bytes).padStart(10)}  ${mapping}`);
  }
}

/** Starts an idle Deno process with `v8Flags`, waits for it to settle, reads it and stops it. */
async function idleDeno(v8Flags: string): Promise<MemorySplit> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...(v8Flags ? [`--v8-flags=${v8Flags}`] : []), "-"],
    stdin: "piped",
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode("setInterval(() => {}, 1000);\n"));
  await writer.close();
  await new Promise((r) => setTimeout(r, 3_000));
  try {
    return readMemorySplit(child.pid);
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: {
      "debug-cache": { type: "string" },
      "v8-flags": { type: "string", default: V8_FLAGS.join(",") },
    },
  });
  const pid = Number(positionals[0]);
  if (!Number.isInteger(pid) || pid <= 0) {
    console.error(
      "usage: bench/probes/memory_profile.ts <pid> [--debug-cache URL] [--v8-flags=FLAGS]",
    );
    Deno.exit(2);
  }
  print(`process ${pid}`, readMemorySplit(pid));
  if (values["debug-cache"]) {
    const response = await fetch(values["debug-cache"]);
    if (!response.ok) {
      console.error(
        `${values["debug-cache"]} answered ${response.status}: ${await response.text()}`,
      );
      Deno.exit(1);
    }
    const body = await response.json() as { memory?: Record<string, number> };
    const m = body.memory ?? {};
    console.log(
      `V8 (from /debug/cache): heap used ${mib(m.heapUsedBytes ?? 0)} of ` +
        `${mib(m.heapTotalBytes ?? 0)}, external ${mib(m.externalBytes ?? 0)}`,
    );
  }
  print(
    `idle Deno with ${values["v8-flags"] || "no V8 flags"}`,
    await idleDeno(values["v8-flags"]!),
  );
}
