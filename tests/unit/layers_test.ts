import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { importMap, VENDORED } from "../../lib/cli/init/dependency.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^"';]*?from\s*["'](\.{1,2}\/[^"']+)["']/g;

/** Every relative import of every .ts file under `dir`, as repository paths. */
async function imports(dir: string): Promise<{ file: string; target: string }[]> {
  const found: { file: string; target: string }[] = [];
  const walk = async (at: string) => {
    for await (const entry of Deno.readDir(at)) {
      const path = join(at, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (entry.name.endsWith(".ts")) {
        const text = await Deno.readTextFile(path);
        // Documentation examples are code too, but they are not part of the module graph.
        const code = text.replace(/\/\*\*[\s\S]*?\*\//g, "");
        for (const match of code.matchAll(IMPORT)) {
          found.push({
            file: relative(ROOT, path),
            target: relative(ROOT, resolve(dirname(path), match[1]!)),
          });
        }
      }
    }
  };
  await walk(join(ROOT, dir));
  return found;
}

const PUBLIC = ["lib/kube/mod.ts", "lib/runtime/mod.ts", "lib/async/mod.ts", "lib/crd/mod.ts"];

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

Deno.test("the CRD module builds on the client alone, and the runtime never loads it", async () => {
  const upward = (await imports("lib/crd")).filter(({ target }) =>
    !/^lib\/(crd|kube)\//.test(target)
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

Deno.test("the pace's home sits below the controller and the manager", async () => {
  const upward = (await imports("lib/runtime/scheduling")).filter(({ target }) =>
    /^lib\/runtime\/(controller|manager|cache)\//.test(target)
  );
  assert.deepEqual(upward, []);
});
