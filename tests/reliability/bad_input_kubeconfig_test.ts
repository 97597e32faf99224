/**
 * Bad kubeconfigs given to the real CLI (`kinglet run --kubeconfig <file>`, the
 * bundle under the start task's permissions). Two behaviours, chosen per case:
 *
 * - What no retry can fix ends the process at start with exit code 1 (2 for
 *   bad flags) and one line on standard error saying what is wrong, where
 *   (file, context, cluster or user) and what to do: a file that is not a
 *   kubeconfig, names that do not resolve, unreadable or garbled TLS
 *   material, an exec credential plugin that is missing, prints garbage or
 *   hands out a credential that has already expired.
 * - What may heal on its own keeps the process up: an unreachable server or a
 *   server certificate the CA does not verify (a server being replaced, a
 *   load balancer in front of it) is a network error the watchers retry with
 *   backoff. The process logs the server and the cause, `/healthz` stays 200
 *   so a supervisor does not restart it in a loop, and `/readyz` answers 503
 *   with the cause, so nothing routes to it and an operator sees why.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/reliability/bad_input_kubeconfig_test.ts
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { generatePki } from "../../lib/testing/control_plane/mod.ts";
import { testKubeconfig } from "../_support/cluster.ts";
import { freePort, probe, runToExit, stackFrames, startRun } from "./_kinglet_cli.ts";
import { figure, fixed1 } from "./_measure.ts";

const PEM =
  "-----BEGIN CERTIFICATE-----\nMIIBkTCB+wIJAKHBfpegPjMCMA0GCSqGSIb3DQEBCwUAMBExDzANBgNVBAMMBnVu\n" +
  "-----END CERTIFICATE-----\n";

/** A kubeconfig with one context `ctx` → cluster `k`, user `u`, overridable piece by piece. */
function kubeconfig(parts: {
  cluster?: Record<string, unknown>;
  user?: Record<string, unknown>;
  clusters?: unknown;
  currentContext?: string;
} = {}): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    "current-context": parts.currentContext ?? "ctx",
    clusters: parts.clusters ?? [{
      name: "k",
      cluster: parts.cluster ?? { server: "https://127.0.0.1:6443" },
    }],
    users: [{ name: "u", user: parts.user ?? { token: "t" } }],
    contexts: [{ name: "ctx", context: { cluster: "k", user: "u" } }],
  });
}

