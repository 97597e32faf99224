/**
 * Runs a command against a fresh local control plane, then stops it.
 *
 * ```sh
 * deno run -A hack/with_cluster.ts -- deno test -A tests/integration/
 * deno run -A hack/with_cluster.ts --help
 * ```
 *
 * The command sees `KINGLET_TEST_KUBECONFIG` (which the test kit's
 * `testCluster()` reads), `KINGLET_TEST_CLUSTER_DIR`,
 * `KINGLET_TEST_ETCD`, `KINGLET_TEST_DATASTORE` and `KINGLET_TEST_BIN_DIR`, with the binaries folder
 * first on `PATH` so that `kubectl` is the pinned one; `deno` runs as the
 * Deno executing this script. The cluster lives in `.cache/clusters/<time>`,
 * deleted when the command succeeds and kept, with the end of every component
 * log printed, when it fails. Exits with the command's exit code; SIGINT and
 * SIGTERM are passed to the command and stop the cluster too.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Cluster, startCluster, tailFile } from "../lib/testing/control_plane/mod.ts";

const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;
type ForwardedSignal = keyof typeof SIGNAL_EXIT_CODES;

const encoder = new TextEncoder();
function say(message: string): void {
  Deno.stderr.writeSync(encoder.encode(`[with_cluster] ${message}\n`));
}

const USAGE = `usage: deno run -A hack/with_cluster.ts [--] <command> [args...]

Starts a local control plane (etcd or kine, kube-apiserver, kube-controller-manager,
kube-scheduler, kwok nodes), runs <command> against it with KINGLET_TEST_KUBECONFIG set,
then stops it; exits with the command's exit code.

  KINGLET_K8S_VERSION=oldest   the oldest Kubernetes kinglet supports (lib/testing/control_plane/versions.env)
  KINGLET_DATASTORE=kine       kine on SQLite instead of etcd, as a single-server k3s
  KUBEBUILDER_ASSETS=<dir>     prebuilt etcd and kube-apiserver instead of ~/.cache/kinglet`;

/** What the arguments ask for: usage, or a command to run against the cluster. */
export function parseArgs(
  args: readonly string[],
): { help: true } | { refused: string } | { command: string[] } {
  if (args[0] === "--") {
    return args.length > 1 ? { command: args.slice(1) } : { refused: "no command after --" };
  }
  if (args[0] === "--help" || args[0] === "-h") return { help: true };
  if (args[0]?.startsWith("-")) return { refused: `unknown option ${args[0]}` };
  return args.length > 0 ? { command: [...args] } : { refused: "no command" };
}

