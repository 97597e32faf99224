/**
 * Runs Deno's own tooling quietly for the build, reporting its output only
 * when it fails.
 *
 * @module
 */
import { BuildError } from "./errors.ts";

/**
 * Runs `deno <args>` in `cwd` with its output captured and `NO_COLOR` set,
 * and returns its standard output.
 *
 * @throws {BuildError} when it fails: `advice`, then its output.
 */
export async function runDeno(
  args: readonly string[],
  cwd: string,
  advice: readonly string[],
): Promise<string> {
  const result = await new Deno.Command(Deno.execPath(), {
    args: [...args],
    cwd,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  const stdout = decoder.decode(result.stdout);
  if (result.success) return stdout;
  const output = (stdout + decoder.decode(result.stderr))
    .split("\n").filter((line) => !/deno bundle is experimental/.test(line)).join("\n").trim();
  throw new BuildError(`${advice.join("\n")}\n${output}`);
}
