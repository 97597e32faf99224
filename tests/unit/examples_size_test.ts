/**
 * Holds the examples to the size of a kube-rs operator: each example's code
 * outside its kind's declaration is at most 60 lines, not counting blank
 * lines and comments, and imports at most 10 names from kinglet's modules.
 * The declaration is `schema.ts` (the zod schemas, the CRD and the type) and
 * `kind.ts`, its run-time half (the `Resource`, the type re-exported): kube-rs
 * writes both as one `#[derive(CustomResource)]`, and kinglet splits them only
 * to keep zod off the run path. An example's admission webhook is its own
 * module, `webhook.ts`, held apart to at most 40 lines, doc and all. The
 * step names print the counts.
 */
import assert from "node:assert/strict";

const EXAMPLES = new URL("../../examples/", import.meta.url);
const MAX_LINES = 60;
const MAX_NAMES = 10;
/** The kind's declaration: its zod half and its run-time half. */
const DECLARATION = new Set(["schema.ts", "kind.ts"]);
/** An example's webhook, measured on its own. */
const WEBHOOK = "webhook.ts";
const MAX_WEBHOOK_LINES = 40;

/** Lines that are neither blank nor only comment. */
function codeLines(source: string): number {
  let inBlock = false;
  let count = 0;
  for (const raw of source.split("\n")) {
    let line = raw.trim();
    if (inBlock) {
      const end = line.indexOf("*/");
      if (end === -1) continue;
      inBlock = false;
      line = line.slice(end + 2).trim();
    }
    if (line.startsWith("/*")) {
      const end = line.indexOf("*/", 2);
      if (end === -1) {
        inBlock = true;
        continue;
      }
      line = line.slice(end + 2).trim();
    }
    if (line !== "" && !line.startsWith("//")) count++;
  }
  return count;
}

/** The names a module imports from kinglet's own modules (`lib/`), types included. */
function kingletImports(source: string): string[] {
  const names: string[] = [];
  const imports = /import\s+(?:type\s+)?([^;]*?)\s+from\s+"([^"]+)"/gs;
  for (const [, clause, from] of source.matchAll(imports)) {
    if (!/(^|\/)lib\/|^@kinglet\/kinglet/.test(from!)) continue;
    const braced = clause!.match(/\{([^}]*)\}/)?.[1];
    const bare = clause!.replace(/\{[^}]*\}/, "").split(",").map((s) => s.trim());
    const listed = (braced ?? "").split(",").map((s) => s.trim().replace(/^type\s+/, ""));
    for (const name of [...bare, ...listed]) {
      const local = name.replace(/^\*\s+as\s+/, "").split(/\s+as\s+/).at(-1)!;
      if (local !== "") names.push(local);
    }
  }
  return names;
}

async function measure(example: string): Promise<{ lines: number; names: string[] }> {
  let lines = 0;
  const names = new Set<string>();
  for await (const entry of Deno.readDir(new URL(`${example}/`, EXAMPLES))) {
    if (!entry.isFile || !entry.name.endsWith(".ts") || DECLARATION.has(entry.name)) continue;
    if (entry.name === WEBHOOK) continue;
    const source = await Deno.readTextFile(new URL(`${example}/${entry.name}`, EXAMPLES));
    lines += codeLines(source);
    for (const name of kingletImports(source)) names.add(name);
  }
  return { lines, names: [...names].sort() };
}

Deno.test("the line counter skips blank lines and comments, and counts code beside a comment", () => {
  const source = [
    "/**",
    " * A module doc.",
    " */",
    "",
    "// a note",
    "const a = 1; // why",
    "/* inline */ const b = 2;",
    "const c = `",
    "*/`;",
  ].join("\n");
  assert.equal(codeLines(source), 4);
});

Deno.test("the import counter counts every name from kinglet's modules, types included", () => {
  const source = [
    'import { z } from "zod";',
    'import { CONFIG_MAPS, type KubeObject } from "../../lib/kube/mod.ts";',
    "import {",
    "  Manager,",
    "  setupLogging as logging,",
    '} from "../../lib/runtime/mod.ts";',
    'import type { Backup } from "./schema.ts";',
    'import * as crd from "@kinglet/kinglet/crd";',
  ].join("\n");
  assert.deepEqual(kingletImports(source), [
    "CONFIG_MAPS",
    "KubeObject",
    "Manager",
    "logging",
    "crd",
  ]);
});

Deno.test("each example is at most 60 lines outside its kind's declaration and imports at most 10 names", async (t) => {
  const examples: string[] = [];
  for await (const entry of Deno.readDir(EXAMPLES)) {
    if (entry.isDirectory) examples.push(entry.name);
  }
  assert.ok(examples.length >= 2, `expected two examples, found ${examples}`);
  for (const example of examples.sort()) {
    const { lines, names } = await measure(example);
    await t.step(
      `${example}: ${lines} lines outside schema.ts and kind.ts, ${names.length} names`,
      () => {
        assert.ok(lines <= MAX_LINES, `${example} has ${lines} lines of code, over ${MAX_LINES}`);
        assert.ok(
          names.length <= MAX_NAMES,
          `${example} imports ${names.length} names, over ${MAX_NAMES}: ${names.join(", ")}`,
        );
      },
    );
  }
});

Deno.test("an example's webhook is a module of at most 40 lines, doc comments and all", async (t) => {
  let webhooks = 0;
  for await (const entry of Deno.readDir(EXAMPLES)) {
    const file = new URL(`${entry.name}/${WEBHOOK}`, EXAMPLES);
    const source = await Deno.readTextFile(file).catch(() => undefined);
    if (!entry.isDirectory || source === undefined) continue;
    webhooks++;
    const lines = source.trimEnd().split("\n").length;
    await t.step(`${entry.name}/${WEBHOOK}: ${lines} lines, ${codeLines(source)} of code`, () => {
      assert.ok(lines <= MAX_WEBHOOK_LINES, `${entry.name}'s webhook has ${lines} lines`);
    });
  }
  assert.ok(webhooks >= 1, "no example shows a webhook");
});
