/**
 * Exec credential plugins (`users[].user.exec` in a kubeconfig): run a
 * command that prints an `ExecCredential` and send its token, cached until
 * its `expirationTimestamp`.
 *
 * @module
 */
import { logger } from "../log.ts";
import { abortable } from "../async/abortable.ts";
import { type Clock, systemClock } from "../async/clock.ts";
import { rfc3339 } from "../_rfc3339.ts";
import { ConfigError, describeError } from "./errors.ts";
import type { TokenSource } from "./token_source.ts";

/** The ExecCredential API versions we speak; v1alpha1 was removed from client-go. */
export const EXEC_API_VERSIONS = [
  "client.authentication.k8s.io/v1",
  "client.authentication.k8s.io/v1beta1",
] as const;

/** `users[].user.exec` of a kubeconfig, validated, with the command path resolved. */
export interface ExecConfig {
  apiVersion: (typeof EXEC_API_VERSIONS)[number];
  command: string;
  args: string[];
  env: { name: string; value: string }[];
  installHint?: string;
  provideClusterInfo: boolean;
}

/** What a plugin learns about the cluster when `provideClusterInfo` is set. */
export interface ExecClusterInfo {
  server: string;
  /** Base64 PEM, as in the kubeconfig. */
  "certificate-authority-data"?: string;
  "insecure-skip-tls-verify"?: boolean;
  /** `extensions[name=client.authentication.k8s.io/exec].extension` of the cluster. */
  config?: unknown;
}

/** Everything {@link ExecTokenSource} needs besides the plugin config. */
export interface ExecTokenSourceOptions {
  /** Names the plugin's origin in errors, e.g. `user "admin" in /home/me/.kube/config`. */
  where: string;
  cluster: ExecClusterInfo;
  /**
   * The whole environment the plugin sees, before its own `env` entries and
   * `KUBERNETES_EXEC_INFO`. Defaults to the variables this process may read
   * (Deno's `--allow-env`), which is where a plugin's PATH, HOME and vendor
   * variables are granted; nothing else of this process's environment reaches it.
   */
  env?: Record<string, string | undefined>;
  /** Must tell wall-clock time: expiry timestamps are compared with `now()`. */
  clock?: Clock;
}

/**
 * Runs an exec plugin when a token is needed and none is cached, or the
 * cached one has expired, or after {@link invalidate}. Plugins run
 * non-interactively: standard input is closed and `spec.interactive` is false.
 */
export class ExecTokenSource implements TokenSource {
  readonly #exec: ExecConfig;
  readonly #options: ExecTokenSourceOptions;
  readonly #clock: Clock;
  #token?: string;
  /** Epoch milliseconds; Infinity when the plugin gave no expiry. */
  #expiresAt = 0;
  #pending?: Promise<string>;

