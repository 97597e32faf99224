/**
 * Node mode's environment files, line by line: each commented line,
 * uncommented as shown, does what its comment says, in both units that read
 * the file (kinglet.service and kinglet-credentials.service, started as
 * systemd would by tests/_support/node_units.ts); an empty or wrong
 * variable is named with its file, and a setting meant for the operator
 * never stops the credentials unit.
 */
import assert from "node:assert/strict";
import { endpointPlan } from "../../lib/cli/endpoints.ts";
import { parseFlags } from "../../lib/cli/flags.ts";
import { RUN_FLAGS, type RunOptions, runOptions } from "../../lib/cli/run_flags.ts";
import { envFile, unitFile } from "../../lib/deploy/node_files.ts";
import { describeOperator } from "../../lib/deploy/operator.ts";
import { CONFIG_MAPS } from "../../lib/kube/mod.ts";
import { runUnit, SYSTEMD, unitEnvironment } from "../_support/node_units.ts";

const ENV_FILE = await Deno.readTextFile(new URL("kinglet.env", SYSTEMD));
const SERVICE = await Deno.readTextFile(new URL("kinglet.service", SYSTEMD));

/** The commented lines `#NAME=value` of an environment file, as [name, value]. */
function shown(text: string): [string, string][] {
  return [...text.matchAll(/^#([A-Z][A-Z0-9_]*)=(.*)$/gm)].map(([, name, value]) => [
    name!,
    value!,
  ]);
}

/** kinglet.service's flags (after `run`) and what systemd gives it, with `envFile` over the unit's. */
function serviceOptions(envFile: Record<string, string>): RunOptions {
  const exec = /^ExecStart=\/usr\/local\/bin\/kinglet run (.*)$/m.exec(SERVICE)?.[1];
  assert.ok(exec, "kinglet.service runs no kinglet run");
  const flags = parseFlags(RUN_FLAGS, exec.split(" "), {
    ...unitEnvironment(SERVICE),
    ...envFile,
  });
  return runOptions(flags.values, flags);
}

const NODE = { inCluster: false };
const MiB = 2 ** 20;

/** What each line of kinglet.env says it does, checked on the options kinglet.service runs with. */
const SAYS: Record<string, (options: RunOptions) => void> = {
  KINGLET_LOG_FORMAT: (o) => assert.equal(o.logFormat, "json"),
  KINGLET_LOG_LEVEL: (o) => assert.equal(o.logLevel, "info"),
  KINGLET_METRICS_BIND_ADDRESS: (o) =>
    assert.equal(endpointPlan(o, NODE).metricsAddress, "127.0.0.1:8080"),
  // "tokenreview asks for that token on loopback too"
  KINGLET_METRICS_AUTH: (o) => assert.equal(endpointPlan(o, NODE).metricsAuth, "tokenreview"),
  KINGLET_HEALTH_PROBE_BIND_ADDRESS: (o) =>
    assert.equal(endpointPlan(o, NODE).healthAddress, "127.0.0.1:8081"),
  KINGLET_WEBHOOKS: (o) => assert.equal(o.webhooks, true),
  KINGLET_WEBHOOK_BIND_ADDRESS: (o) =>
    assert.equal(endpointPlan(o, NODE).webhookAddress, "127.0.0.1:9443"),
  // "in the Secret kinglet-webhook-tls of the Lease's namespace"
  KINGLET_WEBHOOK_CERT_NAMESPACE: (o) => assert.equal(o.webhookCertNamespace, "kinglet-system"),
  KINGLET_LEADER_ELECTION_NAMESPACE: (o) =>
    assert.equal(o.leaderElectionNamespace, "kinglet-system"),
  KINGLET_LEASE_NAME: (o) => assert.equal(o.leaseName, "kinglet-leader"),
  KINGLET_CONTROLLERS: (o) =>
    assert.deepEqual(o.controllers, ["webapp", "databasecluster", "inferenceservice"]),
  // "empty, every namespace"
  KINGLET_NAMESPACE: (o) => assert.equal(o.namespace, undefined),
  KINGLET_MAX_CONCURRENT_RECONCILES: (o) => assert.equal(o.maxConcurrentReconciles, 8),
  // "(0: no cap)"
  KINGLET_CACHE_MAX_OBJECTS: (o) => assert.equal(o.cacheMaxObjects, undefined),
  KINGLET_CACHE_MAX_BYTES: (o) => assert.equal(o.cacheMaxBytes, undefined),
  // "kinglet.service sets 256Mi, beside its MemoryMax=256M"
  KINGLET_MEMORY_LIMIT: (o) => assert.equal(o.memoryLimit, 256 * MiB),
  KINGLET_SHUTDOWN_TIMEOUT: (o) => assert.equal(o.shutdownTimeoutMs, 10_000),
};

Deno.test("every line of kinglet.env, uncommented as shown, does what its comment says in kinglet.service", () => {
  const lines = shown(ENV_FILE);
  assert.deepEqual(lines.map(([name]) => name).sort(), Object.keys(SAYS).sort());
  for (const [name, value] of lines) {
    assert.ok(value !== "" || name === "KINGLET_NAMESPACE", `${name} is shown empty`);
    const options = serviceOptions({ [name]: value });
    assert.deepEqual(options.warnings, [], `${name}=${value}`);
    SAYS[name]!(options);
  }
});

