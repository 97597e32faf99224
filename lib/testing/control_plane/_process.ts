/**
 * One control-plane process (etcd, kube-apiserver, …): spawned with its
 * output copied to a log file, stopped by process id with SIGTERM and, after a
 * grace period, SIGKILL.
 *
 * Output goes through pipes rather than inherited descriptors so that a
 * component orphaned by a crashed parent dies of SIGPIPE on its next log line
 * instead of running on unnoticed.
 *
 * @module
 */
import { join } from "node:path";

/** How to run a {@link Component}. */
export interface ComponentSpec {
  /** Short name used in log file names and error messages, e.g. `"etcd"`. */
  name: string;
  /** Path of the executable. */
  command: string;
  args: string[];
  /** Folder for `<name>.log`; must exist. */
  logDir: string;
}

/** A running (or exited) control-plane process. */
export class Component {
  /** Short name, as given in the spec. */
  readonly name: string;
  /** Path of the file holding the process' stdout and stderr. */
  readonly logFile: string;
  /** Process id, the only handle used to signal the process. */
  readonly pid: number;
  /** Resolves when the process has exited and its output is flushed to the log. */
  readonly exited: Promise<Deno.CommandStatus>;
  readonly #spec: ComponentSpec;
  #child: Deno.ChildProcess;
  #status: Deno.CommandStatus | undefined;
  #stopping: Promise<void> | undefined;

  private constructor(spec: ComponentSpec, child: Deno.ChildProcess, log: Deno.FsFile) {
    this.#spec = spec;
    this.name = spec.name;
    this.logFile = join(spec.logDir, `${spec.name}.log`);
    this.pid = child.pid;
    this.#child = child;
    const pumps = Promise.all([copy(child.stdout, log), copy(child.stderr, log)]);
    this.exited = child.status.then(async (status) => {
      this.#status = status;
      await pumps.catch(() => {});
      log.close();
      return status;
    });
  }

  /**
   * Starts the process.
   *
   * @throws {Error} when the executable cannot be started.
   */
  static async spawn(spec: ComponentSpec): Promise<Component> {
    const logPath = join(spec.logDir, `${spec.name}.log`);
    const log = await Deno.open(logPath, { create: true, append: true });
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(spec.command, {
        args: spec.args,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    } catch (error) {
      log.close();
      throw new Error(`Cannot start ${spec.name} (${spec.command}): ${describe(error)}`, {
        cause: error,
      });
    }
    return new Component(spec, child, log);
  }

  /** The exit status, or `undefined` while the process runs. */
  get status(): Deno.CommandStatus | undefined {
    return this.#status;
  }

  /**
   * Sends SIGTERM, then SIGKILL if the process is still alive after
   * `graceMs`. Safe to call more than once; later calls wait for the first.
   */
  stop(graceMs = 5_000): Promise<void> {
    this.#stopping ??= this.#terminate(graceMs);
    return this.#stopping;
  }

  /**
   * Stops the process as {@link stop} does, then starts it again with the
   * same command line, its output appended to the same log.
   *
   * @throws {Error} when the executable cannot be started again.
   */
  async restart(graceMs = 5_000, whileDown?: () => Promise<void>): Promise<Component> {
    await this.stop(graceMs);
    await whileDown?.();
    return await Component.spawn(this.#spec);
  }

  async #terminate(graceMs: number): Promise<void> {
    if (this.#status) return;
    this.#signal("SIGTERM");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), graceMs);
    });
    const outcome = await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    if (outcome === "timeout") {
      this.#signal("SIGKILL");
      await this.exited;
    }
  }

  #signal(signal: Deno.Signal): void {
    try {
      this.#child.kill(signal);
    } catch (error) {
      // Deno throws a TypeError when the process exited since the last check.
      if (!(error instanceof TypeError)) throw error;
    }
  }

  /** The last `lines` lines of the log, for error messages. */
  async tail(lines = 30): Promise<string> {
    return await tailFile(this.logFile, lines);
  }
}

/** The last `lines` lines of a text file, or a note when it cannot be read. */
export async function tailFile(path: string, lines = 30): Promise<string> {
  try {
    const text = await Deno.readTextFile(path);
    return text.trimEnd().split("\n").slice(-lines).join("\n");
  } catch (error) {
    return `(cannot read ${path}: ${describe(error)})`;
  }
}

/**
 * Distinct loopback TCP ports that were free a moment ago. The kernel picks
 * them; processes started right after will almost always get them.
 */
export function freePorts(count: number): number[] {
  const listeners = Array.from(
    { length: count },
    () => Deno.listen({ hostname: "127.0.0.1", port: 0 }),
  );
  const ports = listeners.map((l) => (l.addr as Deno.NetAddr).port);
  for (const l of listeners) l.close();
  return ports;
}

async function copy(from: ReadableStream<Uint8Array>, to: Deno.FsFile): Promise<void> {
  for await (const chunk of from) {
    let written = 0;
    while (written < chunk.length) written += await to.write(chunk.subarray(written));
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
