/**
 * What the generators of committed files (`deno task crds`, `deno task
 * deploy`) share: reading a file that may not exist, saying where a
 * committed file first differs from what its generator writes, and the
 * command line (`--dir=<dir>`, `--check`).
 *
 * @module
 */

export { firstDifference, readIfExists } from "../lib/deploy/files.ts";

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
