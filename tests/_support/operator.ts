// deno-lint-ignore-file no-console -- tells where a kept log is
/**
 * Starts kinglet as users run it: a separate `deno run` process of the bundle
 * with the permissions, V8 flags and malloc settings of `deno task start`, on free loopback
 * ports, its log in a file. Tests stop it with SIGTERM or kill it.
 *
 * Its webhook server listens on a free port too, unless the test names one
 * (`--webhook-bind-address`), so that two operators can run at once: the
 * CRD's conversion follows the port it injects; a ValidatingWebhookConfiguration
 * applied by the test names 9443, which a test of admission passes.
 *
 * @module
 */
import { grantsFromEnv, kingletEnv } from "../../hack/_permissions.ts";
import { kingletArgs } from "./kinglet_bundle.ts";

/** A running operator process. */
export interface OperatorProcess extends AsyncDisposable {
  pid: number;
  metricsUrl: string;
  healthUrl: string;
  logFile: string;
  /** Resolves to the exit code. */
  status: Promise<number>;
  /** Sends `signal` (SIGTERM by default) and resolves to the exit code. */
  stop(signal?: Deno.Signal): Promise<number>;
  /** The log so far. */
  log(): Promise<string>;
  /** Resolves when /readyz answers 200. */
  ready(timeoutMs?: number): Promise<void>;
  /** A metric's value, summed over the series whose labels contain `labels`. */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
}

/** Options of {@link startOperator}. */
export interface OperatorOptions {
  kubeconfig: string;
  /** More flags for `kinglet run`. */
  args?: string[];
  env?: Record<string, string>;
}

/** Starts the operator; see the module documentation. */
export async function startOperator(options: OperatorOptions): Promise<OperatorProcess> {
  const [metricsPort, healthPort] = [freePort(), freePort()];
  const webhookPort = options.args?.some((arg) => arg.startsWith("--webhook-bind-address"))
    ? []
    : [`--webhook-bind-address=127.0.0.1:${freePort()}`];
  const logFile = await Deno.makeTempFile({ prefix: "kinglet-operator-", suffix: ".log" });
  // Exactly `deno task start`: its grants, widened as users widen them, by KINGLET_ALLOW_READ.
  const grants = grantsFromEnv({ KINGLET_ALLOW_READ: options.kubeconfig, ...options.env });
  const command = Deno.execPath();
  const args = await kingletArgs([
    "run",
    "--kubeconfig",
    options.kubeconfig,
    `--metrics-bind-address=127.0.0.1:${metricsPort}`,
    `--health-probe-bind-address=127.0.0.1:${healthPort}`,
    "--log-format=json",
    ...webhookPort,
    ...(options.args ?? []),
  ], { grants });
  const child = new Deno.Command(command, {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { ...options.env, ...kingletEnv({ ...Deno.env.toObject(), ...options.env }) },
  }).spawn();
  // Copied chunk by chunk: piping a child's output into a file's writable
  // lands nothing in the file before the child exits, and tests read the log live.
  const sink = await Deno.open(logFile, { append: true });
  const pumps = Promise.all([copy(child.stdout, sink), copy(child.stderr, sink)]);
  const status = child.status.then(async (s) => {
    await pumps.catch(() => {});
    sink.close();
    return s.code;
  });
  const metricsUrl = `http://127.0.0.1:${metricsPort}`;
  const healthUrl = `http://127.0.0.1:${healthPort}`;
  let exited = false;
  status.then(() => (exited = true));
  const operator: OperatorProcess = {
    pid: child.pid,
    metricsUrl,
    healthUrl,
    logFile,
    status,
    async stop(signal: Deno.Signal = "SIGTERM") {
      if (!exited) {
        try {
          child.kill(signal);
        } catch { /* already gone */ }
      }
      return await status;
    },
    log: () => Deno.readTextFile(logFile),
    async ready(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (exited) {
          throw new Error(`operator exited with ${await status}:\n${await operator.log()}`);
        }
        try {
          const response = await fetch(`${healthUrl}/readyz`);
          await response.body?.cancel();
          if (response.ok) return;
        } catch { /* not listening yet */ }
        if (Date.now() > deadline) {
          throw new Error(`operator not ready after ${timeoutMs} ms:\n${await operator.log()}`);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async metric(name, labels = {}) {
      const text = await (await fetch(`${metricsUrl}/metrics`)).text();
      let sum = 0;
      for (const line of text.split("\n")) {
        if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) continue;
        const matches = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
        if (matches) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
      }
      return sum;
    },
    async [Symbol.asyncDispose]() {
      await operator.stop("SIGKILL");
      if (Deno.env.get("KINGLET_TEST_KEEP_LOGS")) console.error(`operator log kept: ${logFile}`);
      else await Deno.remove(logFile).catch(() => {});
    },
  };
  return operator;
}

/** Resident memory of a process in bytes, from /proc. */
export async function rssBytes(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return Number(kb) * 1024;
}

async function copy(from: ReadableStream<Uint8Array>, to: Deno.FsFile): Promise<void> {
  for await (const chunk of from) {
    let written = 0;
    while (written < chunk.length) written += await to.write(chunk.subarray(written));
  }
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