async function main(args: string[]): Promise<number> {
  const parsed = parseArgs(args);
  if ("help" in parsed) {
    Deno.stdout.writeSync(encoder.encode(`${USAGE}\n`));
    return 0;
  }
  if ("refused" in parsed) {
    say(`${parsed.refused}\n${USAGE}`);
    return 2;
  }
  const [program, ...programArgs] = parsed.command as [string, ...string[]];
  const repo = fileURLToPath(new URL("..", import.meta.url));
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const dir = join(repo, ".cache", "clusters", `${stamp}-${Deno.pid}`);

  const abort = new AbortController();
  let interrupted: ForwardedSignal | undefined;
  let child: Deno.ChildProcess | undefined;
  const handlers = (Object.keys(SIGNAL_EXIT_CODES) as ForwardedSignal[]).map((signal) => {
    const handler = () => {
      interrupted ??= signal;
      abort.abort(new Error(`interrupted by ${signal}`));
      try {
        child?.kill(signal);
      } catch {
        // The command has already exited.
      }
    };
    Deno.addSignalListener(signal, handler);
    return () => Deno.removeSignalListener(signal, handler);
  });

  try {
    let cluster: Cluster;
    try {
      cluster = await startCluster({ dir, signal: abort.signal, log: say, keepLogs: true });
    } catch (error) {
      if (interrupted) {
        say(`interrupted by ${interrupted} while starting; cluster stopped`);
        await Deno.remove(dir, { recursive: true }).catch(() => {});
        return SIGNAL_EXIT_CODES[interrupted];
      }
      say(error instanceof Error ? error.message : String(error));
      return 1;
    }
    const { timings } = cluster;
    say(
      `binaries ${timings.binariesBuilt ? "built" : "reused"} in ${seconds(timings.binariesMs)}, ` +
        `cluster started in ${seconds(timings.startMs)} (${cluster.server})`,
    );

    const ran = performance.now();
    const tail = new OutputTail(TAIL_BYTES);
    let code: number;
    try {
      child = new Deno.Command(program === "deno" ? Deno.execPath() : program, {
        args: programArgs,
        env: {
          KINGLET_TEST_KUBECONFIG: cluster.kubeconfig,
          KINGLET_TEST_CLUSTER_DIR: cluster.dir,
          KINGLET_TEST_ETCD: cluster.etcdEndpoint,
          KINGLET_TEST_DATASTORE: cluster.datastore,
          KINGLET_TEST_BIN_DIR: cluster.binDir,
          PATH: [cluster.binDir, Deno.env.get("PATH")].filter(Boolean).join(":"),
        },
        stdin: "inherit",
        stdout: "piped",
        stderr: "inherit",
      }).spawn();
      const [status] = await Promise.all([child.status, forward(child.stdout, tail)]);
      code = status.code;
    } catch (error) {
      say(`cannot run ${program}: ${error instanceof Error ? error.message : String(error)}`);
      code = 127;
    }
    const failed = code !== 0 || interrupted !== undefined;
    say(`command exited with code ${code} after ${seconds(performance.now() - ran)}`);
    if (failed && !interrupted) await reportLogs(cluster);
    cluster.keepLogs = failed && !interrupted;
    const stopping = performance.now();
    await cluster.stop();
    say(`cluster stopped in ${seconds(performance.now() - stopping)}`);
    if (cluster.keepLogs) say(`cluster folder kept: ${cluster.dir}`);
    const summary = failed && !interrupted ? failureSummary(tail.text()) : undefined;
    if (summary) say(`the command's failures again, after the component logs:\n${summary}`);
    return interrupted ? SIGNAL_EXIT_CODES[interrupted] : code;
  } finally {
    for (const remove of handlers) remove();
  }
}

/** Prints the end of every component log, which usually shows why a test failed. */
async function reportLogs(cluster: Cluster): Promise<void> {
  const logs: string[] = [];
  for await (const entry of Deno.readDir(cluster.logDir)) {
    if (entry.isFile && entry.name.endsWith(".log")) logs.push(entry.name);
  }
  for (const name of logs.sort()) {
    const path = join(cluster.logDir, name);
    say(`--- last lines of ${path}\n${await tailFile(path, 15)}`);
  }
}

/** How much of the command's output is kept to repeat its failure summary. */
const TAIL_BYTES = 256 * 1024;

/** The last bytes a stream carried, decoded on demand. */
class OutputTail {
  #chunks: Uint8Array[] = [];
  #bytes = 0;
  constructor(readonly limit: number) {}
  push(chunk: Uint8Array): void {
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    while (this.#bytes - this.#chunks[0]!.length >= this.limit) {
      this.#bytes -= this.#chunks.shift()!.length;
    }
  }
  text(): string {
    const all = new Uint8Array(this.#bytes);
    let at = 0;
    for (const chunk of this.#chunks) {
      all.set(chunk, at);
      at += chunk.length;
    }
    return new TextDecoder().decode(all);
  }
}

/** Copies the command's output to ours as it comes, keeping its tail. */
async function forward(stream: ReadableStream<Uint8Array>, tail: OutputTail): Promise<void> {
  for await (const chunk of stream) {
    tail.push(chunk);
    await writeAll(Deno.stdout, chunk);
  }
}

async function writeAll(writer: typeof Deno.stdout, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await writer.write(bytes.subarray(at));
}

/**
 * The `deno test` report's ERRORS and FAILURES sections (without colours),
 * repeated last: a CI log that shows only its end then still names what failed,
 * not just the components' log lines printed after it.
 */
export function failureSummary(output: string): string | undefined {
  // deno-lint-ignore no-control-regex -- ANSI colour sequences
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
  const start = plain.lastIndexOf(" ERRORS ");
  const failures = plain.lastIndexOf(" FAILURES ");
  const from = start >= 0 ? start : failures;
  if (from < 0) return undefined;
  const text = plain.slice(from).trimEnd();
  const lines = text.split("\n");
  return lines.length > 120 ? [...lines.slice(0, 60), "...", ...lines.slice(-60)].join("\n") : text;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
