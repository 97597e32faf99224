/**
 * What the generators of committed files (`deno task crds`, `deno task
 * deploy`) share: reading a file that may not exist, saying where a
 * committed file first differs from what its generator writes, and the
 * command line (`--dir=<dir>`, `--check`).
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

/** One generator of committed files, as {@link runGenerator} drives it. */
export interface Generator {
  /** Where the files go without `--dir`. */
  defaultDir: string;
  /** What is stale in `dir`, one line each; empty when up to date. */
  compare(dir: string): Promise<string[]>;
  /** Writes what is stale in `dir`; one line per file changed. */
  write(dir: string): Promise<string[]>;
  /** The last line of a failed `--check`: which task to run and what to commit. */
  outOfDate: string;
  /** How many files it makes, for a passed `--check`, e.g. "3 CRDs". */
  count: string;
}

/**
 * Runs a generator from `args`: with `--check`, reports drift on stderr
 * and exits 1, or says the files are up to date; otherwise writes them.
 */
export async function runGenerator(generator: Generator, args: readonly string[]): Promise<void> {
  const dirFlag = args.find((arg) => arg.startsWith("--dir="));
  const dir = dirFlag ? dirFlag.slice("--dir=".length) : generator.defaultDir;
  if (args.includes("--check")) {
    const problems = await generator.compare(dir);
    if (problems.length > 0) {
      for (const problem of problems) say(Deno.stderr, problem);
      say(Deno.stderr, generator.outOfDate);
      Deno.exit(1);
    }
    say(Deno.stdout, `${dir} is up to date (${generator.count})`);
  } else {
    const changed = await generator.write(dir);
    for (const line of changed) say(Deno.stdout, line);
    if (changed.length === 0) say(Deno.stdout, `${dir} is already up to date`);
  }
}

const encoder = new TextEncoder();
function say(stream: typeof Deno.stdout, message: string): void {
  stream.writeSync(encoder.encode(`${message}\n`));
}
