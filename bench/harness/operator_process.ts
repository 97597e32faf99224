/**
 * The operator under test as a separate process, started the way its users
 * start it: the target's command with fresh loopback ports for metrics and
 * probes, its output appended to a log file, stopped by its process id.
 *
 * @example
 * ```ts ignore
 * import { OperatorProcess } from "./operator_process.ts";
 * import { loadTarget } from "./target.ts";
 * const target = await loadTarget("kinglet");
 * const operator = await OperatorProcess.start(target, {
 *   kubeconfig: "/tmp/kubeconfig", namespace: "bench", logFile: "/tmp/operator.log",
 * });
 * await operator.waitReady({ timeoutMs: 60_000 });
 * await operator.stop();
 * ```
 *
 * @module
 */
import { freePorts } from "../../lib/testing/control_plane/mod.ts";
import { expandCommand, type LaunchValues, type Target } from "./target.ts";

/** Options of {@link OperatorProcess.start}: the placeholders but the ports, and a log file. */
export interface StartOptions extends Omit<LaunchValues, "metricsPort" | "probePort"> {
  /** Receives the operator's standard output and error; appended to. */
  logFile: string;
}

/** How a stopped operator ended. */
export interface Stopped {
  /** From the stop request until the process was gone. */
  ms: number;
  /** `code 0`, `code 1` or `signal SIGKILL`. */
  exit: string;
}

/** A running operator process. */
export class OperatorProcess {
  readonly pid: number;
  readonly argv: readonly string[];
  readonly metricsUrl: string;
  readonly readyzUrl: string;
  readonly logFile: string;
  readonly #child: Deno.ChildProcess;
  readonly #output: Promise<void>;
  #status: Deno.CommandStatus | undefined;

  private constructor(
    child: Deno.ChildProcess,
    argv: string[],
    urls: { metrics: string; readyz: string },
    logFile: string,
    output: Promise<void>,
  ) {
    this.#child = child;
    this.pid = child.pid;
    this.argv = argv;
    this.metricsUrl = urls.metrics;
    this.readyzUrl = urls.readyz;
    this.logFile = logFile;
    this.#output = output;
    child.status.then((status) => (this.#status = status));
  }

  /** Picks two free ports, fills the target's command and spawns it. */
  static async start(target: Target, options: StartOptions): Promise<OperatorProcess> {
    const [metricsPort, probePort] = freePorts(2) as [number, number];
    const argv = expandCommand(target, { ...options, metricsPort, probePort });
    const log = await Deno.open(options.logFile, { create: true, append: true });
    const [program, ...args] = argv as [string, ...string[]];
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(program, {
        args,
        cwd: target.cwd,
        env: target.env,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    } catch (error) {
      log.close();
      throw new Error(
        `Cannot start ${target.name} (${argv.join(" ")}): ${(error as Error).message}`,
      );
    }
    const output = copyOutput([child.stdout, child.stderr], log);
    return new OperatorProcess(
      child,
      argv,
      {
        metrics: `http://127.0.0.1:${metricsPort}${target.metricsPath}`,
        readyz: `http://127.0.0.1:${probePort}${target.readyzPath}`,
      },
      options.logFile,
      output,
    );
  }

  /** Whether the process has exited. */
  get exited(): boolean {
    return this.#status !== undefined;
  }

  /**
   * Polls `/readyz` every 100 ms until it answers 200.
   *
   * @throws {Error} when the process exits first or `timeoutMs` passes,
   *   quoting the end of its log.
   */
  async waitReady(options: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
    const deadline = performance.now() + options.timeoutMs;
    let last = "no answer yet";
    while (performance.now() < deadline) {
      options.signal?.throwIfAborted();
      if (this.#status) {
        throw new Error(
          `the operator exited (${
            describe(this.#status)
          }) before /readyz answered 200:\n${await this.tail()}`,
        );
      }
      try {
        const response = await fetch(this.readyzUrl, { signal: AbortSignal.timeout(2_000) });
        const body = await response.text();
        if (response.ok) return;
        last = `${response.status} ${body.trim().slice(0, 200)}`;
      } catch (error) {
        last = (error as Error).message;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(
      `${this.readyzUrl} did not answer 200 within ${options.timeoutMs} ms (last: ${last}):\n${await this
        .tail()}`,
    );
  }

  /** Sends SIGTERM, then SIGKILL after `graceMs` (defaults to 15 000), and waits for the exit. */
  async stop(graceMs = 15_000): Promise<Stopped> {
    const started = performance.now();
    if (!this.#status) {
      this.#signal("SIGTERM");
      const timer = setTimeout(() => this.#signal("SIGKILL"), graceMs);
      try {
        await this.#child.status;
      } finally {
        clearTimeout(timer);
      }
    }
    await this.#output;
    return { ms: performance.now() - started, exit: describe(await this.#child.status) };
  }

  /**
   * Sends SIGKILL, as a node that dies or an OOM kill does: nothing is
   * released, so a Lease it holds stays taken until it expires. Waits for the exit.
   */
  async kill(): Promise<Stopped> {
    const started = performance.now();
    if (!this.#status) this.#signal("SIGKILL");
    await this.#child.status;
    await this.#output;
    return { ms: performance.now() - started, exit: describe(await this.#child.status) };
  }

  /** The last `lines` lines of the operator's log. */
  async tail(lines = 20): Promise<string> {
    const text = await Deno.readTextFile(this.logFile).catch(() => "");
    return text.trimEnd().split("\n").slice(-lines).join("\n");
  }

  #signal(signal: Deno.Signal): void {
    try {
      this.#child.kill(signal);
    } catch {
      // Exited between the check and the kill.
    }
  }
}

async function copyOutput(streams: ReadableStream<Uint8Array>[], file: Deno.FsFile): Promise<void> {
  try {
    await Promise.all(streams.map(async (stream) => {
      for await (const chunk of stream) {
        for (let written = 0; written < chunk.length;) {
          written += await file.write(chunk.subarray(written));
        }
      }
    }));
  } finally {
    file.close();
  }
}

function describe(status: Deno.CommandStatus): string {
  return status.signal ? `signal ${status.signal}` : `code ${status.code}`;
}
