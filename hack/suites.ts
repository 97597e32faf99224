/**
 * Runs the project's test suites one after the other and reports every
 * suite's result, even when an earlier one failed: a flaky file in
 * `test:cluster` must not hide what `test:oldest` and `test:kine` say.
 * Exits non-zero when any suite failed.
 *
 * ```sh
 * deno run -A hack/suites.ts check test:unit test:cluster test:oldest test:kine
 * ```
 *
 * Each argument is a task of `deno.json`, run as `deno task <name>` with the
 * Deno executing this script.
 *
 * @module
 */

const encoder = new TextEncoder();
function say(message: string): void {
  Deno.stderr.writeSync(encoder.encode(`${message}\n`));
}

/** One suite's outcome. */
export interface SuiteResult {
  task: string;
  /** The task's exit code. */
  code: number;
  ms: number;
}

/** One suite's line: its task, verdict and minutes, the task padded to `width`. */
export function suiteLine(r: SuiteResult, width = 0): string {
  const verdict = r.code === 0 ? "passed" : `FAILED (exit ${r.code})`;
  return `  ${r.task.padEnd(width)}  ${verdict}  ${(r.ms / 60_000).toFixed(1)} min`;
}

/** The closing table: one line per suite, then the verdict. */
export function suiteReport(results: readonly SuiteResult[]): string {
  const width = Math.max(...results.map((r) => r.task.length));
  const lines = results.map((r) => suiteLine(r, width));
  const failed = results.filter((r) => r.code !== 0).map((r) => r.task);
  const total = results.reduce((sum, r) => sum + r.ms, 0);
  const verdict = failed.length === 0
    ? `all ${results.length} suites passed in ${(total / 60_000).toFixed(1)} min`
    : `${failed.length} of ${results.length} suites failed: ${failed.join(", ")}`;
  return ["[suites] results:", ...lines, `[suites] ${verdict}`].join("\n");
}

async function main(tasks: string[]): Promise<number> {
  if (tasks.length === 0) {
    say("usage: deno run -A hack/suites.ts <task> [<task>...]");
    return 2;
  }
  const results: SuiteResult[] = [];
  for (const task of tasks) {
    say(`[suites] ${task}: starting`);
    const started = performance.now();
    const { code } = await new Deno.Command(Deno.execPath(), {
      args: ["task", task],
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    const result = { task, code, ms: performance.now() - started };
    results.push(result);
    say(`[suites] ${task}:${suiteLine(result)}`);
  }
  say(suiteReport(results));
  return results.every((r) => r.code === 0) ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
