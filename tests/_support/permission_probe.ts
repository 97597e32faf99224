/**
 * Runs tests/fixtures/permission_probe.ts, a program that tries one thing
 * (read a file, listen, connect, …) and prints what happened as JSON, under
 * given `deno run` flags: how the tests show what kinglet's grants allow.
 *
 * @module
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const PROBE = fileURLToPath(new URL("../fixtures/permission_probe.ts", import.meta.url));

/** What the probe printed: success (with a value), or the error and what kinglet explains of it. */
export interface ProbeResult {
  ok?: true;
  value?: unknown;
  explanation?: string | null;
  /** `<name>: <message>` of the error. */
  error?: string;
}

/**
 * Runs the probe under `flags` with `args`, and with only HOME, PATH and
 * `env` as its environment.
 *
 * @throws {AssertionError} when the probe itself failed or printed nothing.
 */
export async function probe(
  flags: readonly string[],
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<ProbeResult> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, PROBE, ...args],
    clearEnv: true,
    // Deno finds its cache (and so the npm packages) through HOME, programs through PATH.
    env: {
      HOME: Deno.env.get("HOME") ?? "/",
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout).trim();
  assert.ok(output.success && stdout, new TextDecoder().decode(output.stderr));
  return JSON.parse(stdout) as ProbeResult;
}
