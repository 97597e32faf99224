import assert from "node:assert/strict";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { kingletBundle } from "../_support/kinglet_bundle.ts";
import { moduleGraph } from "../_support/module_graph.ts";

const MAIN = new URL("../../main.ts", import.meta.url).href;
const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** The files a module of the bundle was built from, read from its linked source map. */
async function bundledSources(module: string): Promise<string[]> {
  const path = fileURLToPath(module);
  const map = JSON.parse(await Deno.readTextFile(`${path}.map`)) as { sources: string[] };
  return map.sources.map((source) => resolve(dirname(path), source));
}

Deno.test("kinglet loads no npm package and no node: module before a command asks for one", async () => {
  const { loaded } = await moduleGraph(MAIN);
  // Any of them loads Deno's Node compatibility layer, 3.5 MiB and more of resident memory.
  const foreign = [...loaded].filter((s) => !s.startsWith("file:"));
  assert.deepEqual(foreign, []);
  assert.ok([...loaded].some((s) => s.endsWith("/lib/cli/run.ts")), "the run path is in the graph");
});

Deno.test("the bundle's run path holds no npm package's code and imports no node: module", async () => {
  const { loaded, modules } = await moduleGraph(pathToFileURL(await kingletBundle()).href);
  assert.deepEqual([...loaded].filter((s) => !s.startsWith("file:")), []);
  const runPath = (await Promise.all([...loaded].map(bundledSources))).flat();
  assert.deepEqual(runPath.filter((source) => !source.startsWith(REPO)), []);
  assert.ok(runPath.includes(resolve(REPO, "lib/cli/run.ts")), "the run path is in the bundle");
  // zod and yaml are bundled too, in the chunks that install and crds import when they run.
  const elsewhere = [...modules.keys()].filter((s) => s.startsWith("file:") && !loaded.has(s));
  const packages = (await Promise.all(elsewhere.map(bundledSources))).flat()
    .filter((source) => !source.startsWith(REPO));
  for (const name of ["zod", "yaml"]) {
    assert.ok(packages.some((source) => source.includes(`/${name}/`)), `${name} is bundled`);
  }
});

Deno.test("the bundle's run path never calls the global timers, which are Node's", async () => {
  const { loaded } = await moduleGraph(pathToFileURL(await kingletBundle()).href);
  const texts = await Promise.all(
    [...loaded].map(async (module) => [module, await Deno.readTextFile(fileURLToPath(module))]),
  );
  // Their first call loads node:timers and Node's errors and util.inspect: 4.5 MiB resident.
  const callers = texts.filter(([, text]) =>
    /\b(set|clear)(Timeout|Interval|Immediate)\b/.test(text!)
  );
  assert.deepEqual(callers.map(([module]) => module), []);
  assert.ok(texts.length > 1, "the run path has modules to search");
});

Deno.test("the bundle's run path formats no time with Date's toISOString", async () => {
  const { loaded } = await moduleGraph(pathToFileURL(await kingletBundle()).href);
  const texts = await Promise.all(
    [...loaded].map(async (module) => [module, await Deno.readTextFile(fileURLToPath(module))]),
  );
  // Its first call makes 1.2 to 1.5 MiB of the executable resident; lib/_rfc3339.ts does without.
  const callers = texts.filter(([, text]) => /\btoISOString\b/.test(text!));
  assert.deepEqual(callers.map(([module]) => module), []);
  assert.ok(
    texts.some(([, text]) => text!.includes("Cannot format a timestamp")),
    "rfc3339 is bundled",
  );
});
