import assert from "node:assert/strict";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { importMap, VENDORED } from "../../lib/cli/init/dependency.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
// `import ... from "./x.ts"`, `export ... from "./x.ts"` (type-only ones too) and `import "./x.ts"`.
const IMPORT = /(?:^|\n)\s*(?:import|export)\b(?:[^"';]*?from)?\s*["'](\.{1,2}\/[^"']+)["']/g;

/** Every relative import of every .ts file under `dir` (or of the file `dir`), as repository paths. */
async function imports(dir: string): Promise<{ file: string; target: string }[]> {
  const found: { file: string; target: string }[] = [];
  const read = async (path: string) => {
    const text = await Deno.readTextFile(path);
    // Documentation examples are code too, but they are not part of the module graph.
    const code = text.replace(/\/\*\*[\s\S]*?\*\//g, "");
    for (const match of code.matchAll(IMPORT)) {
      found.push({
        file: relative(ROOT, path),
        target: relative(ROOT, resolve(dirname(path), match[1]!)),
      });
    }
  };
  const walk = async (at: string) => {
    for await (const entry of Deno.readDir(at)) {
      const path = join(at, entry.name);
      if (entry.isDirectory) {
        if (!SKIPPED.includes(relative(ROOT, path))) await walk(path);
      } else if (entry.name.endsWith(".ts")) await read(path);
    }
  };
  const at = join(ROOT, dir);
  if ((await Deno.stat(at)).isFile) await read(at);
  else await walk(at);
  return found;
}

/** Folders of data, not code: the benchmark's committed runs. */
const SKIPPED = ["bench/latest", "bench/results"];

const PUBLIC = [
  "lib/kube/mod.ts",
  "lib/runtime/mod.ts",
  "lib/async/mod.ts",
  "lib/crd/mod.ts",
  // The webhooks' own face, which the root leaves out; kinglet's operators take types only from
  // it, so that the server stays a dynamic import.
  "lib/runtime/webhook/mod.ts",
];

Deno.test("the operators reach the client, the runtime and the CRD module only through their mod.ts", async () => {
  const reaching = (await imports("lib/operators")).filter(({ target }) =>
    /^lib\/(kube|runtime|async|crd)\//.test(target) && !PUBLIC.includes(target)
  );
  assert.deepEqual(reaching, []);
});

Deno.test("the client imports nothing of the runtime, and the async primitives nothing above them", async () => {
  const upward = [
    ...(await imports("lib/kube")).filter(({ target }) => target.startsWith("lib/runtime/")),
    ...(await imports("lib/async")).filter(({ target }) => !target.startsWith("lib/async/")),
  ];
  assert.deepEqual(upward, []);
});

Deno.test("the runtime does not reach into the operators or the CLI", async () => {
  const upward = (await imports("lib/runtime")).filter(({ target }) =>
    /^lib\/(operators|cli)\//.test(target) || target === "main.ts"
  );
  assert.deepEqual(upward, []);
});

Deno.test("no runtime file imports a private file of another folder, only its own or an enclosing one's", async () => {
  const reaching = (await imports("lib/runtime")).filter(({ file, target }) => {
    if (!basename(target).startsWith("_")) return false;
    const home = dirname(target);
    return !(dirname(file) + "/").startsWith(home + "/");
  });
  assert.deepEqual(reaching, []);
});

Deno.test("the spec types sit below their implementations: nothing spec.ts reaches imports it back", async () => {
  const SPEC = "lib/runtime/controller/spec.ts";
  const graph = new Map<string, string[]>();
  for (const { file, target } of await imports("lib")) {
    graph.set(file, [...(graph.get(file) ?? []), target]);
  }
  const reached = new Set<string>();
  const visit = (file: string) => {
    for (const next of graph.get(file) ?? []) {
      if (reached.has(next)) continue;
      reached.add(next);
      visit(next);
    }
  };
  visit(SPEC);
  assert.equal(reached.has(SPEC), false, `${SPEC} reaches itself through its imports`);
});

Deno.test("the CRD module builds on the client alone, and the runtime never loads it", async () => {
  // The webhooks' declarations (a conversion, the paths it is served at) are the one exception:
  // a leaf over the client's types, so that a converted CRD names the path the server answers.
  const upward = (await imports("lib/crd")).filter(({ target }) =>
    !/^lib\/(crd|kube)\//.test(target) && target !== "lib/runtime/webhook/spec.ts"
  );
  const runtime = (await imports("lib/runtime")).filter(({ target }) =>
    target.startsWith("lib/crd/")
  );
  assert.deepEqual([...upward, ...runtime], []);
});

Deno.test("the example operator is written only against the public modules", async () => {
  const inside = (await imports("examples")).filter(({ target }) =>
    !target.startsWith("examples/") && !PUBLIC.includes(target)
  );
  assert.deepEqual(inside, []);
});

Deno.test("the examples import kinglet by its published names, as a project of kinglet init does", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json"))) as {
    exports: Record<string, string>;
    imports: Record<string, string>;
  };
  const relativeToLib = (await imports("examples")).filter(({ target }) =>
    !target.startsWith("examples/")
  );
  assert.deepEqual(relativeToLib, [], "an example reaches kinglet by a relative path");
  const named = await bareImports("examples", /^@kinglet\/kinglet(\/|$)/);
  assert.ok(named.length > 0, "the examples import nothing of kinglet by name");
  for (const { file, specifier } of named) {
    const exported = config.exports[`.${specifier.slice("@kinglet/kinglet".length)}`];
    assert.ok(exported, `${file} imports ${specifier}, which deno.json does not export`);
    const mapped = config.imports[specifier];
    assert.equal(mapped, exported, `deno.json maps ${specifier} elsewhere than its export`);
    assert.ok(
      PUBLIC.includes(exported.replace(/^\.\//, "")),
      `${specifier} is not a public module`,
    );
  }
  const initMap = importMap(VENDORED);
  const unmapped = (await bareImports("examples", /^(?!node:|npm:)/))
    .filter(({ specifier }) => !(specifier in initMap));
  assert.deepEqual(unmapped, [], "a project of kinglet init does not map what an example imports");
  for (const [name, target] of Object.entries(config.imports)) {
    if (!name.startsWith("@kinglet/kinglet/")) continue;
    const exported = config.exports[`.${name.slice("@kinglet/kinglet".length)}`];
    assert.equal(target, exported, `deno.json maps ${name} elsewhere than its export`);
  }
});

/** Every import of a bare specifier matching `pattern` by the .ts files under `dir`. */
async function bareImports(
  dir: string,
  pattern: RegExp,
): Promise<{ file: string; specifier: string }[]> {
  const found: { file: string; specifier: string }[] = [];
  const FROM = /(?:^|\n)\s*(?:import|export)\b[^"';]*?from\s*["']([^"'.][^"']*)["']/g;
  for await (const entry of Deno.readDir(join(ROOT, dir))) {
    if (entry.isDirectory) found.push(...await bareImports(join(dir, entry.name), pattern));
    else if (entry.name.endsWith(".ts")) {
      const text = await Deno.readTextFile(join(ROOT, dir, entry.name));
      for (const match of text.replace(/\/\*\*[\s\S]*?\*\//g, "").matchAll(FROM)) {
        if (pattern.test(match[1]!)) {
          found.push({ file: join(dir, entry.name), specifier: match[1]! });
        }
      }
    }
  }
  return found;
}

/** Where a private file may be imported from: its own folder, or a folder below it. */
function mayImport(file: string, target: string): boolean {
  const home = dirname(target);
  return !basename(target).startsWith("_") || dirname(file) === home ||
    dirname(file).startsWith(`${home}/`);
}

Deno.test("no import reaches into another folder's private file", async () => {
  // A `_`-named file belongs to its folder: the files beside it and below it may import it,
  // as a Rust module's private items serve its children. A sibling folder that needs one names a
  // concept of its own; tests, which check private parts on purpose, are left out.
  const reaching: string[] = [];
  for (const dir of ["main.ts", "lib", "hack", "bench", "examples"]) {
    for (const { file, target } of await imports(dir)) {
      if (!mayImport(file, target)) reaching.push(`${file} -> ${target}`);
    }
  }
  assert.deepEqual(reaching, []);
});

const ROOT_MODULE = "lib/runtime/mod.ts";

/** The names a module exports through `export { ... } from` lists (types included). */
async function exportedNames(path: string): Promise<string[]> {
  const code = (await Deno.readTextFile(join(ROOT, path))).replace(/\/\*\*[\s\S]*?\*\//g, "");
  assert.ok(!/^export \*/m.test(code), `${path} re-exports a whole module`);
  return [...code.matchAll(/^export (?:type )?\{([^}]*)\}/gm)].flatMap((m) =>
    m[1]!.split(",").map((name) => name.trim().replace(/^type /, "")).filter((name) => name)
  );
}

/** The names imported from the runtime's root by the files under `dir`, by package name or path. */
async function rootNamesUsed(dir: string): Promise<Set<string>> {
  const used = new Set<string>();
  const FROM_ROOT =
    /import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*["'](?:@kinglet\/kinglet\/runtime|[./]+runtime\/mod\.ts)["']/g;
  const walk = async (at: string) => {
    const info = await Deno.stat(at);
    if (info.isFile) {
      for (const match of (await Deno.readTextFile(at)).matchAll(FROM_ROOT)) {
        for (const name of match[1]!.split(",")) used.add(name.trim().replace(/^type /, ""));
      }
      return;
    }
    for await (const entry of Deno.readDir(at)) {
      const mine = entry.isDirectory ? entry.name !== "vendor" : entry.name.endsWith(".ts");
      if (mine) await walk(join(at, entry.name));
    }
  };
  if (await exists(join(ROOT, dir))) await walk(join(ROOT, dir));
  return used;
}

Deno.test("the runtime's root holds at most 30 names, each one an operator imports", async () => {
  // kube-rs' root re-exports 13 names, controller-runtime's alias.go 23: the rest of a stage is
  // reached by its module path (deno.json's ./runtime/<stage>). A name earns its place in the root
  // when an example, the project kinglet init writes or one of kinglet's operators imports it.
  const names = await exportedNames(ROOT_MODULE);
  assert.ok(names.length <= 30, `the runtime's root exports ${names.length} names`);
  const used = new Set<string>();
  // The project kinglet init writes: its files (scaffold/) and what writes them (lib/cli/init).
  const scaffold = ["scaffold", "lib/cli/init"];
  for (const dir of ["examples", ...scaffold, "lib/operators", "main.ts"]) {
    for (const name of await rootNamesUsed(dir)) used.add(name);
  }
  assert.deepEqual(names.filter((name) => !used.has(name)), [], "exported, imported by none");
});

Deno.test("every stage of the runtime with a face is exported by deno.json", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json"))) as {
    exports: Record<string, string>;
  };
  const exported = Object.values(config.exports).map((path) => path.replace(/^\.\//, ""));
  const faces: string[] = [];
  for await (const entry of Deno.readDir(join(ROOT, "lib/runtime"))) {
    const face = `lib/runtime/${entry.name}/mod.ts`;
    if (entry.isDirectory && await exists(join(ROOT, face))) faces.push(face);
  }
  assert.deepEqual(faces.filter((face) => !exported.includes(face)).sort(), []);
});

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/** The files of each import circle (strongly connected component) of `edges`, sorted. */
function circles(edges: Map<string, Set<string>>): string[][] {
  // Tarjan's algorithm, iterative so that a deep import chain cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  for (const start of [...edges.keys()].sort()) {
    if (index.has(start)) continue;
    const work: { node: string; next: string[] }[] = [];
    const enter = (node: string) => {
      index.set(node, index.size);
      low.set(node, index.get(node)!);
      stack.push(node);
      onStack.add(node);
      work.push({ node, next: [...(edges.get(node) ?? [])].sort() });
    };
    enter(start);
    while (work.length > 0) {
      const top = work.at(-1)!;
      const next = top.next.shift();
      if (next !== undefined) {
        if (!index.has(next)) enter(next);
        else if (onStack.has(next)) {
          low.set(top.node, Math.min(low.get(top.node)!, index.get(next)!));
        }
        continue;
      }
      work.pop();
      const parent = work.at(-1);
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(top.node)!));
      if (low.get(top.node) !== index.get(top.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== top.node);
      if (component.length > 1 || edges.get(top.node)?.has(top.node)) found.push(component.sort());
    }
  }
  return found;
}

Deno.test("no import circle among the files of lib/, hack/ and bench/", async () => {
  // Type-only imports count: a type circle is two modules that cannot be read one without the
  // other, and it is where a value circle (with its evaluation-order hazards) starts.
  const edges = new Map<string, Set<string>>();
  for (const dir of ["main.ts", "lib", "hack", "bench"]) {
    for (const { file, target } of await imports(dir)) {
      if (!target.endsWith(".ts") || !await exists(join(ROOT, target))) continue;
      if (!edges.has(file)) edges.set(file, new Set());
      edges.get(file)!.add(target);
    }
  }
  assert.deepEqual(circles(edges), []);
});
Deno.test("the local control plane is reached through its face alone, and hack reaches no private file of lib", async () => {
  const home = "lib/testing/control_plane/";
  const isPrivate = (target: string) => /(^|\/)_[^/]*\.ts$/.test(target);
  const reaching = [
    ...await imports("lib"),
    ...await imports("hack"),
    ...await imports("bench"),
    // Unit tests exercise private modules on purpose.
    ...(await imports("tests")).filter(({ file }) => !file.startsWith("tests/unit/")),
  ].filter(({ file, target }) =>
    (target.startsWith(home) && !file.startsWith(home) && target !== `${home}mod.ts`) ||
    (file.startsWith("hack/") && target.startsWith("lib/") && isPrivate(target))
  );
  assert.deepEqual(reaching, []);
});

Deno.test("the pace's home sits below the controller and the manager", async () => {
  const upward = (await imports("lib/runtime/scheduling")).filter(({ target }) =>
    /^lib\/runtime\/(controller|manager|cache)\//.test(target)
  );
  assert.deepEqual(upward, []);
});
