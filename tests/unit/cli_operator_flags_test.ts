/**
 * An author's operator reads its command line as `kinglet run` reads its
 * own (`@kinglet/kinglet/cli`): the same connection flags, its own
 * variables, one memory limit parser, exit 2 for a bad flag or variable, and
 * a missing permission explained with its own `<PREFIX>_ALLOW_<KIND>`.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { UsageError } from "../../lib/cli/flags.ts";
import { deployFiles } from "../../lib/deploy/mod.ts";
import { CONFIG_MAPS } from "../../lib/kube/mod.ts";
import { failure, OPERATOR_FLAGS, parseOperatorFlags } from "../../lib/cli/operator_flags.ts";
import { CONNECTION_FLAGS, RUN_FLAGS } from "../../lib/cli/run_flags.ts";
import { MEMORY_LIMIT_FORMS, parseMemoryLimit } from "../../lib/runtime/memory/limit.ts";
import { usageError } from "../_support/usage_error.ts";

const MIRROR = { name: "mirror-operator", envPrefix: "MIRROR_OPERATOR_" };
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

Deno.test("an operator takes kinglet run's connection flags, from the same declarations", () => {
  for (const spec of CONNECTION_FLAGS) assert.ok(OPERATOR_FLAGS.includes(spec), spec.name);
  for (const spec of OPERATOR_FLAGS) {
    assert.ok(RUN_FLAGS.includes(spec), `${spec.name} is not a flag of kinglet run`);
  }
  const flags = parseOperatorFlags(MIRROR, [
    "--kubeconfig",
    "/var/lib/mirror-operator/kubeconfig",
    "--context=edge",
    "--log-level=debug",
    "--leader-elect",
  ], {});
  assert.deepEqual(flags.connection, {
    kubeconfig: "/var/lib/mirror-operator/kubeconfig",
    context: "edge",
  });
  assert.deepEqual(flags.logging, { level: "debug" });
  assert.equal(flags.leaderElect, true);
  assert.equal(parseOperatorFlags(MIRROR, [], {}).leaderElect, false);
});

Deno.test("an operator's flags are set by its own variables too, a flag winning", () => {
  const env = {
    MIRROR_OPERATOR_KUBECONFIG: "/from/env",
    MIRROR_OPERATOR_LOG_FORMAT: "json",
    KINGLET_CONTEXT: "not-its-variable",
  };
  const flags = parseOperatorFlags(MIRROR, [], env);
  assert.deepEqual(flags.connection, { kubeconfig: "/from/env" });
  assert.equal(flags.logging.format, "json");
  const flagWins = parseOperatorFlags(MIRROR, ["--kubeconfig=/from/flag"], env);
  assert.equal(flagWins.connection.kubeconfig, "/from/flag");
});

Deno.test("an operator's variable set but empty reads as unset with a warning naming it and its own file", () => {
  const flags = parseOperatorFlags(MIRROR, [], { MIRROR_OPERATOR_LOG_FORMAT: "" });
  assert.equal(flags.logging.format, undefined);
  assert.deepEqual(flags.warnings, [
    "MIRROR_OPERATOR_LOG_FORMAT (from the environment; in node mode, " +
    "/etc/mirror-operator/mirror-operator.env) is set but empty, read as unset: give it a " +
    "value, or remove the variable",
  ]);
  assert.deepEqual(parseOperatorFlags(MIRROR, [], {}).warnings, []);
});

Deno.test("the memory limit takes what every generated comment says it takes", () => {
  assert.equal(MEMORY_LIMIT_FORMS, "64Mi, 1Gi, 500M or bytes; none: no limit");
  const limit = (value: string) =>
    parseOperatorFlags(MIRROR, [], { MIRROR_OPERATOR_MEMORY_LIMIT: value }).memoryLimit;
  assert.equal(limit("64Mi"), 64 * 2 ** 20);
  assert.equal(limit("1Gi"), 2 ** 30);
  assert.equal(limit("500M"), 500e6);
  assert.equal(limit("134217728"), 134217728);
  assert.equal(limit(" 128Mi "), 128 * 2 ** 20);
  // none and 0: no limit, which the Manager takes as an absent memoryLimit.
  assert.equal(limit("none"), undefined);
  assert.equal(limit("0"), undefined);
  assert.equal(parseMemoryLimit("none"), 0);
  assert.equal(parseMemoryLimit("1.5Gi"), 1.5 * 2 ** 30);
  assert.equal(
    parseOperatorFlags(MIRROR, ["--memory-limit", "96Mi"], {}).memoryLimit,
    96 * 2 ** 20,
  );
});

Deno.test("a bad memory limit names the variable and the node's file, and what to write", () => {
  const message = (value: string) =>
    usageError(() => parseOperatorFlags(MIRROR, [], { MIRROR_OPERATOR_MEMORY_LIMIT: value }))
      .message;
  const file = "(from the environment; in node mode, /etc/mirror-operator/mirror-operator.env)";
  assert.equal(
    message("128MB"),
    `MIRROR_OPERATOR_MEMORY_LIMIT="128MB" ${file}: "128MB" is not a memory limit: write 64Mi, ` +
      "1Gi, 500M or bytes, or none for no limit",
  );
  assert.equal(
    message(""),
    `MIRROR_OPERATOR_MEMORY_LIMIT="" ${file}: an empty memory limit names no limit: write ` +
      "64Mi, 1Gi, 500M or bytes, or none for no limit, or remove the variable to keep the default",
  );
  assert.match(message("16Mi"), /below 32Mi/);
  assert.throws(() => parseMemoryLimit("500m"), RangeError);
});

Deno.test("an operator refuses a flag it does not know, rather than ignoring it", () => {
  assert.match(
    usageError(() => parseOperatorFlags(MIRROR, ["--kubconfig", "/x"], {})).message,
    /unknown flag --kubconfig \(did you mean --kubeconfig\?\)/,
  );
  assert.match(
    usageError(() => parseOperatorFlags(MIRROR, ["serve"], {})).message,
    /unexpected argument serve/,
  );
});

Deno.test("a bad flag exits 2; a binary without a read grant names the operator's own variable", () => {
  const usage = failure(
    { name: "mirror-operator", buildTask: "deno task build" },
    new UsageError("unknown flag --kubconfig"),
  );
  assert.deepEqual(usage, {
    code: 2,
    message: "mirror-operator: unknown flag --kubconfig\nRun 'mirror-operator --help' for usage.",
  });
  const denied = new Error("Cannot load the kubeconfig", {
    cause: new Deno.errors.NotCapable(
      'Requires read access to "/home/me/edge.yaml", specify the required permissions during ' +
        "compilation using `deno compile --allow-read`",
    ),
  });
  const binary = failure({ name: "edgesite-operator", buildTask: "deno task build" }, denied);
  assert.equal(binary.code, 1);
  assert.equal(
    binary.message,
    'edgesite-operator may not read "/home/me/edge.yaml": this binary was built without that ' +
      "permission; rebuild it with EDGESITE_OPERATOR_ALLOW_READ=/home/me/edge.yaml deno task build",
  );
  const run = failure(
    { name: "edgesite-operator", buildTask: "deno task build" },
    new Deno.errors.NotCapable(
      'Requires read access to "/home/me/edge.yaml", run again with the --allow-read flag',
    ),
  );
  assert.equal(
    run.message,
    'edgesite-operator may not read "/home/me/edge.yaml": pass --allow-read=/home/me/edge.yaml ' +
      "to deno run; its binary takes it at build time: " +
      "EDGESITE_OPERATOR_ALLOW_READ=/home/me/edge.yaml deno task build",
  );
});

Deno.test("operatorFlags exits 2 on a bad variable, saying which, and prints its flags on --help", async () => {
  const run = async (args: string[], env: Record<string, string>) => {
    const code = 'import { operatorFlags } from "./lib/cli/mod.ts";\n' +
      'operatorFlags({ name: "mirror-operator", envPrefix: "MIRROR_OPERATOR_" }, Deno.args);';
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--ext=ts", code, ...args],
      cwd: ROOT,
      env: { NO_COLOR: "1", ...env },
      stdin: "null",
    }).output();
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
  };
  const bad = await run([], { MIRROR_OPERATOR_MEMORY_LIMIT: "500MB" });
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(
    bad.stderr,
    /^mirror-operator: MIRROR_OPERATOR_MEMORY_LIMIT="500MB" \(from the environment; in node mode, \/etc\/mirror-operator\/mirror-operator\.env\): /,
  );
  const help = await run(["--help"], {});
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /--kubeconfig string\n.*env MIRROR_OPERATOR_KUBECONFIG/);
  assert.match(help.stdout, /--memory-limit memory\n.*64Mi, 1Gi, 500M or bytes; none: no limit/);
});

Deno.test("the memory limit every generated file sets or shows is one the operator's parser takes", () => {
  const operator = {
    ...MIRROR,
    image: "registry.example.com/mirror-operator:0.1.0",
    memoryLimit: "192Mi",
    controllers: [{ name: "mirror", resource: CONFIG_MAPS }],
  };
  const files = deployFiles(operator);
  const variable = `${MIRROR.envPrefix}MEMORY_LIMIT`;
  const unit = files.get("deploy/systemd/mirror-operator.service")!;
  const set = new RegExp(`^Environment=${variable}=(.*)$`, "m").exec(unit)?.[1];
  assert.equal(set, "192Mi");
  assert.equal(parseOperatorFlags(MIRROR, [], { [variable]: set }).memoryLimit, 192 * 2 ** 20);
  // The Deployment hands it over from the Downward API, in bytes.
  assert.match(files.get("deploy/deployment.yaml")!, new RegExp(`name: ${variable}\\n`));
  assert.equal(parseOperatorFlags(MIRROR, [], { [variable]: "201326592" }).memoryLimit, 201326592);
  // Each form the environment file's comment names.
  const env = files.get("deploy/systemd/mirror-operator.env")!;
  const forms = /\(([^)]*); none: no limit\)/.exec(env)?.[1];
  assert.equal(`${forms}; none: no limit`, MEMORY_LIMIT_FORMS);
  // The line it shows, uncommented, keeps the unit's limit.
  const shown = new RegExp(`^#${variable}=(.*)$`, "m").exec(env)?.[1];
  assert.equal(shown, set);
  for (const value of ["64Mi", "1Gi", "500M", "134217728", "none"]) {
    assert.doesNotThrow(() => parseOperatorFlags(MIRROR, [], { [variable]: value }), value);
  }
});
