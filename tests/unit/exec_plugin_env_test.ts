/**
 * What an exec credential plugin sees of kinglet's environment: the
 * variables kinglet's grants let it read, the exec section's `env` and
 * `KUBERNETES_EXEC_INFO`, never a variable that is set but not granted;
 * under the flags the binary bakes in and under `deno task start`.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { denoFlags, grantsFromEnv } from "../../hack/_permissions.ts";
import { envPlugin } from "../_support/exec_plugin.ts";
import { probe } from "../_support/permission_probe.ts";

const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

/** What the plugin may see when PATH and AWS_PROFILE are granted, besides HOME and KINGLET_*. */
const EXPECTED = [
  "AWS_PROFILE",
  "HOME",
  "KINGLET_ALLOW_ENV",
  "KINGLET_ALLOW_READ",
  "KINGLET_ALLOW_RUN",
  "KUBERNETES_EXEC_INFO",
  "PATH",
  "PLUGIN_MODE",
];

async function withTempDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "kinglet_exec_env_" }));
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("an exec plugin under kinglet's flags sees only granted variables and its own", async () => {
  await withTempDir(async (dir) => {
    const plugin = await envPlugin(dir);
    const allow = {
      KINGLET_ALLOW_ENV: "PATH,AWS_PROFILE",
      KINGLET_ALLOW_READ: dir,
      KINGLET_ALLOW_RUN: plugin.command,
    };
    const result = await probe(denoFlags(grantsFromEnv(allow)), [
      "exec-token",
      plugin.kubeconfig,
    ], { ...allow, AWS_PROFILE: "edge", MY_SECRET_VAR: "hidden" });
    assert.deepEqual(result, { ok: true, value: "tok" });
    assert.deepEqual(await plugin.names(), EXPECTED);
  });
});

Deno.test("an exec plugin started by deno task start sees only granted variables and its own", async () => {
  await withTempDir(async (dir) => {
    const plugin = await envPlugin(dir, { fail: true });
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "task",
        "--quiet",
        "--config",
        CONFIG,
        "start",
        "install",
        "--kubeconfig",
        plugin.kubeconfig,
      ],
      clearEnv: true,
      env: {
        HOME: Deno.env.get("HOME") ?? "/",
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        KINGLET_ALLOW_ENV: "PATH,AWS_PROFILE",
        KINGLET_ALLOW_READ: dir,
        KINGLET_ALLOW_RUN: plugin.command,
        AWS_PROFILE: "edge",
        MY_SECRET_VAR: "hidden",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.success, false);
    assert.match(
      stderr,
      /exec plugin "[^"]*plugin\.sh" .* failed with exit code 1: refused on purpose/,
    );
    // deno task adds INIT_CWD, which is not granted, nor is MY_SECRET_VAR.
    // The start task sets DENO_TLS_CA_STORE, a granted variable, so the plugin gets it too.
    assert.deepEqual(await plugin.names(), [...EXPECTED, "DENO_TLS_CA_STORE"].sort());
  });
});