/** An exec plugin: a shell script printing `stdout`. */
async function plugin(dir: string, name: string, stdout: string): Promise<string> {
  const path = join(dir, name);
  await Deno.writeTextFile(path, `#!/bin/sh\ncat <<'JSON'\n${stdout}\nJSON\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

function execUser(command: string): Record<string, unknown> {
  return {
    exec: {
      apiVersion: "client.authentication.k8s.io/v1",
      command,
      interactiveMode: "Never",
    },
  };
}

interface ExitCase {
  name: string;
  /** Writes the case's files into `dir`; returns the kubeconfig path and extra CLI args. */
  setUp(
    dir: string,
    outside: string,
  ): Promise<{ path: string; args?: string[]; env?: Record<string, string> }>;
  code: number;
  message: RegExp;
}

const write = async (dir: string, text: string, name = "config") => {
  const path = join(dir, name);
  await Deno.writeTextFile(path, text);
  return { path };
};

const EXIT_CASES: ExitCase[] = [
  {
    name: "not YAML",
    setUp: (dir) => write(dir, "clusters: [unclosed\n  - {"),
    code: 1,
    message: /^kinglet: Invalid kubeconfig \/.*\/config: not valid YAML: /,
  },
  {
    name: "YAML but not a mapping",
    setUp: (dir) => write(dir, "- clusters\n- users\n"),
    code: 1,
    message: /^kinglet: Invalid kubeconfig \/.*\/config: expected a mapping, got a list$/,
  },
  {
    name: "no clusters",
    setUp: (dir) => write(dir, kubeconfig({ clusters: [] })),
    code: 1,
    message:
      /^kinglet: Cluster "k" \(used by context "ctx" in \/.*\/config\) not found in \/.*\/config; available clusters: none are defined$/,
  },
  {
    name: "unknown current-context",
    setUp: (dir) => write(dir, kubeconfig({ currentContext: "prod" })),
    code: 1,
    message: /^kinglet: Context "prod" not found in \/.*\/config; available contexts: ctx$/,
  },
  {
    name: "--context not found",
    setUp: async (dir) => ({ ...await write(dir, kubeconfig()), args: ["--context", "edge-9"] }),
    code: 1,
    message: /^kinglet: Context "edge-9" not found in \/.*\/config; available contexts: ctx$/,
  },
  {
    name: "client certificate file missing",
    setUp: (dir) =>
      write(dir, kubeconfig({ user: { "client-certificate": "nope.crt", "client-key": "k.key" } })),
    code: 1,
    message:
      /^kinglet: Cannot read client-certificate \/.*\/nope\.crt of user "u" in \/.*\/config: .*No such file or directory/,
  },
  {
    name: "CA file unreadable (a folder)",
    setUp: async (dir) => {
      await Deno.mkdir(join(dir, "ca.d"));
      return write(
        dir,
        kubeconfig({
          cluster: { server: "https://127.0.0.1:6443", "certificate-authority": "ca.d" },
        }),
      );
    },
    code: 1,
    message:
      /^kinglet: Cannot read certificate-authority \/.*\/ca\.d of cluster "k" in \/.*\/config: .*Is a directory/,
  },
  {
    name: "CA file outside what kinglet may read",
    setUp: async (dir, outside) => {
      await Deno.writeTextFile(join(outside, "ca.crt"), PEM);
      return write(
        dir,
        kubeconfig({
          cluster: {
            server: "https://127.0.0.1:6443",
            "certificate-authority": join(outside, "ca.crt"),
          },
        }),
      );
    },
    code: 1,
    message:
      /^kinglet may not read "\/.*\/ca\.crt": start it with KINGLET_ALLOW_READ=\/.*\/ca\.crt deno task start, or pass --allow-read=\/.*\/ca\.crt to deno run$/,
  },
  {
    name: "CA data not base64",
    setUp: (dir) =>
      write(
        dir,
        kubeconfig({
          cluster: {
            server: "https://127.0.0.1:6443",
            "certificate-authority-data": "%%not base64%%",
          },
        }),
      ),
    code: 1,
    message:
      /^kinglet: Invalid cluster "k" in \/.*\/config: certificate-authority-data is not valid base64$/,
  },
  {
    name: "CA data that is not PEM",
    setUp: (dir) =>
      write(
        dir,
        kubeconfig({
          cluster: {
            server: "https://127.0.0.1:6443",
            "certificate-authority-data": btoa("hello"),
          },
        }),
      ),
    code: 1,
    message:
      /^kinglet: Invalid cluster "k" in \/.*\/config: certificate-authority-data does not decode to PEM; it must be the base64 of a PEM file/,
  },
  {
    name: "CA data that is PEM around garbage",
    setUp: (dir) =>
      write(
        dir,
        kubeconfig({
          cluster: {
            server: "https://127.0.0.1:6443",
            "certificate-authority-data": btoa(
              "-----BEGIN CERTIFICATE-----\nZ2FyYmFnZQ==\n-----END CERTIFICATE-----\n",
            ),
          },
        }),
      ),
    code: 1,
    message:
      /^kinglet: Cannot set up TLS for https:\/\/127\.0\.0\.1:6443 from \/.*\/config: .*; check the certificate authority and the client certificate and key$/,
  },
  {
    name: "exec plugin missing",
    setUp: async (dir) => {
      const command = join(dir, "kinglet-no-such-plugin");
      return {
        ...await write(dir, kubeconfig({ user: execUser(command) })),
        env: { KINGLET_ALLOW_RUN: command },
      };
    },
    code: 1,
    message:
      /^kinglet: Cannot run exec plugin "\/.*\/kinglet-no-such-plugin" \(user "u" in \/.*\/config\): command not found; install it or fix users\[\]\.user\.exec\.command$/,
  },
  {
    name: "exec plugin not granted",
    setUp: async (dir) => {
      const command = await plugin(dir, "auth-plugin", "{}");
      return write(dir, kubeconfig({ user: execUser(command) }));
    },
    code: 1,
    message:
      /^kinglet may not run "\/.*\/auth-plugin": start it with KINGLET_ALLOW_RUN=\/.*\/auth-plugin deno task start/,
  },
  {
    name: "exec plugin printing bad JSON",
    setUp: async (dir) => {
      const command = await plugin(dir, "auth-plugin", "Please run `acme login` first");
      return {
        ...await write(dir, kubeconfig({ user: execUser(command) })),
        env: { KINGLET_ALLOW_RUN: command },
      };
    },
    code: 1,
    message:
      /^kinglet: exec plugin "\/.*\/auth-plugin" \(user "u" in \/.*\/config\) printed output that is not JSON; it must print an ExecCredential \(apiVersion client\.authentication\.k8s\.io\/v1\) with status\.token, got: Please run `acme login` first$/,
  },
  {
    name: "exec credential already expired",
    setUp: async (dir) => {
      const command = await plugin(
        dir,
        "auth-plugin",
        JSON.stringify({
          apiVersion: "client.authentication.k8s.io/v1",
          kind: "ExecCredential",
          status: { token: "expired-secret-token", expirationTimestamp: "2020-01-01T00:00:00Z" },
        }),
      );
      return {
        ...await write(dir, kubeconfig({ user: execUser(command) })),
        env: { KINGLET_ALLOW_RUN: command },
      };
    },
    code: 1,
    message:
      /^kinglet: exec plugin "\/.*\/auth-plugin" \(user "u" in \/.*\/config\) printed a credential that had already expired \(status\.expirationTimestamp 2020-01-01T00:00:00Z, now .*\); check the plugin's credential cache and this machine's clock$/,
  },
  {
    name: "--kubeconfig without a value",
    setUp: async (dir) => ({ ...await write(dir, kubeconfig()), args: ["--kubeconfig"] }),
    code: 2,
    message: /^kinglet: flag --kubeconfig needs a value$/,
  },
  {
    name: "--log-level not a level",
    setUp: async (dir) => ({ ...await write(dir, kubeconfig()), args: ["--log-level=loud"] }),
    code: 2,
    message:
      /^kinglet: --log-level="loud": expected one of trace, debug, info, warning, error, fatal$/,
  },
];

Deno.test("each broken kubeconfig ends the CLI with one precise line and exit 1 (2 for bad flags)", async (t) => {
  const durations: number[] = [];
  for (const c of EXIT_CASES) {
    await t.step(c.name, async () => {
      const dir = await Deno.makeTempDir({ prefix: "kinglet_badcfg_" });
      const outside = await Deno.makeTempDir({ prefix: "kinglet_outside_" });
      try {
        const { path, args = [], env = {} } = await c.setUp(dir, outside);
        const options = { env: { KINGLET_ALLOW_READ: dir, ...env } };
        const result = await runToExit(["run", "--kubeconfig", path, ...args], options);
        durations.push(result.ms);
        const answer = result.stderr.split("\n").findLast((l) => l.startsWith("kinglet"));
        assert.equal(result.code, c.code, `exit code of "${c.name}"; stderr:\n${result.stderr}`);
        assert.match(answer ?? "", c.message, `stderr:\n${result.stderr}`);
        assert.deepEqual(stackFrames(result.stderr + result.stdout), [], "no stack trace");
        if (c.code === 2) assert.match(result.stderr, /Run 'kinglet --help' for usage\./);
      } finally {
        await Deno.remove(dir, { recursive: true });
        await Deno.remove(outside, { recursive: true });
      }
    });
  }
  durations.sort((a, b) => a - b);
  figure(
    `bad kubeconfig: ${durations.length} cases each exit with one line; median ` +
      `${fixed1(durations[durations.length >> 1]! / 1000)} s, slowest ` +
      `${fixed1(durations.at(-1)! / 1000)} s from spawn to exit (deno start-up included)`,
  );
});

/** The admin kubeconfig with `cluster` fields replaced. */
async function adminWith(dir: string, cluster: Record<string, unknown>): Promise<string> {
  const doc = parse(await Deno.readTextFile(testKubeconfig())) as {
    clusters: { cluster: Record<string, unknown> }[];
  };
  doc.clusters[0]!.cluster = { ...doc.clusters[0]!.cluster, ...cluster };
  const path = join(dir, "config");
  await Deno.writeTextFile(path, stringify(doc));
  return path;
}

/**
 * Starts kinglet on `kubeconfig` and checks the retrying behaviour: alive,
 * one clear log line per retry round (not per watcher) naming the server and
 * `cause`, `/healthz` 200 and `/readyz` 503 with the cause, then a clean SIGTERM.
 */
async function staysUpAndSaysWhy(
  kubeconfig: string,
  dir: string,
  server: string,
  cause: RegExp,
): Promise<{ logMs: number; restarts: number; upMs: number }> {
  const started = performance.now();
  await using cli = await startRun(["--kubeconfig", kubeconfig, "--controllers=webapp"], {
    env: { KINGLET_ALLOW_READ: dir },
  });
  const line = await cli.waitForLine(/Cannot reach the API server/);
  const logMs = performance.now() - started;
  const record = JSON.parse(line) as { level: string; message: string };
  assert.equal(record.level, "WARN", line);
  assert.ok(record.message.includes(server), `the log names ${server}: ${line}`);
  assert.match(record.message, cause);
  // Long enough for several retries: the process must still be there.
  await new Promise((r) => setTimeout(r, 3_000));
  assert.equal(cli.exited(), false, `kinglet exited:\n${cli.output()}`);
  assert.equal((await probe(`${cli.healthUrl}/healthz`)).status, 200);
  const ready = await probe(`${cli.healthUrl}/readyz`);
  assert.equal(ready.status, 503);
  assert.match(ready.body, /^not ready:\nwebapps: not synced: /);
  assert.match(ready.body, cause);
  assert.ok(ready.body.includes(server), ready.body);
  const rounds = cli.output().split("\n").filter((l) => l.includes("Cannot reach the API server"))
    .map((l) => (JSON.parse(l) as { properties: { attempt: number } }).properties.attempt);
  assert.deepEqual(rounds, rounds.map((_, i) => i + 1), "one line per retry round, in order");
  assert.doesNotMatch(cli.output(), /Watcher of .* failed/, "each watch's retry is at debug");
  const restarts = rounds.length;
  const upMs = performance.now() - started;
  assert.equal(await cli.stop(), 0, "SIGTERM still exits 0");
  assert.deepEqual(stackFrames(cli.output()), []);
  return { logMs, restarts, upMs };
}

Deno.test("an unreachable API server keeps kinglet up, not ready, saying which server and why", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet_unreachable_" });
  try {
    const server = `https://127.0.0.1:${freePort()}`;
    const kubeconfig = await adminWith(dir, { server });
    const { logMs, restarts, upMs } = await staysUpAndSaysWhy(
      kubeconfig,
      dir,
      server,
      /Connection refused/,
    );
    figure(
      `unreachable server: first error logged ${fixed1(logMs / 1000)} s after spawn; ` +
        `${restarts} retry rounds of 3 watchers logged in ${fixed1(upMs / 1000)} s up ` +
        "(backoff with jitter), /healthz 200, /readyz 503 with the cause",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a kubeconfig without a CA under kinglet's empty certificate store names both fixes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet_noca_" });
  try {
    const kubeconfig = await adminWith(dir, { "certificate-authority-data": undefined });
    const server = (parse(await Deno.readTextFile(kubeconfig)) as {
      clusters: { cluster: { server: string; "certificate-authority-data"?: string } }[];
    }).clusters[0]!.cluster;
    assert.equal(server["certificate-authority-data"], undefined);
    const { logMs } = await staysUpAndSaysWhy(
      kubeconfig,
      dir,
      server.server,
      /names no certificate-authority .*add the cluster's certificate-authority-data, or set DENO_TLS_CA_STORE=system/,
    );
    figure(`no CA, empty certificate store: the fix logged ${fixed1(logMs / 1000)} s after spawn`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a CA that did not sign the server keeps kinglet up, not ready, naming the TLS failure", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet_wrongca_" });
  try {
    const pki = await generatePki(dir, {});
    const kubeconfig = await adminWith(dir, {
      "certificate-authority-data": btoa(await Deno.readTextFile(pki.ca.cert)),
    });
    const server = (parse(await Deno.readTextFile(kubeconfig)) as {
      clusters: { cluster: { server: string } }[];
    }).clusters[0]!.cluster.server;
    const { logMs, restarts, upMs } = await staysUpAndSaysWhy(
      kubeconfig,
      dir,
      server,
      /TLS failed: .*invalid peer certificate/,
    );
    figure(
      `wrong CA: TLS error logged ${fixed1(logMs / 1000)} s after spawn; ${restarts} retry ` +
        `rounds of 3 watchers logged in ${fixed1(upMs / 1000)} s up (backoff with jitter), ` +
        "/healthz 200, /readyz 503 with the cause",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
