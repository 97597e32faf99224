/**
 * What the transport asks of an HTTP client, so that one transport drives
 * either kinglet's own HTTP/1.1 client (`_http1.ts`, every server reached
 * directly) or Deno's `fetch` (`_fetch_exchange.ts`, a server behind a
 * `proxy-url`).
 *
 * A caller must know: the `signal` given to {@link Exchange.send} covers the
 * exchange until the body is read ({@link IncomingResponse.text},
 * {@link IncomingResponse.discard}) or handed over
 * ({@link IncomingResponse.stream}, which takes a signal of its own), and
 * every response's body must be read, discarded or streamed, or its
 * connection is never freed.
 *
 * @module
 */

/** One request, as the transport describes it to the HTTP client. */
export interface OutgoingRequest {
  method: string;
  /** Path and query, appended to the server URL. */
  target: string;
  accept: string;
  /** The bearer token, when there is one. */
  token?: string;
  contentType?: string;
  body?: string;
}

/** An answer whose head arrived and whose body is still to be read. */
export interface IncomingResponse {
  readonly status: number;
  readonly statusText: string;
  /** The headers, built when asked: only an error answer needs them. */
  headers(): Headers;
  /** Reads the body to its end as text. */
  text(): Promise<string>;
  /** Drops the body (reading a short one so the connection can serve again). */
  discard(): Promise<void>;
  /**
   * Hands the body over unread. It ends when the server ends it, when the
   * reader cancels it or when `signal` aborts; its connection is then closed.
   */
  stream(signal?: AbortSignal): ReadableStream<Uint8Array>;
}

/** Sends requests to one server. */
export interface Exchange {
  /**
   * Sends the request and resolves once the head of the answer arrived.
   *
   * @throws the signal's reason when it aborts, or what stopped the request
   * (permission, connection, TLS or protocol errors), for the transport to name.
   */
  send(request: OutgoingRequest, signal: AbortSignal): Promise<IncomingResponse>;
  /** Makes later requests open new connections; those in flight close after their answer. */
  resetConnections(): void;
  /** Closes every connection. */
  close(): void;
}
