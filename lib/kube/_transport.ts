/**
 * One HTTP exchange with the API server: client-side flow control, credentials,
 * user agent, timeout, one retry after a 401 with a fresh token (or after a
 * 403 when the token's file has changed since it was read), and every failure
 * turned into a typed error. Response bodies are always read or cancelled, so no
 * connection is left behind.
 *
 * @module
 */
import { type Clock, deadline } from "../async/clock.ts";
import type { ClusterConfig } from "./config.ts";
import type { FlowControl } from "./_flow_control.ts";
import { apiErrorFromResponse, ConfigError, describeError, TransportError } from "./errors.ts";
import { type RequestTarget, requestTarget } from "./_request_target.ts";

export type { RequestTarget } from "./_request_target.ts";

const LEASES_PATH = "/apis/coordination.k8s.io/";

/** One request, as the client describes it. */
export interface RequestSpec {
  /** Kubernetes verb for errors and metrics: get, list, watch, create, update, patch, delete. */
  verb: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: URLSearchParams;
  body?: string;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
}

/** What is reported after each HTTP exchange (see `ClientOptions.onRequest`). */
export interface RequestObservation {
  /** The Kubernetes verb: `get`, `list`, `watch`, `create`, `update`, `patch` or `delete`. */
  verb: string;
  /** The HTTP method. */
  method: string;
  /** `"200"`, `"404"`, ... or `"<error>"` when no response arrived. */
  code: string;
  /** Host and port of the API server. */
  host: string;
  /** The URL path, without the query, e.g. `/api/v1/namespaces/shop/configmaps/settings`. */
  path: string;
  /**
   * What the path is about, as RBAC names it (group, resource, namespace,
   * name): what a 403 was denied on. `undefined` for a path outside the
   * resource API, such as discovery or `/version`. Parsed from `path` when
   * read, so an observer that never reads it pays nothing for it.
   */
  target?: RequestTarget;
  /** How long the exchange took, up to the response headers. */
  seconds: number;
}

/** What is reported after each request's wait for a flow-control token. */
export interface RateLimiterObservation {
  /** HTTP method of the request. */
  method: string;
  /** Host and port of the API server. */
  host: string;
  /** Seconds the request waited; 0 when a token was there. */
  seconds: number;
}

/** Settings of {@link Transport}. */
export interface TransportOptions {
  userAgent: string;
  /** Measures the timeout; the client's, so tests step it. */
  clock: Clock;
  timeoutMs: number;
  flowControl: FlowControl;
  onRequest?: (o: RequestObservation) => void;
  onRateLimited?: (o: RateLimiterObservation) => void;
}

/** Sends requests to one API server over one pooled HTTP/1.1 `Deno.HttpClient`. */
/** How the API server's authorizer words a denial (`User "u" cannot patch resource ...`). */
const RBAC_DENIAL = /User \\?"[^"\\]*\\?" cannot /;

export class Transport {
  readonly #config: ClusterConfig;
  readonly #options: TransportOptions;
  /** Replaced by {@link resetConnections}; requests read it when they start. */
  #http: Deno.HttpClient;
  readonly #httpOptions: Deno.CreateHttpClientOptions;
  readonly #host: string;