  constructor(exec: ExecConfig, options: ExecTokenSourceOptions) {
    this.#exec = exec;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** @throws {ConfigError} when the plugin is missing, fails or prints something unusable. */
  token(signal?: AbortSignal): Promise<string> {
    if (this.#token !== undefined && this.#clock.now() < this.#expiresAt) {
      return Promise.resolve(this.#token);
    }
    // Concurrent callers share one run of the plugin, so an abort only stops
    // this caller's wait: the plugin runs to the end and its token is cached.
    this.#pending ??= this.#run().finally(() => this.#pending = undefined);
    return abortable(this.#pending, signal);
  }

  invalidate(): void {
    this.#token = undefined;
  }

  async #run(): Promise<string> {
    const { command, args, apiVersion } = this.#exec;
    const what = `exec plugin "${command}" (${this.#options.where})`;
    const execInfo = {
      apiVersion,
      kind: "ExecCredential",
      spec: {
        interactive: false,
        ...(this.#exec.provideClusterInfo ? { cluster: this.#options.cluster } : {}),
      },
    };
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.#options.env ?? grantedEnv(what))) {
      if (v !== undefined) env[k] = v;
    }
    for (const { name, value } of this.#exec.env) env[name] = value;
    env.KUBERNETES_EXEC_INFO = JSON.stringify(execInfo);

    let output: Deno.CommandOutput;
    try {
      output = await new Deno.Command(command, {
        args,
        env,
        // A child inherits the whole environment of the process unless cleared,
        // whatever Deno lets this process read.
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        const hint = this.#exec.installHint?.trim() ||
          "install it or fix users[].user.exec.command";
        throw new ConfigError(`Cannot run ${what}: command not found; ${hint}`, { cause: e });
      }
      const reason = describeError(e);
      throw new ConfigError(`Cannot run ${what}: ${reason}`, { cause: e });
    }
    const stderr = new TextDecoder().decode(output.stderr).trim();
    if (!output.success) {
      throw new ConfigError(
        `${what} failed with exit code ${output.code}` +
          (stderr ? `: ${excerpt(stderr)}` : " and printed nothing on standard error"),
      );
    }
    if (stderr) logger("kube", "auth").debug("{what} wrote: {stderr}", { what, stderr });
    const { token, expiresAt } = this.#parse(new TextDecoder().decode(output.stdout), what);
    this.#token = token;
    this.#expiresAt = expiresAt;
    return token;
  }

  #parse(stdout: string, what: string): { token: string; expiresAt: number } {
    // Output that parses as an object may hold a token or a key: it is described, never quoted.
    const bad = (problem: string, quote = false) =>
      new ConfigError(
        `${what} printed ${problem}; it must print an ExecCredential ` +
          `(apiVersion ${this.#exec.apiVersion}) with status.token` +
          (quote ? `, got: ${excerpt(stdout.trim()) || "nothing"}` : ""),
      );
    let cred: unknown;
    try {
      cred = JSON.parse(stdout);
    } catch {
      throw bad("output that is not JSON", true);
    }
    if (typeof cred !== "object" || cred === null || Array.isArray(cred)) {
      throw bad("JSON that is not an object", true);
    }
    const { apiVersion, kind, status } = cred as Record<string, unknown>;
    if (kind !== "ExecCredential") throw bad(`kind ${JSON.stringify(kind)}`);
    if (apiVersion !== this.#exec.apiVersion) {
      throw bad(`apiVersion ${JSON.stringify(apiVersion)}, not the configured one`);
    }
    if (typeof status !== "object" || status === null) throw bad("no status");
    const { token, expirationTimestamp, clientCertificateData } = status as Record<
      string,
      unknown
    >;
    if (typeof token !== "string" || token === "") {
      throw bad(
        clientCertificateData
          ? "a client certificate instead of a token (only token-issuing plugins are supported)"
          : "no status.token",
      );
    }
    if (expirationTimestamp === undefined || expirationTimestamp === null) {
      return { token, expiresAt: Infinity };
    }
    const expiresAt = typeof expirationTimestamp === "string"
      ? Date.parse(expirationTimestamp)
      : NaN;
    if (Number.isNaN(expiresAt)) {
      throw bad(`an invalid status.expirationTimestamp ${JSON.stringify(expirationTimestamp)}`);
    }
    // Accepting it would run the plugin again before every request.
    if (expiresAt < this.#clock.now()) {
      throw new ConfigError(
        `${what} printed a credential that had already expired (status.expirationTimestamp ` +
          `${expirationTimestamp}, now ${rfc3339(this.#clock.now(), 3)}); check ` +
          "the plugin's credential cache and this machine's clock",
      );
    }
    return { token, expiresAt };
  }
}

/**
 * The variables this process may read. Deno lists them under `--allow-env`,
 * and under a partial `--allow-env=A,B` only when some `--ignore-env` is also
 * given (kinglet's flags always give one); otherwise it refuses to list any.
 */
function grantedEnv(what: string): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch (e) {
    if (!(e instanceof Deno.errors.NotCapable)) throw e;
    throw new ConfigError(
      `Cannot run ${what}: Deno grants only some environment variables and lists them ` +
        "only when --ignore-env is also given; add --ignore-env to the deno flags, or pass " +
        "the plugin's environment to loadConfig as `env`",
      { cause: e },
    );
  }
}

function excerpt(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}
