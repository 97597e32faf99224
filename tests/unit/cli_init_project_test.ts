/**
 * A project from `kinglet init` is green as generated: with `--kinglet`
 * pointing at this checkout, its `deno task check` (format, lint, types) and
 * its unit tests pass, and `deno task crds` writes its CRD.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Runs `deno <args>` in `cwd`; fails the test with its output when it fails. */
async function deno(args: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdin: "null",
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, `deno ${args.join(" ")} in ${cwd} failed:\n${text}`);
  return text;
}

Deno.test("a project from kinglet init checks, tests and writes its CRD as generated", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-init-" });
  const project = join(dir, "mirror-operator");
  try {
    await deno([
      "run",
      "--allow-all",
      join(ROOT, "main.ts"),
      "init",
      project,
      "--group=example.dev",
      "--kind=Mirror",
      `--kinglet=${ROOT}`,
    ], dir);
    await deno(["task", "check"], project);
    const tests = await deno(["task", "test"], project);
    assert.match(tests, /ok \| 3 passed \| 0 failed/);
    await deno(["task", "crds"], project);
    const crd = await Deno.readTextFile(join(project, "crds", "mirrors.example.dev.yaml"));
    assert.match(crd, /^ {4}kind: Mirror$/m);
    const build = await new Deno.Command(Deno.execPath(), {
      args: ["task", "build"],
      cwd: project,
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.notEqual(build.code, 0);
    assert.match(new TextDecoder().decode(build.stderr), /not yet available: /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