Deno.test("every line of kinglet.env, uncommented as shown, leaves both units running: the service past its configuration, the credentials unit to its token", async () => {
  for (const [name, value] of shown(ENV_FILE)) {
    const service = await runUnit("kinglet.service", { [name]: value });
    // Exit 1 for the kubeconfig the empty state directory lacks, read after every setting.
    assert.equal(service.code, 1, `${name}=${value}: ${service.stderr}`);
    assert.match(service.stderr, /kubeconfig/, `${name}=${value}`);
    const credentials = await runUnit("kinglet-credentials.service", { [name]: value });
    assert.equal(credentials.code, 0, `${name}=${value}: ${credentials.stderr}`);
    assert.match(credentials.stdout, /^wrote .*kubeconfig\.token/m, `${name}=${value}`);
  }
});

Deno.test("a variable left empty reads as unset with a warning naming it and its file, but an empty memory limit is refused", () => {
  const options = serviceOptions({ KINGLET_LOG_FORMAT: "", KINGLET_METRICS_AUTH: "" });
  assert.equal(options.logFormat, undefined);
  assert.equal(options.metricsAuth, undefined);
  assert.deepEqual(options.warnings, [
    "KINGLET_LOG_FORMAT (from the environment; in node mode, /etc/kinglet/kinglet.env) is " +
    "set but empty, read as unset: give it a value, or remove the variable",
    "KINGLET_METRICS_AUTH (from the environment; in node mode, /etc/kinglet/kinglet.env) is " +
    "set but empty, read as unset: give it a value, or remove the variable",
  ]);
  // The line would override the unit's own 256Mi: read as unset, no limit would be kept.
  assert.throws(() => serviceOptions({ KINGLET_MEMORY_LIMIT: "" }), {
    name: "UsageError",
    message: 'KINGLET_MEMORY_LIMIT="" (from the environment; in node mode, ' +
      "/etc/kinglet/kinglet.env): an empty memory limit names no limit: write 64Mi, 1Gi, 500M " +
      "or bytes, or none for no limit, or remove the variable to keep the default",
  });
});

Deno.test("a wrong value from the environment file is named by its variable and file, not by the flag", () => {
  const refused = (env: Record<string, string>) => {
    try {
      serviceOptions(env);
    } catch (error) {
      assert.ok(error instanceof Error && error.name === "UsageError", String(error));
      return error.message;
    }
    assert.fail(`${JSON.stringify(env)} was accepted`);
  };
  const file = "\\(from the environment; in node mode, /etc/kinglet/kinglet\\.env\\)";
  assert.match(
    refused({ KINGLET_METRICS_AUTH: "basic" }),
    new RegExp(`^KINGLET_METRICS_AUTH="basic" ${file}: expected one of tokenreview, none$`),
  );
  assert.match(
    refused({ KINGLET_MEMORY_LIMIT: "256MB" }),
    new RegExp(`^KINGLET_MEMORY_LIMIT="256MB" ${file}: "256MB" is not a memory limit`),
  );
  assert.match(
    refused({ KINGLET_CONTROLLERS: "webapp,cronjob" }),
    new RegExp(`^KINGLET_CONTROLLERS ${file}: unknown controller "cronjob"`),
  );
  assert.match(
    refused({ KINGLET_WATCH_TIMEOUT: "1500ms" }),
    new RegExp(`^KINGLET_WATCH_TIMEOUT ${file}: must be a whole number of seconds`),
  );
});

Deno.test("a configuration error stops kinglet.service with exit 2, which the unit does not restart on; the credentials unit renews the token all the same", async () => {
  assert.match(SERVICE, /^Restart=on-failure$/m);
  assert.match(SERVICE, /^RestartPreventExitStatus=2$/m);
  const wrong: Record<string, string>[] = [
    { KINGLET_MEMORY_LIMIT: "" },
    { KINGLET_LOG_FORMAT: "xml" },
  ];
  for (const env of wrong) {
    const service = await runUnit("kinglet.service", env);
    assert.equal(service.code, 2, `${JSON.stringify(env)}: ${service.stderr}`);
    assert.match(service.stderr, /^kinglet: KINGLET_\w+="(xml)?" \(from .*kinglet\.env\)/m);
    const credentials = await runUnit("kinglet-credentials.service", env);
    assert.equal(credentials.code, 0, `${JSON.stringify(env)}: ${credentials.stderr}`);
    assert.match(credentials.stdout, /^wrote .*kubeconfig\.token/m);
  }
  const credentials = await runUnit("kinglet-credentials.service", { KINGLET_LOG_FORMAT: "xml" });
  const said = credentials.stderr.split("\n").filter(Boolean).map((line) => JSON.parse(line));
  assert.deepEqual(said.map(({ level, message }) => ({ level, message })), [{
    level: "WARN",
    message: 'KINGLET_LOG_FORMAT="xml" (from the environment; in node mode, ' +
      "/etc/kinglet/kinglet.env): expected one of json, text; ignored here, so its default applies",
  }]);
});

Deno.test("an operator's environment file shows its memory limit as its unit sets it, so the line uncommented keeps the limit", () => {
  const operator = describeOperator({
    name: "mirror-operator",
    envPrefix: "MIRROR_",
    image: "ghcr.io/example/mirror-operator:0.1.0",
    controllers: [{ name: "mirror", resource: CONFIG_MAPS }],
    memoryLimit: "192Mi",
  });
  assert.deepEqual(shown(envFile(operator)), [["MIRROR_MEMORY_LIMIT", "192Mi"]]);
  assert.equal(unitEnvironment(unitFile(operator)).MIRROR_MEMORY_LIMIT, "192Mi");
  assert.match(unitFile(operator), /^RestartPreventExitStatus=2$/m);
});
