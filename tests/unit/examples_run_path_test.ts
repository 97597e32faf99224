/**
 * The examples keep zod off their run path, as kinglet's own operators do:
 * nothing `examples/<name>/main.ts` may load, static and dynamic imports
 * alike, is zod or the example's `schema.ts`, which only `deno task crds`
 * and the tests load. The run path gets the kind's `Resource` from
 * `kind.ts`, and its type by `export type`, which `deno info` lists with a
 * type side only; the second test holds that, so the first cannot pass
 * for want of a graph to search.
 */
import assert from "node:assert/strict";
import { moduleGraph } from "../_support/module_graph.ts";

const EXAMPLES = new URL("../../examples/", import.meta.url);

/** zod, by the specifier an import resolves to (`npm:zod@4.6.7`) or from a `node_modules`. */
const ZOD = /^npm:\/?zod(@|\/|$)|\/node_modules\/zod\//;

/** Each example's folder name, sorted. */
async function examples(): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(EXAMPLES)) {
    if (entry.isDirectory) names.push(entry.name);
  }
  assert.ok(names.length >= 2, `expected two examples, found ${names}`);
  return names.sort();
}

/** The `file:` URL of `file` in the example `name`. */
const at = (name: string, file: string) => new URL(`${name}/${file}`, EXAMPLES).href;

Deno.test("an example's main.ts never loads zod or its schema.ts", async (t) => {
  for (const name of await examples()) {
    await t.step(name, async () => {
      const { reachable } = await moduleGraph(at(name, "main.ts"));
      assert.ok(reachable.has(at(name, "kind.ts")), `${name}'s run path loads no kind.ts`);
      const schema = at(name, "schema.ts");
      assert.deepEqual([...reachable].filter((s) => s === schema || ZOD.test(s)), []);
    });
  }
});

Deno.test("a type-only import is in deno info's graph without a code side, and zod is found where loaded", async (t) => {
  for (const name of await examples()) {
    await t.step(name, async () => {
      const schema = at(name, "schema.ts");
      const { modules } = await moduleGraph(at(name, "main.ts"));
      const types = modules.get(at(name, "kind.ts"))?.dependencies?.find((dependency) =>
        dependency.type?.specifier === schema
      );
      assert.ok(types, `${name}'s kind.ts does not re-export the type of schema.ts`);
      assert.equal(types.code, undefined, `${name}'s kind.ts loads schema.ts at run time`);
      const { reachable } = await moduleGraph(schema);
      assert.ok([...reachable].some((s) => ZOD.test(s)), `no zod found from ${name}'s schema.ts`);
    });
  }
});
