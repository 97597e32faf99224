import assert from "node:assert/strict";
import { ConfigError } from "../../lib/kube/errors.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { FakeClock } from "../../lib/async/clock.ts";

Deno.test.sanitizer({ ops: true, resources: true });

const V1 = "client.authentication.k8s.io/v1";
const CA = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";

interface Plugin {
  dir: string;
  kubeconfig: string;
  /** How many times the plugin ran. */
  runs(): Promise<number>;
  /** KUBERNETES_EXEC_INFO as the last run saw it. */
  execInfo(): Promise<Record<string, unknown>>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A kubeconfig whose user runs `./plugin.sh` (relative to the kubeconfig)
 * with the given shell body. The script logs each run and the
 * KUBERNETES_EXEC_INFO it received into the temp dir.
 */
async function plugin(body: string, exec: Record<string, unknown> = {}): Promise<Plugin> {
  const dir = await Deno.makeTempDir({ prefix: "kinglet_exec_" });
  await Deno.writeTextFile(
    `${dir}/plugin.sh`,
    `#!/bin/sh\necho run >> "${dir}/runs"\nprintf '%s' "$KUBERNETES_EXEC_INFO" > "${dir}/exec_info"\n${body}\n`,
  );
  await Deno.chmod(`${dir}/plugin.sh`, 0o755);
  const user = {
    exec: { apiVersion: V1, command: "./plugin.sh", interactiveMode: "Never", ...exec },
  };
  await Deno.writeTextFile(
    `${dir}/config`,
    JSON.stringify({
      "current-context": "c",
      clusters: [{
        name: "k",
        cluster: {
          server: "https://k.example",
          "certificate-authority-data": btoa(CA),
          extensions: [{
            name: "client.authentication.k8s.io/exec",
            extension: { audience: "kinglet" },
          }],
        },
      }],
      users: [{ name: "u", user }],
      contexts: [{ name: "c", context: { cluster: "k", user: "u" } }],
    }),
  );
  return {
    dir,
    kubeconfig: `${dir}/config`,
    runs: async () =>
      (await Deno.readTextFile(`${dir}/runs`).catch(() => "")).split("\n").filter(Boolean).length,
    execInfo: async () => JSON.parse(await Deno.readTextFile(`${dir}/exec_info`)),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

function credential(token: string, expirationTimestamp?: string, apiVersion = V1): string {
  const status = { token, ...(expirationTimestamp ? { expirationTimestamp } : {}) };
  // An unquoted here-document, so that the shell expands $1, $VAR and $(...) in the token.
  return `cat <<JSON\n${JSON.stringify({ apiVersion, kind: "ExecCredential", status })}\nJSON`;
}

const env = { PATH: Deno.env.get("PATH") };

Deno.test("exec plugin token is cached until expirationTimestamp, then the plugin runs again", async () => {
  // The token carries the run count, so a re-run shows in its value.
  await using p = await plugin(
    credential("tok-$(grep -c run $(dirname $0)/runs)", "2030-01-01T00:10:00Z"),
  );
  const clock = new FakeClock(Date.parse("2030-01-01T00:00:00Z"));
  const config = await loadConfig({ kubeconfig: p.kubeconfig, env, clock });
  assert.equal(await p.runs(), 0, "the plugin runs on first use, not at load");
  const [a, b] = await Promise.all([config.auth.token(), config.auth.token()]);
  assert.equal(a, "tok-1");
  assert.equal(b, "tok-1", "concurrent callers share one run");
  await clock.advance(9 * 60_000);
  assert.equal(await config.auth.token(), "tok-1");
  assert.equal(await p.runs(), 1);
  await clock.advance(60_000);
  assert.equal(await config.auth.token(), "tok-2");
  assert.equal(await p.runs(), 2);
});

Deno.test("exec plugin runs again after invalidate, as after a 401", async () => {
  await using p = await plugin(credential("static-token"));
  const config = await loadConfig({ kubeconfig: p.kubeconfig, env });
  assert.equal(await config.auth.token(), "static-token");
  assert.equal(await config.auth.token(), "static-token");
  assert.equal(await p.runs(), 1, "no expiry: cached until invalidated");
  config.auth.invalidate();
  assert.equal(await config.auth.token(), "static-token");
  assert.equal(await p.runs(), 2);
});

Deno.test("exec plugin gets args, env and a non-interactive KUBERNETES_EXEC_INFO", async () => {
  await using p = await plugin(credential("$1-$2-$PLUGIN_MODE"), {
    args: ["alpha", "beta"],
    env: [{ name: "PLUGIN_MODE", value: "edge" }],
    provideClusterInfo: true,
  });
  const config = await loadConfig({ kubeconfig: p.kubeconfig, env });
  assert.equal(await config.auth.token(), "alpha-beta-edge");
  assert.deepEqual(await p.execInfo(), {
    apiVersion: V1,
    kind: "ExecCredential",
    spec: {
      interactive: false,
      cluster: {
        server: "https://k.example",
        "certificate-authority-data": btoa(CA),
        config: { audience: "kinglet" },
      },
    },
  });
});

Deno.test("exec plugin speaking v1beta1 works and leaves out cluster info unless asked", async () => {
  const beta = "client.authentication.k8s.io/v1beta1";
  await using p = await plugin(credential("beta-token", undefined, beta), { apiVersion: beta });
  const config = await loadConfig({ kubeconfig: p.kubeconfig, env });
  assert.equal(await config.auth.token(), "beta-token");
  assert.deepEqual(await p.execInfo(), {
    apiVersion: beta,
    kind: "ExecCredential",
    spec: { interactive: false },
  });
});

async function execError(body: string, exec: Record<string, unknown> = {}): Promise<string> {
  await using p = await plugin(body, exec);
  const config = await loadConfig({ kubeconfig: p.kubeconfig, env });
  const err = await config.auth.token().catch((e) => e);
  assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err}`);
  return err.message;
}

Deno.test("exec plugin that is not installed is a clear error with the install hint", async () => {
  const message = await execError("", {
    command: "kinglet-no-such-plugin",
    installHint: "Install it with: brew install kinglet-auth",
  });
  assert.match(
    message,
    /^Cannot run exec plugin "kinglet-no-such-plugin" \(user "u" in .*config\): command not found; Install it with: brew install kinglet-auth$/,
  );
});

Deno.test("exec plugin printing something other than an ExecCredential is a clear error", async () => {
  assert.match(
    await execError("echo 'Please log in first'"),
    /printed output that is not JSON; it must print an ExecCredential .* got: Please log in first/,
  );
  assert.match(await execError("echo '[1]'"), /printed JSON that is not an object/);
  assert.match(
    await execError(credential("t", undefined, "client.authentication.k8s.io/v1beta1")),
    /printed apiVersion "client.authentication.k8s.io\/v1beta1", not the configured one/,
  );
  assert.match(
    await execError(`echo '{"apiVersion":"${V1}","kind":"ExecCredential","status":{}}'`),
    /printed no status.token/,
  );
  assert.match(
    await execError(credential("t", "next tuesday")),
    /invalid status.expirationTimestamp "next tuesday"/,
  );
  assert.match(
    await execError(
      `echo '{"apiVersion":"${V1}","kind":"ExecCredential","status":{"clientCertificateData":"x"}}'`,
    ),
    /a client certificate instead of a token/,
  );
});

Deno.test("exec plugin that fails reports its exit code and standard error", async () => {
  assert.match(
    await execError("echo 'token expired, run login' >&2; exit 3"),
    /exec plugin ".*plugin.sh" \(user "u" in .*\) failed with exit code 3: token expired, run login/,
  );
});

Deno.test("exec plugin that insists on a terminal is refused at load", async () => {
  await using p = await plugin(credential("t"), { interactiveMode: "Always" });
  const err = await loadConfig({ kubeconfig: p.kubeconfig, env }).catch((e) => e);
  assert.ok(err instanceof ConfigError);
  assert.match(
    err.message,
    /interactiveMode is "Always", but kinglet runs exec plugins without a terminal/,
  );
});

Deno.test("exec token wait can be aborted without killing the shared run", async () => {
  await using p = await plugin(`sleep 0.3\n${credential("slow")}`);
  const config = await loadConfig({ kubeconfig: p.kubeconfig, env });
  const controller = new AbortController();
  const aborted = config.auth.token(controller.signal);
  const patient = config.auth.token();
  controller.abort(new Error("gave up"));
  await assert.rejects(aborted, /gave up/);
  assert.equal(await patient, "slow");
  assert.equal(await p.runs(), 1);
});

Deno.test("exec plugin sees the variables the process may read, or exactly an injected environment", async () => {
  await using p = await plugin(credential("home=$HOME,path=$PATH"));
  const inherited = await loadConfig({ kubeconfig: p.kubeconfig });
  assert.equal(
    await inherited.auth.token(),
    `home=${Deno.env.get("HOME")},path=${Deno.env.get("PATH")}`,
  );
  const injected = await loadConfig({ kubeconfig: p.kubeconfig, env: { HOME: "/nowhere" } });
  const token = await injected.auth.token();
  assert.match(token ?? "", /^home=\/nowhere,/);
  assert.notEqual(token, `home=/nowhere,path=${Deno.env.get("PATH")}`, "PATH is not inherited");
});
