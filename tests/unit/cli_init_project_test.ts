/**
 * A project from `kinglet init` is green as generated: with `--kinglet`
 * pointing at this checkout, its `deno task check` (format, lint, types) and
 * its unit tests pass, `deno task crds` writes its CRD, and `deno task build
 * --bundle-only` writes the bundle.
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

Deno.test("a project from kinglet init checks, tests, writes its CRD and bundles as generated", async () => {
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
    assert.match(tests, /ok \| 5 passed \| 0 failed/);
    // The deploy files init wrote are what the project's own deno task deploy writes.
    assert.match(await deno(["task", "deploy", "--check"], project), /are up to date/);
    await Deno.remove(join(project, "deploy"), { recursive: true });
    await deno(["task", "deploy"], project);
    const unit = await Deno.readTextFile(
      join(project, "deploy", "systemd", "mirror-operator.service"),
    );
    assert.match(unit, /^ExecStart=\/usr\/local\/bin\/mirror-operator --leader-elect$/m);
    await deno(["task", "crds"], project);
    const crd = await Deno.readTextFile(join(project, "crds", "mirrors.example.dev.yaml"));
    assert.match(crd, /^ {4}kind: Mirror$/m);
    const build = await deno(["task", "build", "--bundle-only"], project);
    assert.match(build, /build: built dist\/bundle\/main\.js/);
    // Running it would connect to a cluster: resolving every import it loads shows it whole.
    await deno(["info", "dist/bundle/main.js"], project);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
