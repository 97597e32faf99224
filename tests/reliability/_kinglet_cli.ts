/**
 * The kinglet command line as users start it, for the bad-input and security
 * tests: `deno run` of the bundle under exactly the flags of `deno task start`
 * (hack/_permissions.ts, widened by `KINGLET_ALLOW_<KIND>` as users widen
 * them), either run to its exit or kept running with its probes on free
 * loopback ports.
 *
 * @module
 */
import assert from "node:assert/strict";
import { grantsFromEnv, kingletEnv } from "../../hack/_permissions.ts";
import { kingletArgs } from "../_support/kinglet_bundle.ts";

/** How to start the CLI. */
export interface CliOptions {
  /** `KINGLET_ALLOW_<KIND>` variables (they shape the grants) and flag variables. */
  env?: Record<string, string>;
  /** Deno flags added after the start task's, e.g. `--unsafely-ignore-certificate-errors`. */
  denoFlags?: string[];
}

/** What a finished CLI run printed and how it exited. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  ms: number;
}

/** The `deno` arguments that run kinglet with `args` as `deno task start` would. */
function startTaskArgs(args: readonly string[], options: CliOptions): Promise<string[]> {
  return kingletArgs(args, {
    grants: grantsFromEnv(options.env ?? {}),
    ...(options.denoFlags && { denoFlags: options.denoFlags }),
  });
}

/** The environment `deno task start` gives kinglet: the caller's, plus kinglet's defaults. */
function startTaskEnv(options: CliOptions): Record<string, string> {
  return { ...options.env, ...kingletEnv({ ...Deno.env.toObject(), ...options.env }) };
}

/**
 * Runs the CLI until it exits.
 *
 * @throws {AssertionError} when it is still running after `timeoutMs`, with its output.
 */
export async function runToExit(
  args: readonly string[],
  options: CliOptions = {},
  timeoutMs = 30_000,
): Promise<CliResult> {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: await startTaskArgs(args, options),
    env: startTaskEnv(options),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const output = await child.output();
  clearTimeout(timer);
  const decoder = new TextDecoder();
  const result = {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
    ms: performance.now() - started,
  };
  assert.ok(
    output.signal === null,
    `kinglet ${args.join(" ")} still ran after ${timeoutMs} ms:\n${result.stderr.slice(-3000)}`,
  );
  return result;
}

/** A CLI process left running. */
export interface RunningCli extends AsyncDisposable {
  pid: number;
  healthUrl: string;
  metricsUrl: string;
  /** Standard output and error so far, interleaved as they arrived. */
  output(): string;
  /** Whether the process has exited. */
  exited(): boolean;
  /** Resolves to the exit code. */
  status: Promise<number>;
  /** Polls the output until `pattern` matches, returning the matching line. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends SIGTERM and resolves to the exit code. */
  stop(): Promise<number>;
}

/**
 * Starts `kinglet run` with `args` and the probe and metrics listeners on
 * free loopback ports; dispose of it to kill it.
 */
export async function startRun(
  args: readonly string[],
  options: CliOptions = {},
): Promise<RunningCli> {
  const [metricsPort, healthPort] = [freePort(), freePort()];
  const child = new Deno.Command(Deno.execPath(), {
    args: await startTaskArgs([
      "run",
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      `--health-probe-bind-address=127.0.0.1:${healthPort}`,
      ...args,
    ], options),
    env: startTaskEnv(options),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const collect = (stream: ReadableStream<Uint8Array>) =>
    stream.pipeThrough(new TextDecoderStream()).pipeTo(
      new WritableStream({ write: (chunk) => void (text += chunk) }),
    );
  const pumps = Promise.all([collect(child.stdout), collect(child.stderr)]).catch(() => {});
  let done = false;
  const status = child.status.then(async (s) => {
    done = true;
    await pumps;
    return s.code;
  });
  const cli: RunningCli = {
    pid: child.pid,
    healthUrl: `http://127.0.0.1:${healthPort}`,
    metricsUrl: `http://127.0.0.1:${metricsPort}`,
    output: () => text,
    exited: () => done,
    status,
    async waitForLine(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const line = text.split("\n").find((l) => pattern.test(l));
        if (line !== undefined) return line;
        assert.ok(
          Date.now() < deadline && !done,
          `${done ? "kinglet exited" : `no line matching ${pattern} after ${timeoutMs} ms`}; ` +
            `its output ends with:\n${text.slice(-3000)}`,
        );
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      if (!done) child.kill("SIGTERM");
      return await status;
    },
    async [Symbol.asyncDispose]() {
      if (!done) child.kill("SIGKILL");
      await status;
    },
  };
  return cli;
}

/** GETs `url`, resolving to its status and body. */
export async function probe(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.text() };
}

/** A loopback port that nothing listens on (it was free a moment ago). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

/** Lines that are stack frames (`    at f (file:1:2)`): never a user's only answer. */
export function stackFrames(text: string): string[] {
  return text.split("\n").filter((line) => /^\s{4}at /.test(line));
}
