/**
 * The modules an author depends on agree everywhere they are listed: the
 * export table of docs/writing-operators.md, the exports of deno.json, the
 * names kinglet maps for its own examples, the import map `kinglet init`
 * writes, and the import maps the guide shows.
 */
import assert from "node:assert/strict";
import meta from "../../deno.json" with { type: "json" };
import { importMap } from "../../lib/cli/init/dependency.ts";

const GUIDE = await Deno.readTextFile(new URL("../../docs/writing-operators.md", import.meta.url));

/** `@kinglet/kinglet/<name>` → `lib/<...>/mod.ts`, from the rows of the guide's export table. */
function guideTable(): Record<string, string> {
  const rows = GUIDE.split("\n").filter((line) => /^\| `@kinglet\/kinglet\/[\w/]+`/.test(line));
  return Object.fromEntries(rows.map((row) => {
    const [name, path] = row.split("|").slice(1, 3).map((cell) => cell.trim().replaceAll("`", ""));
    return [name!, path!];
  }));
}

/** What deno.json exports to authors: every export but kinglet's own command line. */
function exported(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(meta.exports)
      .filter(([name]) => name !== ".")
      .map(([name, path]) => [`@kinglet/kinglet/${name.slice(2)}`, path.slice(2)]),
  );
}

/** The `@kinglet/kinglet/*` entries of `map`, with `prefix` taken off their targets. */
function kingletEntries(map: Record<string, string>, prefix: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(map)
      .filter(([name]) => name.startsWith("@kinglet/kinglet/"))
      .map(([name, path]) => [name, path.slice(prefix.length)]),
  );
}

Deno.test("the guide's export table lists exactly the modules deno.json exports", () => {
  assert.deepEqual(guideTable(), exported());
});

Deno.test("kinglet's own import map and kinglet init's map every exported module, and no other", () => {
  assert.deepEqual(kingletEntries(meta.imports, "./"), exported());
  assert.deepEqual(kingletEntries(importMap("./vendor/kinglet"), "./vendor/kinglet/"), exported());
});

Deno.test("the import maps the guide shows name every exported module", () => {
  const blocks = GUIDE.split("```jsonc").slice(1).map((rest) => rest.split("```")[0]!);
  assert.equal(blocks.length, 2, "the vendored and the URL import maps");
  for (const block of blocks) {
    const shown = [...block.matchAll(/"(@kinglet\/kinglet\/[\w/]+)"/g)].map((m) => m[1]!);
    assert.deepEqual(shown.sort(), Object.keys(exported()).sort());
  }
});
