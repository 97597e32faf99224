/**
 * `deno task start` resolves the user's relative paths against the folder
 * the task was started from, as npm scripts do, although `deno task` runs
 * the task itself in the repository root.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { KINGLET_ENV } from "../../hack/_permissions.ts";
import { envPlugin } from "../_support/exec_plugin.ts";

const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

/** Runs `deno task start install …` in `cwd` and returns its standard error. */
async function startInstall(
  cwd: string,
  args: string[],
  env: Record<string, string>,
): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "--config", CONFIG, "start", "install", ...args],
    cwd,
    clearEnv: true,
    env: {
      HOME: Deno.env.get("HOME") ?? "/",
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      ...env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.success, false, "the plugin refuses, so install fails");
  return new TextDecoder().decode(output.stderr);
}

Deno.test("relative --kubeconfig, KUBECONFIG and KINGLET_ALLOW_READ resolve where deno task start was typed", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "kinglet_start_" }));
  try {
    const kc = join(root, "kc");
    const work = join(root, "work");
    await Deno.mkdir(kc);
    await Deno.mkdir(work);
    const plugin = await envPlugin(kc, { fail: true });
    // The plugin runs only once the kubeconfig was found, allowed and read.
    const ran =
      /exec plugin "[^"]*\/kc\/plugin\.sh" .* failed with exit code 1: refused on purpose/;
    const grants = { KINGLET_ALLOW_READ: "../kc", KINGLET_ALLOW_RUN: plugin.command };
    assert.match(await startInstall(work, ["--kubeconfig", "../kc/config"], grants), ran);
    assert.match(await startInstall(work, [], { ...grants, KUBECONFIG: "../kc/config" }), ran);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("deno task start gives kinglet its environment (malloc settings, certificate stores)", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "kinglet_start_" }));
  try {
    const plugin = await envPlugin(dir, { fail: true });
    // Granted to kinglet, the settings reach its exec plugin, which shows they were set.
    await startInstall(dir, ["--kubeconfig", plugin.kubeconfig], {
      KINGLET_ALLOW_READ: dir,
      KINGLET_ALLOW_RUN: plugin.command,
      KINGLET_ALLOW_ENV: Object.keys(KINGLET_ENV).join(","),
    });
    const names = await plugin.names();
    for (const name of Object.keys(KINGLET_ENV)) assert.ok(names.includes(name), name);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
