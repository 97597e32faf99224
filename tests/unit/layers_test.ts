import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

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
