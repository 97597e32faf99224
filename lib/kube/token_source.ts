/**
 * Bearer tokens for the API server, from wherever the configuration keeps
 * them: a literal, a file that is rotated underneath us (a projected service
 * account token, a kubeconfig `tokenFile`) or an exec plugin.
 *
 * @example
 * ```ts
 * import { staticToken } from "./token_source.ts";
 * const auth = staticToken("abc");
 * await auth.token(); // "abc"
 * ```
 *
 * @module
 */
import { logger } from "../log.ts";
import { type Clock, systemClock } from "../async/clock.ts";
import { ConfigError, describeError } from "./errors.ts";

/**
 * Hands out the bearer token to send, if any. The client calls
 * {@link TokenSource.invalidate} when the server answers 401, then asks again
 * once: a source that can fetch a fresher token (re-read a file, re-run a
 * plugin) should do so on the next {@link TokenSource.token} call. After a
 * 403 the client asks {@link TokenSource.rotated}, where a source has it.
 */
export interface TokenSource {
  /** The token to send, or undefined to send none (client certificates). */
  token(signal?: AbortSignal): Promise<string | undefined>;
  /** Forget any cached token. */
  invalidate(): void;
  /**
   * Checks the token's origin now and resolves to true when it holds another
   * token than `sent`, which the next {@link TokenSource.token} call returns.
   * A 403 proves the token authenticates, so only a source that can tell
   * cheaply that its token was replaced implements this; the client then
   * retries the request once with the new token.
   */
  rotated?(sent: string, signal?: AbortSignal): Promise<boolean>;
}

/** No bearer token: the client authenticates by certificate, or not at all. */
export const noToken: TokenSource = {
  token: () => Promise.resolve(undefined),
  invalidate() {},
};

/**
 * A fixed token. Invalidating it changes nothing, so a rejected token fails
 * the request after one retry.
 */
export function staticToken(token: string): TokenSource {
  return { token: () => Promise.resolve(token), invalidate() {} };
}

/** Options of {@link FileTokenSource}. */
export interface FileTokenSourceOptions {
  /** Re-read the file when the cached token is older than this. Defaults to 60 s (client-go's). */
  maxAgeMs?: number;
  /** Defaults to the system clock. */
  clock?: Clock;
  /** Defaults to `Deno.readTextFile`. */
  readTextFile?: (path: string) => Promise<string>;
  /** Names the token in error messages, e.g. `tokenFile of user "admin" in /etc/kubeconfig`. */
  description?: string;
}

/**
 * A token read from a file that someone else rotates (the kubelet refreshes
 * projected service account tokens well before they expire). The file is
 * re-read at most every `maxAgeMs`, after {@link invalidate}, and when
 * {@link rotated} is asked after a 403 (a token swapped for one with other
 * permissions must not wait out `maxAgeMs`). When a
 * re-read fails but an older token is cached, the older token is used and a
 * warning logged, as client-go does.
 *
 * @example
 * ```ts ignore
 * import { FileTokenSource } from "./token_source.ts";
 * const auth = new FileTokenSource("/var/run/secrets/kubernetes.io/serviceaccount/token");
 * await auth.token(); // read now, and again once a minute has passed or after auth.invalidate()
 * ```
 */
export class FileTokenSource implements TokenSource {
  readonly #path: string;
  readonly #maxAgeMs: number;
  readonly #clock: Clock;
  readonly #read: (path: string) => Promise<string>;
  readonly #description: string;
  #token?: string;
  #readAt = 0;
  #pending?: Promise<string>;

  /**
   * Reads the token from `path`, again once it is older than `maxAgeMs`.
   *
   * @throws {RangeError} when `maxAgeMs` is negative.
   */
  constructor(path: string, options: FileTokenSourceOptions = {}) {
    const maxAgeMs = options.maxAgeMs ?? 60_000;
    if (!(maxAgeMs >= 0)) {
      throw new RangeError(
        `Cannot create the token source: 'maxAgeMs' must be >= 0, got ${maxAgeMs}`,
      );
    }
    this.#path = path;
    this.#maxAgeMs = maxAgeMs;
    this.#clock = options.clock ?? systemClock;
    this.#read = options.readTextFile ?? Deno.readTextFile;
    this.#description = options.description ?? `token file ${path}`;
  }

  /**
   * The token, read again from the file once it is older than `maxAgeMs`.
   *
   * @throws {ConfigError} when the file cannot be read or is empty and no older token is cached.
   */
  token(): Promise<string> {
    if (this.#token !== undefined && this.#clock.now() - this.#readAt < this.#maxAgeMs) {
      return Promise.resolve(this.#token);
    }
    // Concurrent callers share one read.
    this.#pending ??= this.#reread().finally(() => this.#pending = undefined);
    return this.#pending;
  }

  invalidate(): void {
    this.#readAt = -Infinity;
  }

  /** Re-reads the file now; true when it no longer holds `sent`. */
  async rotated(sent: string): Promise<boolean> {
    this.invalidate();
    return await this.token() !== sent;
  }

  async #reread(): Promise<string> {
    let token: string;
    try {
      token = (await this.#read(this.#path)).trim();
      if (!token) throw new Error("the file is empty");
    } catch (e) {
      const reason = describeError(e);
      if (this.#token === undefined) {
        throw new ConfigError(
          `Cannot read the ${this.#description}: ${reason}; make sure the file exists, ` +
            `is readable and holds a token`,
          { cause: e },
        );
      }
      logger("kube", "auth").warn("Keeping the previous token: cannot re-read {what}: {reason}", {
        what: this.#description,
        reason,
      });
      token = this.#token;
    }
    this.#token = token;
    this.#readAt = this.#clock.now();
    return token;
  }
}
