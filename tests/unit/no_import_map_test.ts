import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = new URL("../../", import.meta.url);
/** The modules an author imports, by URL or from a copy, without kinglet's deno.json. */
const PUBLIC = ["lib/kube/mod.ts", "lib/runtime/mod.ts", "lib/async/mod.ts", "lib/crd/mod.ts"];
if (await exists(new URL("lib/testing/mod.ts", REPO))) PUBLIC.push("lib/testing/mod.ts");

async function exists(url: URL): Promise<boolean> {
  try {
    await Deno.stat(url);
    return true;
  } catch {
    return false;
  }
}

const JSON_KUBECONFIG = JSON.stringify({
  apiVersion: "v1",
  kind: "Config",
  clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:6443" } }],
  users: [{ name: "u", user: { token: "json-token" } }],
  contexts: [{ name: "x", context: { cluster: "c", user: "u", namespace: "from-json" } }],
  "current-context": "x",
});

const FLOW_KUBECONFIG = "{apiVersion: v1, kind: Config, " +
  'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6444"}}], ' +
  "users: [{name: u, user: {token: flow-token}}], " +
  "contexts: [{name: x, context: {cluster: c, user: u, namespace: from-flow}}], " +
  "current-context: x}\n";

Deno.test("the public modules load and read JSON and flow-style kubeconfigs without kinglet's import map", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-no-import-map-" });
  try {
    await Deno.writeTextFile(join(dir, "json.kubeconfig"), JSON_KUBECONFIG);
    await Deno.writeTextFile(join(dir, "flow.kubeconfig"), FLOW_KUBECONFIG);
    const imports = PUBLIC.map((path, i) => `import * as m${i} from "${new URL(path, REPO)}";`);
    await Deno.writeTextFile(
      join(dir, "author.ts"),
      [
        ...imports,
        `const { loadConfig } = m0;`,
        `const { defineKind } = m3;`,
        `const namespaces = [];`,
        `for (const file of ["json.kubeconfig", "flow.kubeconfig"]) {`,
        `  const config = await loadConfig({ kubeconfig: ${
          JSON.stringify(dir)
        } + "/" + file, env: {} });`,
        `  namespaces.push(config.namespace);`,
        `}`,
        `const { z } = await import("npm:zod@4.6.7");`,
        `const kind = defineKind({ group: "example.com", version: "v1", kind: "Note", spec: z.object({}) });`,
        `console.log(JSON.stringify({ namespaces, crd: kind.crd().metadata.name, modules: ${PUBLIC.length} }));`,
      ].join("\n"),
    );
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-config", "--allow-read", "--allow-env", "author.ts"],
      cwd: dir,
    }).output();
    const decoder = new TextDecoder();
    assert.equal(code, 0, decoder.decode(stderr));
    assert.deepEqual(JSON.parse(decoder.decode(stdout)), {
      namespaces: ["from-json", "from-flow"],
      crd: "notes.example.com",
      modules: PUBLIC.length,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const STATIC = /(?:^|\n)\s*(?:import|export)\b[^"';]*?from\s*["']([^"']+)["']/g;
const DYNAMIC = /\bimport\(\s*["']([^"']+)["']\s*\)/g;

Deno.test("the public modules import no bare specifier, and each npm package at deno.json's version", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", REPO))) as {
    imports: Record<string, string>;
  };
  const pinned = new Set(Object.values(config.imports));
  const npm: string[] = [];
  const bare: string[] = [];
  for (const folder of ["lib/kube", "lib/runtime", "lib/async", "lib/crd"]) {
    for await (const path of files(fileURLToPath(new URL(folder, REPO)))) {
      // Documentation examples run with kinglet's import map; they are not part of the module.
      const code = (await Deno.readTextFile(path)).replace(/\/\*\*[\s\S]*?\*\//g, "");
      for (const [, specifier] of [...code.matchAll(STATIC), ...code.matchAll(DYNAMIC)]) {
        if (specifier!.startsWith("npm:")) npm.push(specifier!);
        else if (!/^(\.{1,2}\/|node:)/.test(specifier!)) bare.push(`${path}: ${specifier}`);
      }
    }
  }
  assert.deepEqual(bare, []);
  assert.ok(npm.length > 0, "the public modules name their npm dependencies");
  assert.deepEqual(npm.filter((specifier) => !pinned.has(specifier)), []);
});

async function* files(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* files(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}
