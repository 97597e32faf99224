/**
 * What a program loads, read from `deno info --json`: the tests that keep a
 * package, a folder or a file off a run path walk this graph.
 *
 * A dependency `deno info` lists has a `code` side, what is loaded when the
 * importing module runs, and a `type` side, what the type checker reads.
 * An `import type` or `export type ... from` has only the `type` side, so
 * the walks here, which follow `code`, never go through one.
 *
 * @module
 */
import assert from "node:assert/strict";

/** One import of a module, as `deno info --json` lists it. */
export interface ModuleDependency {
  /** The specifier as written, e.g. `./schema.ts`. */
  specifier: string;
  /** Whether it is an `import()`, loaded only when that line runs. */
  isDynamic?: boolean;
  /** The module loaded at run time; absent for a type-only import. */
  code?: { specifier?: string };
  /** The module the type checker reads. */
  type?: { specifier?: string };
}

/** One module of the graph and its imports. */
export interface ModuleInfo {
  /** Its resolved specifier, e.g. `file:///…/main.ts` or `npm:/zod@4.6.7`. */
  specifier: string;
  dependencies?: ModuleDependency[];
}

/** The module graph of a root, and the parts of it that run. */
export interface ModuleGraph {
  /** Every module `deno info` lists, by specifier: those only types reach too. */
  modules: Map<string, ModuleInfo>;
  /** The modules the root loads before it runs: its static code imports, transitively. */
  loaded: Set<string>;
  /** The modules it may load at all: {@link loaded} and dynamic imports, transitively. */
  reachable: Set<string>;
}

/** The modules reached from `root` by code imports, dynamic ones only if `dynamic`. */
function walk(modules: Map<string, ModuleInfo>, root: string, dynamic: boolean): Set<string> {
  const seen = new Set<string>();
  const pending = [root];
  while (pending.length) {
    const specifier = pending.pop()!;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (const dependency of modules.get(specifier)?.dependencies ?? []) {
      const next = dependency.code?.specifier;
      if (next && (dynamic || !dependency.isDynamic)) pending.push(next);
    }
  }
  return seen;
}

/**
 * The module graph of `root`, a `file:` URL, by `deno info --json` under the
 * repository's `deno.json`.
 *
 * @throws {AssertionError} when `deno info` fails, with what it printed.
 */
export async function moduleGraph(root: string): Promise<ModuleGraph> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", root],
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const info = JSON.parse(new TextDecoder().decode(stdout)) as { modules: ModuleInfo[] };
  const modules = new Map(info.modules.map((m) => [m.specifier, m]));
  return { modules, loaded: walk(modules, root, false), reachable: walk(modules, root, true) };
}
