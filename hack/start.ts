/**
 * `deno task start`: runs the bundle of main.ts (hack/build.ts, rebuilt first
 * when a source changed) under `deno run` with exactly the permissions, V8
 * flags and `--no-code-cache` that `deno task compile` bakes into the binary
 * (hack/_permissions.ts), widened by the same `KINGLET_ALLOW_<KIND>`
 * variables, and with its malloc settings. Arguments go to kinglet unchanged.
 *
 * kinglet runs in the folder the task was started from (`INIT_CWD`, which
 * `deno task` sets, as npm does), not the repository root where `deno task`
 * runs tasks: a relative `--kubeconfig`, `KUBECONFIG` entry or
 * `KINGLET_ALLOW_READ` entry means what it meant where the user typed it.
 *
 * ```sh
 * deno task start --kubeconfig /etc/rancher/k3s/k3s.yaml --leader-elect
 * KINGLET_ALLOW_READ=$HOME/.kube/config deno task start install --kubeconfig ~/.kube/config
 * ```
 *
 * SIGTERM, SIGHUP and SIGQUIT are passed on to kinglet; so is SIGINT unless
 * standard input is a terminal, whose Ctrl-C already reached kinglet (same
 * process group) and must not count twice. Exits with kinglet's exit code.
 *
 * @module
 */
import { buildBundle, BuildError } from "./build.ts";
import { denoFlags, grantsFromEnv, kingletEnv } from "./_permissions.ts";

const FORWARDED: readonly Deno.Signal[] = ["SIGTERM", "SIGHUP", "SIGQUIT", "SIGINT"];

function say(message: string): void {
  Deno.stderr.writeSync(new TextEncoder().encode(`start: ${message}\n`));
}

async function main(args: string[]): Promise<number> {
  let flags: string[];
  const env = Deno.env.toObject();
  try {
    flags = denoFlags(grantsFromEnv(env));
  } catch (error) {
    say(error instanceof Error ? error.message : String(error));
    return 2;
  }
  let main: string;
  try {
    ({ entry: main } = await buildBundle({ log: say }));
  } catch (error) {
    if (!(error instanceof BuildError)) throw error;
    say(error.message);
    return 1;
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, main, ...args],
    // Deno resolves relative --allow-read entries against this folder too.
    cwd: Deno.env.get("INIT_CWD") || Deno.cwd(),
    // A value the user set wins.
    env: kingletEnv(env),
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();

  const interactive = Deno.stdin.isTerminal();
  const listeners = FORWARDED.filter((s) => !(s === "SIGINT" && interactive)).map((signal) => {
    const forward = () => {
      try {
        child.kill(signal);
      } catch {
        // kinglet has already exited.
      }
    };
    Deno.addSignalListener(signal, forward);
    return () => Deno.removeSignalListener(signal, forward);
  });
  // Keeps Ctrl-C from ending this process before kinglet has drained and exited.
  const ignore = () => {};
  if (interactive) Deno.addSignalListener("SIGINT", ignore);

  try {
    // Deno reports a child ended by a signal with code 128 plus its number, as shells do.
    return (await child.status).code;
  } finally {
    for (const remove of listeners) remove();
    if (interactive) Deno.removeSignalListener("SIGINT", ignore);
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