  /** @throws {ConfigError} when the proxy URL or TLS material is unusable. */
  constructor(config: ClusterConfig, options: TransportOptions) {
    this.#config = config;
    this.#options = options;
    this.#host = new URL(config.server).host;
    const tls = config.clientCert && config.clientKey
      ? { cert: config.clientCert, key: config.clientKey }
      : {};
    const proxy = config.proxyUrl ? { proxy: proxyOf(config.proxyUrl, config.source) } : {};
    // HTTP/1.1, not HTTP/2: Deno's fetch leaves TCP_NODELAY off, and over HTTP/2
    // a request with a body goes out as HEADERS then DATA frames in separate
    // writes, so Nagle holds the DATA until the server's delayed ACK (40 ms on
    // Linux). Every write then took about 45 ms, capping a controller near 20
    // reconciles a second whatever its workers. HTTP/1.1 writes head and body
    // together, and the pool gives each request in flight its own connection.
    this.#httpOptions = {
      http1: true,
      http2: false,
      ...(config.caCert ? { caCerts: [config.caCert] } : {}),
      ...proxy,
      ...tls,
    };
    try {
      this.#http = Deno.createHttpClient(this.#httpOptions);
    } catch (e) {
      throw new ConfigError(
        `Cannot set up TLS for ${config.server} from ${config.source}: ${describeError(e)}; ` +
          "check the certificate authority and the client certificate and key",
        { cause: e },
      );
    }
  }

  /** Sends the request and parses the JSON answer, all within the timeout. */
  async json<T>(spec: RequestSpec): Promise<T> {
    await this.#throttle(spec);
    return await this.#withTimeout(spec, async (signal) => {
      const response = await this.#send(spec, signal);
      const text = await this.#read(response, spec, signal);
      try {
        return JSON.parse(text) as T;
      } catch (e) {
        const excerpt = text.length > 200 ? `${text.slice(0, 200)}...` : text;
        throw new TransportError(
          `${spec.verb} ${spec.path}: the answer (HTTP ${response.status}) is not JSON: ` +
            JSON.stringify(excerpt),
          { cause: e },
        );
      }
    });
  }

  /** Sends the request and discards the answer's body. */
  async discard(spec: RequestSpec): Promise<void> {
    await this.#throttle(spec);
    await this.#withTimeout(spec, async (signal) => {
      await this.#read(await this.#send(spec, signal), spec, signal);
    });
  }

  /**
   * Sends the request and returns the body stream unread. The timeout covers
   * only the wait for the response headers; the body lives until the server
   * ends it, the caller cancels it, or `spec.signal` aborts.
   */
  async stream(spec: RequestSpec): Promise<ReadableStream<Uint8Array>> {
    await this.#throttle(spec);
    const response = await this.#withTimeout(spec, (signal) => this.#send(spec, signal));
    if (!response.body) {
      throw new TransportError(`${spec.verb} ${spec.path}: the answer has no body`);
    }
    return response.body;
  }

  close(): void {
    this.#http.close();
  }

  /**
   * Sends later requests over new connections; requests in flight finish on
   * the old ones, which close after them. The pool reuses an idle connection
   * for the next request, so a connection that went silent without being
   * closed (a NAT or firewall that forgot it) would otherwise swallow later
   * requests too: call this when a request or watch got no answer in time.
   */
  resetConnections(): void {
    const old = this.#http;
    this.#http = Deno.createHttpClient(this.#httpOptions);
    old.close();
  }

  /**
   * Waits for a flow-control token. Outside the timeout on purpose: a wait
   * for our own bucket says nothing about the connection, which a timeout
   * would replace. Lease requests skip the bucket, as leader election has a
   * client of its own in controller-runtime: a renewal queued behind a burst
   * of reconciles could miss its deadline and cost the leadership.
   */
  async #throttle(spec: RequestSpec): Promise<void> {
    if (spec.path.startsWith(LEASES_PATH)) return;
    const seconds = await this.#options.flowControl.wait(spec.signal);
    this.#options.onRateLimited?.({ method: spec.method, host: this.#host, seconds });
  }

  async #withTimeout<T>(spec: RequestSpec, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    using timeout = deadline(this.#options.clock, this.#options.timeoutMs);
    const signal = spec.signal ? AbortSignal.any([spec.signal, timeout.signal]) : timeout.signal;
    try {
      return await run(signal);
    } catch (e) {
      spec.signal?.throwIfAborted();
      if (timeout.signal.aborted) {
        this.resetConnections();
        const reason = `no answer within ${this.#options.timeoutMs} ms`;
        throw new TransportError(
          `${spec.verb} ${spec.path}: no answer from ${this.#config.server} within ` +
            `${this.#options.timeoutMs} ms`,
          { cause: e, server: this.#config.server, reason },
        );
      }
      throw e;
    }
  }

  /** Returns a 2xx response with its body unread; anything else is thrown. */
  async #send(spec: RequestSpec, signal: AbortSignal): Promise<Response> {
    const url = this.#config.server + spec.path + (spec.query?.size ? `?${spec.query}` : "");
    for (let attempt = 1;; attempt++) {
      const token = await this.#config.auth.token(signal);
      const headers = new Headers({
        "accept": spec.accept ?? "application/json",
        "user-agent": this.#options.userAgent,
      });
      if (token) headers.set("authorization", `Bearer ${token}`);
      if (spec.contentType) headers.set("content-type", spec.contentType);
      const started = performance.now();
      let response: Response;
      try {
        response = await fetch(url, {
          method: spec.method,
          headers,
          body: spec.body ?? null,
          signal,
          client: this.#http,
        });
      } catch (e) {
        this.#observe(spec, "<error>", started);
        if (signal.aborted) throw e;
        throw this.#connectError(spec, e);
      }
      this.#observe(spec, String(response.status), started);
      if (response.ok) return response;
      if (response.status === 401 && token && attempt === 1) {
        // The token may have expired or rotated: ask the source for a fresh one, once.
        await response.body?.cancel();
        this.#config.auth.invalidate();
        continue;
      }
      if (
        response.status === 403 && token && attempt === 1 &&
        await this.#config.auth.rotated?.(token, signal)
      ) {
        // RBAC answered for the old token's user; the file now names another.
        await response.body?.cancel();
        continue;
      }
      const text = await response.text();
      throw apiErrorFromResponse(response, text, {
        verb: spec.verb,
        path: spec.path,
        ...(response.status === 401 ? { hint: this.#unauthorizedHint(Boolean(token)) } : {}),
        // An admission policy's or webhook's 403 says itself who refused and why.
        ...(response.status === 403 && RBAC_DENIAL.test(text)
          ? { hint: this.#forbiddenHint() }
          : {}),
      });
    }
  }

  async #read(response: Response, spec: RequestSpec, signal: AbortSignal): Promise<string> {
    try {
      return await response.text();
    } catch (e) {
      if (signal.aborted) throw e;
      throw new TransportError(
        `${spec.verb} ${spec.path}: reading the answer failed: ${describeError(e)}`,
        {
          cause: e,
        },
      );
    }
  }

  #connectError(spec: RequestSpec, e: unknown): Error {
    // A permission denial is final: retrying cannot widen Deno's grants.
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) return e;
    const reason = describeError(e);
    const where = `${spec.verb} ${spec.path}: cannot reach ${this.#config.server}`;
    if (/certificate|tls|handshake/i.test(reason)) {
      if (this.#config.insecureSkipTLSVerify) {
        const host = new URL(this.#config.server).hostname;
        return new ConfigError(
          `${where}: ${reason}; ${this.#config.source} sets insecure-skip-tls-verify, but Deno ` +
            "cannot skip certificate verification for one client: add the cluster's " +
            `certificate-authority-data (preferred) or run with --unsafely-ignore-certificate-errors=${host}`,
          { cause: e },
        );
      }
      const tls = this.#config.caCert === undefined && trustsOnlyGivenCas()
        ? `TLS failed: ${reason}; ${this.#config.source} names no certificate-authority and ` +
          "DENO_TLS_CA_STORE lists no certificate store, so nothing can vouch for the server: " +
          "add the cluster's certificate-authority-data, or set DENO_TLS_CA_STORE=system to " +
          "trust the system's certificate authorities"
        : `TLS failed: ${reason}; check the certificate authority and client ` +
          `certificate in ${this.#config.source}`;
      return new TransportError(`${where}: ${tls}`, {
        cause: e,
        server: this.#config.server,
        reason: tls,
      });
    }
    return new TransportError(`${where}: ${reason}`, {
      cause: e,
      server: this.#config.server,
      reason,
    });
  }

  #unauthorizedHint(sentToken: boolean): string {
    const context = this.#config.contextName ? ` (context "${this.#config.contextName}")` : "";
    const what = sentToken
      ? "the bearer token was rejected even after fetching it again"
      : this.#config.clientCert
      ? "the client certificate was rejected"
      : "no credentials were sent";
    return `${what}; check the user of ${this.#config.source}${context}`;
  }

  #forbiddenHint(): string {
    const context = this.#config.contextName ? ` (context "${this.#config.contextName}")` : "";
    return `RBAC does not grant this to the user of ${this.#config.source}${context}; grant ` +
      "the verb on the resource named above (deploy/clusterrole.yaml lists what kinglet needs)";
  }

  #observe(spec: RequestSpec, code: string, started: number): void {
    const observe = this.#options.onRequest;
    if (!observe) return;
    const { path } = spec;
    observe({
      verb: spec.verb,
      method: spec.method,
      code,
      host: this.#host,
      path,
      // Parsed only when read: a denial's observer reads it, the request counter does not.
      get target(): RequestTarget | undefined {
        return requestTarget(path);
      },
      seconds: (performance.now() - started) / 1000,
    });
  }
}

function proxyOf(url: string, source: string): Deno.Proxy {
  const scheme = url.slice(0, url.indexOf(":")).toLowerCase();
  if (scheme === "http" || scheme === "https") return { transport: scheme, url };
  if (scheme === "socks5" || scheme === "socks5h") return { transport: "socks5", url };
  throw new ConfigError(
    `Invalid proxy-url ${
      JSON.stringify(url)
    } in ${source}: use an http://, https:// or socks5:// URL`,
  );
}

/**
 * Whether Deno was started with an empty list of certificate stores (as
 * kinglet's launchers start it), so that only the CAs a client is given are
 * trusted. Deno reads the variable once, at start.
 */
function trustsOnlyGivenCas(): boolean {
  let stores: string | undefined;
  try {
    stores = Deno.env.get("DENO_TLS_CA_STORE");
  } catch {
    return false;
  }
  return stores !== undefined && stores.split(",").every((store) => store.trim() === "");
}
