/**
 * Runs a program quietly for the benchmark, reporting its
 * output only when it fails.
 *
 * @module
 */

/**
 * Runs `program` with its output captured and `NO_COLOR` set; resolves to
 * `undefined` when it succeeds, else to its exit code and its stdout and
 * stderr together, for an error message.
 */
export async function runQuiet(
  program: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number; output: string } | undefined> {
  const result = await new Deno.Command(program, {
    args: [...args],
    ...(options.cwd !== undefined && { cwd: options.cwd }),
    env: { ...options.env, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (result.success) return undefined;
  const decoder = new TextDecoder();
  return {
    code: result.code,
    output: (decoder.decode(result.stdout) + decoder.decode(result.stderr)).trim(),
  };
}
