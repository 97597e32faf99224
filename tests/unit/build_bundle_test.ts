/**
 * lib/build's bundle: a project's program bundled into a folder of its own
 * runs, is rebuilt when a file it imports changes and reused otherwise, and a
 * missing entry is refused with what to do.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { BuildError, bundle } from "../../lib/build/mod.ts";
import { runIn, tempProject } from "../_support/build_project.ts";

Deno.test("a project's program is bundled, runs, and is rebuilt only when an input changes", async () => {
  await using project = await tempProject();
  const outDir = "out/bundle";
  const first = await bundle({ root: project.dir, entry: "main.ts", outDir });
  assert.equal(first.entry, join(project.dir, "out", "bundle", "main.js"));
  assert.equal(first.built, true);
  const code = await Deno.readTextFile(first.entry);
  assert.match(code, /\/\/# sourceMappingURL=main\.js\.map/);
  assert.ok(!code.includes("export function greeting"), "the bundle is minified");

  const run = await runIn(project.dir, ["run", first.entry, "--help"]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, "usage: mirror (hello)\n");

  const again = await bundle({ root: project.dir, entry: "main.ts", outDir });
  assert.equal(again.built, false, "nothing changed");
  await Deno.writeTextFile(join(project.dir, "NOTES.md"), "Still not imported.\n");
  assert.equal((await bundle({ root: project.dir, outDir })).built, false, "not an input");

  await Deno.writeTextFile(
    join(project.dir, "src", "greet.ts"),
    'export function greeting(): string {\n  return "bonjour";\n}\n',
  );
  const changed = await bundle({ root: project.dir, entry: "main.ts", outDir });
  assert.equal(changed.built, true, "an imported file changed");
  const rerun = await runIn(project.dir, ["run", changed.entry, "--help"]);
  assert.equal(rerun.stdout, "usage: mirror (bonjour)\n");
  assert.equal((await bundle({ root: project.dir, outDir, force: true })).built, true, "forced");
});

Deno.test("a missing entry is refused with the path looked at and what to do", async () => {
  await using project = await tempProject();
  await assert.rejects(
    bundle({ root: project.dir, entry: "nope.ts" }),
    (error) =>
      error instanceof BuildError &&
      error.message.includes(
        `Cannot bundle nope.ts: there is no file ${join(project.dir, "nope.ts")}`,
      ) &&
      /Run the build from the project's root .* --entry <file>/.test(error.message),
  );
});

Deno.test("a program that does not parse is refused with deno bundle's output", async () => {
  await using project = await tempProject();
  await Deno.writeTextFile(join(project.dir, "src", "greet.ts"), "export function greeting( {\n");
  await assert.rejects(
    bundle({ root: project.dir, outDir: "out/bundle" }),
    (error) => error instanceof BuildError && /greet\.ts/.test(error.message),
  );
});
