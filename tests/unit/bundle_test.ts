/**
 * hack/build.ts: the bundle every launcher runs still reports errors at
 * their TypeScript lines, and is rebuilt whenever a file it was built from
 * changes.
 */
import assert from "node:assert/strict";
import { join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { BUNDLE_DIR, BUNDLE_INPUTS } from "../../hack/build.ts";
import { denoFlags } from "../../hack/_permissions.ts";
import { kingletBundle } from "../_support/kinglet_bundle.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** Each module of the bundle with the files it was built from, from its linked source map. */
async function bundleSources(): Promise<Map<string, string[]>> {
  await kingletBundle();
  const sources = new Map<string, string[]>();
  for await (const entry of Deno.readDir(BUNDLE_DIR)) {
    if (!entry.name.endsWith(".js")) continue;
    const map = JSON.parse(
      await Deno.readTextFile(join(BUNDLE_DIR, `${entry.name}.map`)),
    ) as { sources: string[] };
    sources.set(entry.name, map.sources.map((source) => resolve(BUNDLE_DIR, source)));
  }
  return sources;
}

Deno.test("an error thrown inside the bundle reports its TypeScript file and line", async () => {
  const flags = join(REPO, "lib/cli/flags.ts");
  const chunk = [...(await bundleSources())].find(([, sources]) => sources.includes(flags))?.[0];
  assert.ok(chunk, "no module of the bundle holds lib/cli/flags.ts");
  const dir = await Deno.makeTempDir({ prefix: "kinglet_bundle_" });
  try {
    // A static import, which needs no read permission: what kinglet itself is granted suffices.
    const script = join(dir, "throw.js");
    await Deno.writeTextFile(
      script,
      `import * as flags from ${JSON.stringify(pathToFileURL(join(BUNDLE_DIR, chunk)).href)};
const parseFlags = Object.values(flags).find((value) => value.name === "parseFlags");
try {
  parseFlags([], ["--bogus"], {});
} catch (error) {
  console.log(error.stack);
}
`,
    );
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...denoFlags(), script],
    }).output();
    const stack = new TextDecoder().decode(output.stdout);
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    assert.match(stack, /^UsageError: unknown flag --bogus$/m);
    const at = /^\s+at parseFlags \((file:[^)]+\/lib\/cli\/flags\.ts):(\d+):\d+\)$/m.exec(stack);
    assert.ok(at, `no TypeScript location in:\n${stack}`);
    assert.equal(fileURLToPath(at[1]!), flags);
    const line = (await Deno.readTextFile(flags)).split("\n")[Number(at[2]) - 1];
    assert.match(line ?? "", /throw new UsageError\(/, `line ${at[2]} of lib/cli/flags.ts`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("every file the bundle is built from is an input its rebuild watches, or an npm package", async () => {
  const unwatched: string[] = [];
  for (const [chunk, sources] of await bundleSources()) {
    for (const source of sources) {
      const path = relative(REPO, source);
      if (path.startsWith("..") && /\/npm\//.test(source)) continue;
      const watched = BUNDLE_INPUTS.some((input) =>
        input.endsWith("/") ? path.startsWith(input) : path === input
      );
      if (!watched) unwatched.push(`${path} (in ${chunk})`);
    }
  }
  assert.deepEqual(unwatched, []);
});
