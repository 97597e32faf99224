import assert from "node:assert/strict";
import { envName, formatHelp, parseDuration, parseFlags, UsageError } from "../../lib/cli/flags.ts";
import { RUN_FLAGS, runOptions } from "../../lib/cli/run_flags.ts";
import { runOperator } from "../../lib/cli/run.ts";
import { ConfigError } from "../../lib/kube/errors.ts";
import { resetLogging, setupLogging } from "../../lib/log.ts";

Deno.test("flags take --name=value, --name value and bare booleans", () => {
  const { values, positionals } = parseFlags(RUN_FLAGS, [
    "--kubeconfig=/a",
    "--namespace",
    "shop",
    "--leader-elect",
    "extra",
  ], {});
  assert.equal(values.kubeconfig, "/a");
  assert.equal(values.namespace, "shop");
  assert.equal(values["leader-elect"], "true");
  assert.deepEqual(positionals, ["extra"]);
});

Deno.test("a flag on the command line wins over its KINGLET_ variable, which wins over the default", () => {
  const env = { KINGLET_LEASE_NAME: "from-env", KINGLET_MAX_CONCURRENT_RECONCILES: "3" };
  const { values } = parseFlags(RUN_FLAGS, ["--lease-name=from-flag"], env);
  assert.equal(values["lease-name"], "from-flag");
  assert.equal(values["max-concurrent-reconciles"], "3");
  assert.equal(values["leader-election-namespace"], "kinglet-system");
  assert.equal(envName("health-probe-bind-address"), "KINGLET_HEALTH_PROBE_BIND_ADDRESS");
});

Deno.test("bad flags are usage errors that say what was expected", () => {
  const fails = (args: string[], env: Record<string, string> = {}, pattern: RegExp) =>
    assert.throws(() => runOptions(parseFlags(RUN_FLAGS, args, env).values), (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.equal(e.exitCode, 2);
      assert.match(e.message, pattern);
      return true;
    });
  fails(["--leader-elec"], {}, /unknown flag --leader-elec \(did you mean --leader-elect\?\)/);
  fails(["--kubeconfig"], {}, /--kubeconfig needs a value/);
  fails(["--log-format=xml"], {}, /--log-format="xml": expected one of json, text/);
  fails([], { KINGLET_MAX_CONCURRENT_RECONCILES: "many" }, /KINGLET_MAX_CONCURRENT_RECONCILES/);
  fails(["--max-concurrent-reconciles=0"], {}, /at least 1, got 0/);
  fails(["--controllers=webapp,cronjob"], {}, /unknown controller "cronjob"/);
  fails(["--shutdown-timeout=soon"], {}, /a duration such as 30s/);
  fails(["--watch-timeout=1500ms"], {}, /--watch-timeout: must be a whole number of seconds/);
  fails(
    ["--metrics-auth=basic"],
    {},
    /^--metrics-auth="basic": expected one of tokenreview, none$/,
  );
  fails(["--controller-concurrency=cronjob=2"], {}, /unknown controller "cronjob" in "cronjob=2"/);
  fails(["--controller-concurrency=webapp=0"], {}, /"webapp=0" needs a whole number of at least 1/);
});

Deno.test("controller concurrency takes name=N pairs and leaves the others to the global limit", () => {
  const options = runOptions(
    parseFlags(RUN_FLAGS, ["--controller-concurrency=webapp=4, databasecluster=1"], {}).values,
  );
  assert.deepEqual(options.controllerConcurrency, { webapp: 4, databasecluster: 1 });
  assert.deepEqual(runOptions(parseFlags(RUN_FLAGS, [], {}).values).controllerConcurrency, {});
});

Deno.test("watch timeouts are left to the watcher unless set, and converted when set", () => {
  const unset = runOptions(parseFlags(RUN_FLAGS, [], {}).values);
  assert.equal(unset.watchTimeoutSeconds, undefined);
  assert.equal(unset.watchStallTimeoutMs, undefined);
  const set = runOptions(
    parseFlags(RUN_FLAGS, ["--watch-timeout=2m", "--watch-stall-timeout=5s"], {}).values,
  );
  assert.equal(set.watchTimeoutSeconds, 120);
  assert.equal(set.watchStallTimeoutMs, 5_000);
});

Deno.test("run options convert types and leave caps unset at zero", () => {
  const options = runOptions(
    parseFlags(RUN_FLAGS, [
      "--controllers=webapp",
      "--cache-max-objects=1000",
      "--shutdown-timeout=2m",
    ], {})
      .values,
  );
  assert.deepEqual(options.controllers, ["webapp"]);
  assert.equal(options.cacheMaxObjects, 1000);
  assert.equal(options.cacheMaxBytes, undefined);
  assert.equal(options.shutdownTimeoutMs, 120_000);
  assert.equal(options.leaderElect, false);
});

