/**
 * The bench's shape: its folders import one way (the harness and the report
 * build on the measurements, the probes on both, nothing on `main.ts`), no
 * module reaches back through a circle, and `bench/latest/` keeps each
 * run's report, charts and summary but none of its raw samples.
 *
 * @module
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BENCH = join(ROOT, "bench");

/** What each folder of bench/ may import from the others. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  "": ["harness", "measure", "report"],
  harness: ["measure"],
  measure: [],
  report: ["measure"],
  probes: ["harness", "measure"],
  targets: [],
};

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* walk(path);
    else yield path;
  }
}

/** The bench files each bench module imports, by path relative to bench/. */
async function benchImports(): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  for await (const path of walk(BENCH)) {
    const file = relative(BENCH, path);
    if (!file.endsWith(".ts") || file.startsWith("latest/")) continue;
    // Module documentation and JSDoc examples import too, but are no edge of the graph.
    const code = (await Deno.readTextFile(path)).replace(/\/\*[\s\S]*?\*\//g, "");
    const specifiers = [...code.matchAll(/(?:import|export)\b[^;]*?from\s+"(\.[^"]+)"/g)];
    graph.set(
      file,
      specifiers
        .map((m) => normalize(join(dirname(file), m[1]!)))
        .filter((target) => !target.startsWith("..")),
    );
  }
  return graph;
}

const folderOf = (file: string) => (file.includes("/") ? file.split("/")[0]! : "");

Deno.test("bench's folders import one way", async () => {
  const graph = await benchImports();
  assert.ok(graph.size > 30, `read ${graph.size} bench modules`);
  const wrong: string[] = [];
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    for (const target of targets) {
      const to = folderOf(target);
      if (to !== from && !MAY_IMPORT[from]?.includes(to)) wrong.push(`${file} -> ${target}`);
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("no bench module imports itself through a circle", async () => {
  const graph = await benchImports();
  const state = new Map<string, "open" | "done">();
  const circles: string[] = [];
  const visit = (file: string, path: string[]) => {
    state.set(file, "open");
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") {
        circles.push([...path.slice(path.indexOf(next)), file, next].join(" -> "));
      } else if (!state.has(next)) visit(next, [...path, file]);
    }
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file, []);
  assert.deepEqual(circles, []);
});

Deno.test("bench/latest keeps reports and summaries, not raw samples", async () => {
  const raw: string[] = [];
  for await (const path of walk(join(BENCH, "latest"))) {
    const file = relative(BENCH, path);
    if (/results\.json(\.gz)?$|\.log(\.gz)?$|\.cpuprofile$|\.heapsnapshot$/.test(file)) {
      raw.push(file);
    }
    if (file.split("/").includes("logs")) raw.push(file);
  }
  assert.deepEqual(raw, []);
});
