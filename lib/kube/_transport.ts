/**
 * One HTTP exchange with the API server: client-side flow control, credentials,
 * user agent, timeout, one retry after a 401 with a fresh token (or after a
 * 403 when the token's file has changed since it was read), and every failure
 * turned into a typed error. Response bodies are always read or cancelled, so no
 * connection is left behind. The bytes go over kinglet's HTTP/1.1 client
 * (`_http1.ts`), or over `fetch` when the kubeconfig names a proxy
 * (`_fetch_exchange.ts`); either way the errors and observations are the same.
 *
 * @module
 */
import { type Clock, deadline } from "../async/clock.ts";
import type { ClusterConfig } from "./config.ts";
import type { FlowControl } from "./_flow_control.ts";
import { apiErrorFromResponse, ConfigError, describeError, TransportError } from "./errors.ts";
import { type RequestTarget, requestTarget } from "./_request_target.ts";
import type { Exchange, IncomingResponse, OutgoingRequest } from "./_exchange.ts";
import { FetchExchange, proxyOf } from "./_fetch_exchange.ts";
import { Http1Client } from "./_http1.ts";

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

/** How the API server's authorizer words a denial (`User "u" cannot patch resource ...`). */
const RBAC_DENIAL = /User \\?"[^"\\]*\\?" cannot /;

/**
 * Sends requests to one API server: over kinglet's HTTP/1.1 client, or over
 * `fetch` when the kubeconfig names a proxy.
 */
export class Transport {
  readonly #config: ClusterConfig;
  readonly #options: TransportOptions;
  readonly #exchange: Exchange;
  readonly #host: string;

  /** @throws {ConfigError} when the proxy URL or TLS material is unusable. */
  constructor(config: ClusterConfig, options: TransportOptions) {
    this.#config = config;
    this.#options = options;
    const server = new URL(config.server);
    this.#host = server.host;
    const tls = config.clientCert && config.clientKey
      ? { cert: config.clientCert, key: config.clientKey }
      : {};
    const proxy = config.proxyUrl ? { proxy: proxyOf(config.proxyUrl, config.source) } : {};
    const httpOptions: Deno.CreateHttpClientOptions = {
      ...(config.caCert ? { caCerts: [config.caCert] } : {}),
      ...proxy,
      ...tls,
    };
    try {
      if (config.proxyUrl) {
        this.#exchange = new FetchExchange(config.server, options.userAgent, httpOptions);
      } else {
        // Deno reads the PEM for an HttpClient as for connectTls: a CA or key it cannot use is
        // refused here, once, instead of at every request.
        Deno.createHttpClient(httpOptions).close();
        this.#exchange = new Http1Client({
          server,
          userAgent: options.userAgent,
          ...(config.caCert ? { caCert: config.caCert } : {}),
          ...(config.tlsServerName ? { serverName: config.tlsServerName } : {}),
          ...(config.clientCert && config.clientKey
            ? { clientCert: config.clientCert, clientKey: config.clientKey }
            : {}),
        });
      }
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
      const text = await this.#read(spec, signal, () => response.text());
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
      const response = await this.#send(spec, signal);
      await this.#read(spec, signal, () => response.discard());
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
    return response.stream(spec.signal);
  }

  /** Closes every connection, streams included. */
  close(): void {
    this.#exchange.close();
  }

  /**
   * Sends later requests over new connections; requests in flight finish on
   * the old ones, which close after them. The pool reuses an idle connection
   * for the next request, so a connection that went silent without being
   * closed (a NAT or firewall that forgot it) would otherwise swallow later
   * requests too: call this when a request or watch got no answer in time.
   */
  resetConnections(): void {
    this.#exchange.resetConnections();
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
    using timeout = deadline(this.#options.clock, this.#options.timeoutMs, spec.signal);
    try {
      return await run(timeout.signal);
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
  async #send(spec: RequestSpec, signal: AbortSignal): Promise<IncomingResponse> {
    const target = spec.query?.size ? `${spec.path}?${spec.query}` : spec.path;
    const accept = spec.accept ?? "application/json";
    for (let attempt = 1;; attempt++) {
      const token = await this.#config.auth.token(signal);
      const request: OutgoingRequest = {
        method: spec.method,
        target,
        accept,
        token: token || undefined,
        contentType: spec.contentType,
        body: spec.body,
      };
      const started = performance.now();
      let response: IncomingResponse;
      try {
        response = await this.#exchange.send(request, signal);
      } catch (e) {
        this.#observe(spec, "<error>", started);
        if (signal.aborted) throw e;
        throw this.#connectError(spec, e);
      }
      const { status } = response;
      this.#observe(spec, String(status), started);
      if (status >= 200 && status < 300) return response;
      if (status === 401 && token && attempt === 1) {
        // The token may have expired or rotated: ask the source for a fresh one, once. A
        // failure to read the refusal costs only its connection.
        await response.discard().catch(() => {});
        this.#config.auth.invalidate();
        continue;
      }
      if (
        status === 403 && token && attempt === 1 &&
        await this.#config.auth.rotated?.(token, signal)
      ) {
        // RBAC answered for the old token's user; the file now names another.
        await response.discard().catch(() => {});
        continue;
      }
      const text = await this.#read(spec, signal, () => response.text());
      const answer = { status, statusText: response.statusText, headers: response.headers() };
      throw apiErrorFromResponse(answer, text, {
        verb: spec.verb,
        path: spec.path,
        ...(status === 401 ? { hint: this.#unauthorizedHint(Boolean(token)) } : {}),
        // An admission policy's or webhook's 403 says itself who refused and why.
        ...(status === 403 && RBAC_DENIAL.test(text) ? { hint: this.#forbiddenHint() } : {}),
      });
    }
  }

  async #read<T>(spec: RequestSpec, signal: AbortSignal, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (e) {
      if (signal.aborted) throw e;
      throw new TransportError(
        `${spec.verb} ${spec.path}: reading the answer failed: ${describeError(e)}`,
        { cause: e },
      );
    }
  }

  #connectError(spec: RequestSpec, e: unknown): Error {
    // A permission denial is final: retrying cannot widen Deno's grants.
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) return e;
    const reason = describeError(e);
    const where = `${spec.verb} ${spec.path}: cannot reach ${this.#config.server}`;
    // A connection closed under the request (a restarting server, a proxy, a cut network)
    // says "TLS" when it was encrypted, but no certificate can help it.
    if (
      e instanceof Deno.errors.UnexpectedEof || e instanceof Deno.errors.ConnectionReset ||
      /close_notify|connection reset|broken pipe/i.test(reason)
    ) {
      const closed = `the connection closed before the answer came (${reason}); the API ` +
        "server or something on the way to it closed it";
      return new TransportError(`${where}: ${closed}`, {
        cause: e,
        server: this.#config.server,
        reason: closed,
      });
    }
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
