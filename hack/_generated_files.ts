/**
 * What the generators of committed files (`deno task crds`, `deno task
 * deploy`) share: reading a file that may not exist, and saying where a
 * committed file first differs from what its generator writes.
 *
 * @module
 */

/** The text of `path`, or `undefined` when there is no such file. */
export async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

/**
 * Where `actual` first differs from `expected`, as one phrase for a drift
 * report.
 *
 * @example
 * ```ts
 * import { firstDifference } from "./_generated_files.ts";
 * firstDifference("a\nb\n", "a\nc\n"); // 'differs from line 2: expected "b", found "c"'
 * ```
 */
export function firstDifference(expected: string, actual: string): string {
  const want = expected.split("\n");
  const have = actual.split("\n");
  const index = want.findIndex((line, i) => line !== have[i]);
  const line = index === -1 ? want.length : index;
  return `differs from line ${line + 1}: expected ${
    JSON.stringify(want[line] ?? "<end of file>")
  }, ` +
    `found ${JSON.stringify(have[line] ?? "<end of file>")}`;
}
