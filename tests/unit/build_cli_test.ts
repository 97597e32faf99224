/**
 * lib/build/cli.ts, the command an operator project's `deno task build`
 * runs: without denort it keeps the bundle, says what it could not build and
 * how to get denort, and fails; `--bundle-only` succeeds after the bundle;
 * bad input is refused before anything is built. With `DENORT_BIN` set, it
 * also builds and runs a binary.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { elfTarget, findDenort } from "../../lib/build/mod.ts";
import { runIn, tempProject } from "../_support/build_project.ts";

const CLI = fileURLToPath(new URL("../../lib/build/cli.ts", import.meta.url));
const HOST = await elfTarget(Deno.execPath());
const DENORT_BIN = Deno.env.get("DENORT_BIN");

// On a machine with denort cached, the cli would build the binary instead of failing.
const denortCached = HOST !== undefined &&
  (await findDenort(HOST, { download: false })).kind === "cached";
if (denortCached) {
  // deno-lint-ignore no-console -- why a test is skipped
  console.log(
    `build_cli_test: denort for ${HOST} is cached, so the no-denort case cannot be shown`,
  );
}
if (!DENORT_BIN) {
  // deno-lint-ignore no-console -- why a test is skipped
  console.log(
    "build_cli_test: DENORT_BIN is unset, so no binary is compiled (set it to run that test)",
  );
}

function cli(dir: string, args: string[], env: Record<string, string> = {}) {
  return runIn(dir, ["run", "--allow-all", CLI, ...args], env);
}

Deno.test({
  name: "without denort the cli keeps the bundle, names DENORT_BIN and fails",
  ignore: denortCached || HOST === undefined,
  async fn() {
    await using project = await tempProject();
    const run = await cli(project.dir, ["--name", "mirror", "--target", HOST!, "--offline"]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /build: built dist\/bundle\/main\.js\n/);
    assert.match(run.stderr, new RegExp(`could not build dist/mirror-${HOST}`));
    assert.match(run.stderr, /set DENORT_BIN to the denort inside/);
    assert.match(
      run.stderr,
      new RegExp(`exactly Deno ${Deno.version.deno.replaceAll(".", "\\.")}`),
    );
    await Deno.stat(join(project.dir, "dist", "bundle", "main.js"));
    await assert.rejects(Deno.stat(join(project.dir, "dist", `mirror-${HOST}`)));
  },
});

Deno.test("--bundle-only writes the bundle and succeeds", async () => {
  await using project = await tempProject();
  const run = await cli(project.dir, ["--name", "mirror", "--bundle-only"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /build: built dist\/bundle\/main\.js\n/);
  const bundled = await runIn(project.dir, ["run", "dist/bundle/main.js", "--help"]);
  assert.equal(bundled.stdout, "usage: mirror (hello)\n");
});

Deno.test("bad input is refused with what, where and what to do", async () => {
  await using project = await tempProject();
  const cases: [string[], Record<string, string>, number, RegExp][] = [
    [["--bundle-only"], {}, 2, /--name is required: the operator's name, e.g\. --name mirror/],
    [["--name", "Mirror_Op"], {}, 2, /operator name "Mirror_Op": expected a DNS label/],
    [["--name", "mirror", "--target", "riscv64"], {}, 2, /unknown target riscv64: expected x86_64/],
    [["--name", "mirror", "--colour"], {}, 2, /Unknown option '--colour'/],
    [["--name", "mirror", "--allow-run", "aws,,kubectl"], {}, 2, /Cannot read --allow-run/],
    [
      ["--name", "mirror", "--bundle-only"],
      { MIRROR_ALLOW_RUN: "aws,,kubectl" },
      2,
      /Cannot read MIRROR_ALLOW_RUN: expected a comma-separated list or "all"/,
    ],
    [
      ["--name", "mirror", "--entry", "nope.ts", "--bundle-only"],
      {},
      1,
      /Cannot bundle nope\.ts: there is no file .*nope\.ts\. Run the build from the project's root/,
    ],
  ];
  for (const [args, env, code, message] of cases) {
    const run = await cli(project.dir, args, env);
    assert.equal(run.code, code, `${args.join(" ")}: ${run.stderr}`);
    assert.match(run.stderr, message, args.join(" "));
  }
  await assert.rejects(Deno.stat(join(project.dir, "dist")), "nothing was built");
});

Deno.test({
  name: "with DENORT_BIN the cli builds a binary for its target that runs",
  ignore: !DENORT_BIN,
  async fn() {
    await using project = await tempProject();
    const target = await elfTarget(DENORT_BIN!);
    const run = await cli(project.dir, ["--name", "mirror"], { DENORT_BIN: DENORT_BIN! });
    assert.equal(run.code, 0, run.stderr);
    const binary = join(project.dir, "dist", `mirror-${target}`);
    assert.match(run.stderr, new RegExp(`built dist/mirror-${target}`));
    if (target === HOST) {
      const out = await new Deno.Command(binary, { args: ["--help"] }).output();
      assert.equal(new TextDecoder().decode(out.stdout), "usage: mirror (hello)\n");
    }
  },
});
