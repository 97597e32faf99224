/**
 * Requests through Deno's `fetch` and a `Deno.HttpClient`: the way to an API
 * server behind a kubeconfig's `proxy-url` (http, https or socks5), which
 * kinglet's own HTTP/1.1 client (`_http1.ts`) does not speak. Rare at the
 * edge, so its extra CPU per request is accepted there.
 *
 * A caller must know: the client is HTTP/1.1 only (over HTTP/2 a request's
 * DATA frame waits behind its HEADERS frame for the server's delayed ACK,
 * as fetch leaves TCP_NODELAY off), and the constructor throws what
 * `Deno.createHttpClient` throws for unusable TLS material.
 *
 * @module
 */
import type { Exchange, IncomingResponse, OutgoingRequest } from "./_exchange.ts";
import { ConfigError } from "./errors.ts";

/** Exchanges over one `Deno.HttpClient`, replaced by {@link FetchExchange.resetConnections}. */
export class FetchExchange implements Exchange {
  readonly #server: string;
  readonly #userAgent: string;
  readonly #options: Deno.CreateHttpClientOptions;
  #http: Deno.HttpClient;

  /** @throws what `Deno.createHttpClient` throws for unusable TLS material or proxy. */
  constructor(server: string, userAgent: string, options: Deno.CreateHttpClientOptions) {
    this.#server = server;
    this.#userAgent = userAgent;
    this.#options = { ...options, http1: true, http2: false };
    this.#http = Deno.createHttpClient(this.#options);
  }

  async send(request: OutgoingRequest, signal: AbortSignal): Promise<IncomingResponse> {
    const headers = new Headers({ "accept": request.accept, "user-agent": this.#userAgent });
    if (request.token !== undefined) headers.set("authorization", `Bearer ${request.token}`);
    if (request.contentType) headers.set("content-type", request.contentType);
    const response = await fetch(this.#server + request.target, {
      method: request.method,
      headers,
      body: request.body ?? null,
      signal,
      client: this.#http,
    });
    return {
      status: response.status,
      statusText: response.statusText,
      headers: () => response.headers,
      text: () => response.text(),
      discard: async () => await response.body?.cancel(),
      // fetch's own signal already covers the body.
      stream: () => response.body ?? ReadableStream.from<Uint8Array>([]),
    };
  }

  resetConnections(): void {
    const old = this.#http;
    this.#http = Deno.createHttpClient(this.#options);
    old.close();
  }

  close(): void {
    this.#http.close();
  }
}

/**
 * The proxy of a kubeconfig's `proxy-url`.
 *
 * @throws {ConfigError} for a scheme Deno cannot proxy through.
 */
export function proxyOf(url: string, source: string): Deno.Proxy {
  const scheme = url.slice(0, url.indexOf(":")).toLowerCase();
  if (scheme === "http" || scheme === "https") return { transport: scheme, url };
  if (scheme === "socks5" || scheme === "socks5h") return { transport: "socks5", url };
  throw new ConfigError(
    `Invalid proxy-url ${
      JSON.stringify(url)
    } in ${source}: use an http://, https:// or socks5:// URL`,
  );
}
