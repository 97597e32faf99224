import assert from "node:assert/strict";

const MAIN = new URL("../../main.ts", import.meta.url).href;

interface ModuleInfo {
  specifier: string;
  dependencies?: { isDynamic?: boolean; code?: { specifier?: string } }[];
}

/** Every module main.ts loads before it runs, following static imports only. */
async function staticGraph(root: string): Promise<Set<string>> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", root],
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const info = JSON.parse(new TextDecoder().decode(stdout)) as { modules: ModuleInfo[] };
  const modules = new Map(info.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const pending = [root];
  while (pending.length) {
    const specifier = pending.pop()!;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (const dependency of modules.get(specifier)?.dependencies ?? []) {
      const next = dependency.code?.specifier;
      if (next && !dependency.isDynamic) pending.push(next);
    }
  }
  return seen;
}

Deno.test("kinglet loads no npm package and no node: module before a command asks for one", async () => {
  const graph = await staticGraph(MAIN);
  // Any of them loads Deno's Node compatibility layer, 3.5 MiB and more of resident memory.
  const foreign = [...graph].filter((s) => !s.startsWith("file:"));
  assert.deepEqual(foreign, []);
  assert.ok([...graph].some((s) => s.endsWith("/lib/cli/run.ts")), "the run path is in the graph");
});