Deno.test("durations parse in Go's units and help lists every flag with its variable", () => {
  assert.equal(parseDuration("500ms"), 500);
  assert.equal(parseDuration("1.5s"), 1500);
  assert.equal(parseDuration("1h"), 3_600_000);
  assert.equal(parseDuration("5 minutes"), undefined);
  const help = formatHelp("kinglet run [flags]", RUN_FLAGS);
  for (const spec of RUN_FLAGS) {
    assert.ok(help.includes(`--${spec.name}`), spec.name);
    assert.ok(help.includes(envName(spec.name)), envName(spec.name));
  }
});

Deno.test("an unknown short flag is reported as typed", () => {
  assert.throws(() => parseFlags(RUN_FLAGS, ["-v"], {}), (e: unknown) => {
    assert.ok(e instanceof UsageError);
    assert.equal(e.message, "unknown flag -v");
    return true;
  });
});

Deno.test("a mistyped flag gets the nearest known one as a suggestion, a far one none", () => {
  const message = (args: string[]) => {
    try {
      parseFlags(RUN_FLAGS, args, {});
    } catch (e) {
      return (e as Error).message;
    }
    return "";
  };
  assert.equal(message(["--kubconfig=x"]), "unknown flag --kubconfig (did you mean --kubeconfig?)");
  assert.equal(message(["--namspace", "x"]), "unknown flag --namspace (did you mean --namespace?)");
  assert.equal(message(["--frobnicate"]), "unknown flag --frobnicate");
});

Deno.test("help with a heading names the flags once", () => {
  const help = formatHelp("kinglet: usage", RUN_FLAGS, "Flags of kinglet run:");
  assert.equal(
    help.split("\n").filter((line) => /flags/i.test(line) && !line.startsWith(" ")).length,
    1,
  );
  assert.match(help, /^Flags of kinglet run:$/m);
});

Deno.test("client-side flow control comes from --kube-api-qps and --kube-api-burst or their KINGLET_ variables", () => {
  const run = (args: string[], env: Record<string, string>) =>
    runOptions(parseFlags(RUN_FLAGS, args, env).values);
  const defaults = run([], {});
  assert.deepEqual([defaults.kubeApiQps, defaults.kubeApiBurst], [500, 1_000]);
  const fromEnv = run([], { KINGLET_KUBE_API_QPS: "20", KINGLET_KUBE_API_BURST: "30" });
  assert.deepEqual([fromEnv.kubeApiQps, fromEnv.kubeApiBurst], [20, 30]);
  const fromFlags = run(["--kube-api-qps=2.5", "--kube-api-burst", "5"], {
    KINGLET_KUBE_API_QPS: "20",
  });
  assert.deepEqual([fromFlags.kubeApiQps, fromFlags.kubeApiBurst], [2.5, 5]);
  assert.equal(run(["--kube-api-qps=0", "--kube-api-burst=0"], {}).kubeApiQps, 0);
  assert.throws(() => run(["--kube-api-qps=fast"], {}), /--kube-api-qps: must be a number >= 0/);
  assert.throws(() => run(["--kube-api-qps=-1"], {}), /--kube-api-qps: .* got -1/);
  assert.throws(() => run(["--kube-api-burst=0"], {}), /--kube-api-burst: must be at least 1/);
});

Deno.test("--memory-limit takes Kubernetes quantities, 0 or none, and is left to the cgroup when unset", () => {
  const limit = (args: string[], env: Record<string, string> = {}) =>
    runOptions(parseFlags(RUN_FLAGS, args, env).values).memoryLimit;
  assert.equal(limit([]), undefined);
  assert.equal(limit(["--memory-limit", "64Mi"]), 64 * 2 ** 20);
  assert.equal(limit(["--memory-limit=1Gi"]), 2 ** 30);
  assert.equal(limit(["--memory-limit", "500M"]), 500e6);
  assert.equal(limit(["--memory-limit", "100000000"]), 100_000_000);
  assert.equal(limit([], { KINGLET_MEMORY_LIMIT: "72Mi" }), 72 * 2 ** 20);
  assert.equal(limit(["--memory-limit", "0"]), 0);
  assert.equal(limit(["--memory-limit", "none"]), 0);
});

