/**
 * A project from `kinglet init` is green as generated: with `--kinglet`
 * pointing at this checkout, its `deno task check` (format, lint, types) and
 * its unit tests pass, `deno task crds` writes its CRD, `deno task build
 * --bundle-only` writes the bundle, and `deno task bench` measures that
 * bundle as the binary runs it. A cluster-scoped one with the webhook of
 * `--webhook`, whose files differ from the scaffold's by the edits of
 * hack/gen_scaffold.ts, checks and passes its unit tests too.
 * (tests/e2e/init_project_test.ts runs a long named, cluster-scoped,
 * vendored one with a webhook too, and both e2e tests.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expandCommand, loadTarget } from "../../bench/harness/target.ts";
import { RUNTIME_ENV, V8_FLAGS } from "../../lib/build/tuning.ts";

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

/** Runs this checkout's `kinglet init` for `project` (group example.dev) with `flags`, in `dir`. */
async function init(project: string, flags: string[], dir: string): Promise<void> {
  await deno(
    [
      "run",
      "--allow-all",
      join(ROOT, "main.ts"),
      "init",
      project,
      "--group=example.dev",
      ...flags,
      `--kinglet=${ROOT}`,
    ],
    dir,
  );
}

Deno.test("a project from kinglet init checks, tests, writes its CRD and bundles as generated", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-init-" });
  const project = join(dir, "mirror-operator");
  try {
    await init(project, ["--kind=Mirror"], dir);
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

    // The bench runs that bundle as the binary runs it: the build's grants, flags and environment.
    assert.match(await deno(["task", "bench", "--help"], project), /--target/);
    const target = await loadTarget(join(project, "bench", "results", "target.json"));
    assert.deepEqual(target.env, RUNTIME_ENV);
    assert.deepEqual(target.defaultV8Flags, V8_FLAGS);
    const values = { kubeconfig: "/k", metricsPort: 1, probePort: 2, namespace: "n" };
    const command = expandCommand(target, { ...values, v8Flags: target.defaultV8Flags! });
    assert.ok(command.includes("--no-code-cache"), command.join(" "));
    assert.ok(command.includes(`--v8-flags=${V8_FLAGS.join(",")}`), command.join(" "));
    assert.equal(command.at(-1), "dist/bundle/main.js");
    assert.ok(command.some((arg) => /^--allow-read=.*,\/k$/.test(arg)), command.join(" "));
    // Under those grants the bundle starts: its flags are read, and --help answers.
    const [env, ...argv] = command;
    assert.equal(env, "env");
    const help = await new Deno.Command(env!, {
      args: [...argv, "--help"],
      cwd: project,
      env: { ...target.env, NO_COLOR: "1" },
      stdin: "null",
    }).output();
    const text = new TextDecoder().decode(help.stdout) + new TextDecoder().decode(help.stderr);
    assert.equal(help.code, 0, text);
    assert.match(text, /--kubeconfig string\n.*env MIRROR_OPERATOR_KUBECONFIG/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a cluster-scoped project with a webhook from kinglet init checks and passes its unit tests", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-init-" });
  const project = join(dir, "gauge-operator");
  try {
    await init(project, ["--kind=Gauge", "--scope=Cluster", "--webhook"], dir);
    await deno(["task", "check"], project);
    // The controller's 3, the deploy files' 2 (with the webhook's), the webhook's 2.
    assert.match(await deno(["task", "test"], project), /ok \| 7 passed \| 0 failed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
