/**
 * Runs test files again and again beside a CPU load that keeps every core
 * busy, to find the tests that pass only on a quiet machine. Meant to run
 * inside `hack/with_cluster.ts`, so that the cluster tests share one control
 * plane across the runs (that is what `deno task test:load` does):
 *
 * ```sh
 * deno task test:load tests/integration/kube_client_test.ts
 * deno task test:load --runs 3 --load 1 tests/integration/watcher_test.ts tests/unit/leader_test.ts
 * KINGLET_K8S_VERSION=oldest deno task test:load tests/integration/leader_test.ts
 * ```
 *
 * Options: `--runs N` (default 10) runs in a row, every run reported, the
 * exit code non-zero when any failed; `--load N` (default: the number of
 * cores) busy threads beside them. Each run is `deno test -A <files>`.
 *
 * @module
 */
import { parseArgs } from "node:util";

const encoder = new TextEncoder();
function say(message: string): void {
  Deno.stderr.writeSync(encoder.encode(`[under_load] ${message}\n`));
}

/** What `--runs` and `--load` say, checked. */
export interface LoadPlan {
  runs: number;
  threads: number;
  files: string[];
}

/**
 * Reads the command line.
 *
 * @throws {RangeError} when `--runs` or `--load` is not a whole number (at
 * least 1 and 0), or no test file is named.
 */
export function loadPlan(args: string[], cores: number): LoadPlan {
  const { values, positionals } = parseArgs({
    args,
    options: { runs: { type: "string" }, load: { type: "string" } },
    allowPositionals: true,
  });
  const runs = Number(values.runs ?? 10);
  const threads = Number(values.load ?? cores);
  if (!Number.isSafeInteger(runs) || runs < 1) {
    throw new RangeError(`--runs: must be a whole number of runs, at least 1, got ${values.runs}`);
  }
  if (!Number.isSafeInteger(threads) || threads < 0) {
    throw new RangeError(`--load: must be a whole number of busy threads, got ${values.load}`);
  }
  if (positionals.length === 0) {
    throw new RangeError("name the test files to run, e.g. tests/integration/watcher_test.ts");
  }
  return { runs, threads, files: positionals };
}

/** A thread that spins until terminated. */
const SPIN = URL.createObjectURL(
  new Blob(["for (;;) { Math.sqrt(Math.random()); }"], { type: "text/javascript" }),
);

async function main(args: string[]): Promise<number> {
  let plan: LoadPlan;
  try {
    plan = loadPlan(args, navigator.hardwareConcurrency);
  } catch (error) {
    say(error instanceof Error ? error.message : String(error));
    return 2;
  }
  const spinners = Array.from(
    { length: plan.threads },
    () => new Worker(SPIN, { type: "module" }),
  );
  say(`${plan.threads} busy threads beside ${plan.runs} runs of ${plan.files.join(" ")}`);
  const failed: number[] = [];
  try {
    for (let run = 1; run <= plan.runs; run++) {
      const started = performance.now();
      const { code } = await new Deno.Command(Deno.execPath(), {
        args: ["test", "--allow-all", ...plan.files],
        stdin: "null",
        stdout: "inherit",
        stderr: "inherit",
      }).output();
      if (code !== 0) failed.push(run);
      const verdict = code === 0 ? "passed" : `FAILED (exit ${code})`;
      say(
        `run ${run}/${plan.runs} ${verdict} in ${
          ((performance.now() - started) / 1000).toFixed(1)
        } s`,
      );
    }
  } finally {
    for (const spinner of spinners) spinner.terminate();
  }
  say(
    failed.length === 0
      ? `all ${plan.runs} runs passed under load`
      : `${failed.length} of ${plan.runs} runs failed under load: runs ${failed.join(", ")}`,
  );
  return failed.length === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