Deno.test("a bad --memory-limit is a usage error that says what was wrong, where, and what to write", () => {
  const message = (args: string[], env: Record<string, string> = {}) => {
    try {
      runOptions(parseFlags(RUN_FLAGS, args, env).values);
    } catch (e) {
      assert.ok(e instanceof UsageError);
      return e.message;
    }
    assert.fail(`--memory-limit ${args.join(" ")} ${JSON.stringify(env)} was accepted`);
  };
  const flag = (value: string) => message(["--memory-limit", value]);
  assert.equal(
    flag("64MB"),
    '--memory-limit="64MB": "64MB" is not a memory limit: write 64Mi, 1Gi, 500M or bytes, or none for no limit',
  );
  assert.match(flag("-64Mi"), /"-64Mi" is not a memory limit/);
  assert.match(flag("67108864.5"), /"67108864.5" is not a whole number of bytes/);
  assert.match(flag("500m"), /"500m" is not a memory limit/);
  assert.equal(
    flag("16Mi"),
    '--memory-limit="16Mi": 16Mi is below 32Mi, less than an operator on Deno takes idle (40 to 50 MiB): give it at least 64Mi, or none to run without a limit',
  );
  // Set by the variable, the message names the variable and the node's file, not the flag.
  assert.equal(
    message([], { KINGLET_MEMORY_LIMIT: "" }),
    'KINGLET_MEMORY_LIMIT="" (from the environment; in node mode, /etc/kinglet/kinglet.env): ' +
      "an empty memory limit names no limit: write 64Mi, 1Gi, 500M or bytes, or none for no " +
      "limit, or remove the variable to keep the default",
  );
  assert.match(
    message([], { KINGLET_MEMORY_LIMIT: "1 GiB" }),
    /^KINGLET_MEMORY_LIMIT="1 GiB" \(from the environment; in node mode, \/etc\/kinglet\/kinglet\.env\): /,
  );
});

Deno.test("an address variable set but empty is refused with what to write instead, not read as off", () => {
  const message = (args: string[], env: Record<string, string>) => {
    try {
      parseFlags(RUN_FLAGS, args, env);
    } catch (e) {
      assert.ok(e instanceof UsageError);
      return e.message;
    }
    assert.fail(`${JSON.stringify(env)} ${args.join(" ")} was accepted`);
  };
  assert.equal(
    message([], { KINGLET_METRICS_BIND_ADDRESS: "" }),
    "KINGLET_METRICS_BIND_ADDRESS (from the environment; in node mode, " +
      "/etc/kinglet/kinglet.env) is set but empty, which names no address: set it to " +
      "host:port (such as 127.0.0.1:9090), to 0 to turn this listener off, or remove the " +
      "variable to keep the default (kinglet run --help shows it)",
  );
  assert.match(
    message([], { KINGLET_HEALTH_PROBE_BIND_ADDRESS: "" }),
    /^KINGLET_HEALTH_PROBE_BIND_ADDRESS \(.*kinglet\.env\) is set but empty/,
  );
  assert.match(
    message(["--metrics-bind-address="], {}),
    /^--metrics-bind-address is set but empty, .* or leave the flag out to keep the default/,
  );
  assert.match(
    message([], { KINGLET_METRICS_BIND_ADDRESS: "8080" }),
    /^KINGLET_METRICS_BIND_ADDRESS="8080" \(from the environment; in node mode, \/etc\/kinglet\/kinglet\.env\): expected host:port, :port or \[ipv6\]:port, .* or 0 to turn it off$/,
  );
});

Deno.test("an address flag takes host:port, :port, [ipv6]:port and 0, which turns its listener off", () => {
  const options = (env: Record<string, string>) =>
    runOptions(parseFlags(RUN_FLAGS, [], env).values);
  assert.equal(options({ KINGLET_METRICS_BIND_ADDRESS: "0" }).metricsAddress, "0");
  assert.equal(options({ KINGLET_METRICS_BIND_ADDRESS: ":9090" }).metricsAddress, ":9090");
  assert.equal(
    options({ KINGLET_HEALTH_PROBE_BIND_ADDRESS: "[::1]:8081" }).healthAddress,
    "[::1]:8081",
  );
  assert.equal(options({}).metricsAddress, undefined, "unset is left to where kinglet runs");
});

Deno.test("--pace-reconciles still parses, from the flag or its variable, and only warns", () => {
  const warnings = (args: string[], env: Record<string, string> = {}) =>
    runOptions(parseFlags(RUN_FLAGS, args, env).values).warnings;
  const warning = "--pace-reconciles has no effect any more and will be refused in a later " +
    "release: kinglet runs up to --max-concurrent-reconciles whenever there is work; " +
    "remove the flag";
  assert.deepEqual(warnings(["--pace-reconciles=false"]), [warning]);
  assert.deepEqual(warnings(["--pace-reconciles"]), [warning]);
  assert.deepEqual(warnings([], { KINGLET_PACE_RECONCILES: "false" }), [warning]);
  assert.deepEqual(warnings([]), []);
  assert.match(formatHelp("kinglet run", RUN_FLAGS), /--pace-reconciles\n +No effect any more/);
});

Deno.test("kinglet run says the --pace-reconciles warning once, before it connects", async () => {
  const lines: string[] = [];
  setupLogging({ format: "text", level: "info", write: (line) => lines.push(line) });
  try {
    const options = runOptions(
      parseFlags(RUN_FLAGS, ["--pace-reconciles=false", "--kubeconfig=/nonexistent/kubeconfig"], {})
        .values,
    );
    await assert.rejects(runOperator(options, new AbortController().signal), ConfigError);
  } finally {
    resetLogging();
  }
  const warned = lines.filter((line) => line.includes("--pace-reconciles has no effect"));
  assert.equal(warned.length, 1, lines.join(""));
});
