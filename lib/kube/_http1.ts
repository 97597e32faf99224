/**
 * kinglet's HTTP/1.1 client for the API server: a keep-alive pool of
 * connections over `Deno.connect`, `Deno.startTls` and `Deno.connectTls`,
 * in place of `fetch`, whose Headers, streams and abort signals cost about
 * twice the process CPU per request against a real API server.
 *
 * A caller must know:
 * - Each request in flight has a connection of its own; idle ones are reused
 *   most recent first, and one idle for longer than `idleMs` (30 s, a third of
 *   the API server's 90 s) is closed the next time the pool is used rather
 *   than by a timer, which would keep the process alive. An idle connection
 *   keeps a read posted (not keeping the process alive either), so one that
 *   the server or the network closes while it waits leaves the pool at once:
 *   after a network cut, the next requests open new connections instead of
 *   failing one by one on the dead ones.
 * - A request that fails on a reused connection before a byte of the answer
 *   arrived (the server closed it while idle) is sent once more on a new
 *   connection; a POST only when it could not be written, since a create the
 *   server took but did not answer must not be made twice (Go's rule too).
 *   Nothing else is retried.
 * - TLS without a client certificate goes over `Deno.connect` with
 *   TCP_NODELAY and `Deno.startTls`. `Deno.startTls` cannot present a client
 *   certificate (Deno 2.9 drops `cert` and `key`), so mTLS uses
 *   `Deno.connectTls`, which leaves Nagle on and sends the handshake's last
 *   flight alone: the first request on each new connection then waits for
 *   the server's delayed ACK (about 45 ms from kube-apiserver on loopback;
 *   `fetch` sends that flight with the request and did not wait). Head and
 *   body always go out in one write, so no later request waits.
 * - A streamed body's connection is closed when the stream ends, never pooled.
 *
 * @module
 */
import type { Exchange, IncomingResponse, OutgoingRequest } from "./_exchange.ts";
import {
  ClosedBeforeAnswer,
  headerValues,
  Http1Connection,
  type ResponseHead,
} from "./_http1_connection.ts";

/** Where the client connects and what it presents. */
export interface Http1Options {
  /** An `https:` or `http:` URL; its path, if any, prefixes every request's. */
  server: URL;
  /** PEM of the CA to trust besides Deno's certificate stores. */
  caCert?: string;
  /** PEM client certificate and key for mTLS. */
  clientCert?: string;
  clientKey?: string;
  /**
   * The name to verify the server's certificate against and send as SNI,
   * instead of `server`'s host (a kubeconfig's `tls-server-name`). Not with
   * a client certificate: `Deno.connectTls`, the only way to present one,
   * connects to the name it verifies.
   */
  serverName?: string;
  userAgent: string;
  /** Idle time after which a pooled connection is closed. @default {30000} */
  idleMs?: number;
}

/** What a response gives back to its pool once its body is done. */
interface Returns {
  release(conn: Http1Connection, keepAlive: boolean): void;
  drop(conn: Http1Connection): void;
}

const encoder = new TextEncoder();
const NON_ASCII = /[\u0080-\uffff]/;
/** A request target that needs no escaping: printable ASCII, no spaces. */
const PLAIN_TARGET = /^[\x21-\x7e]*$/;
const LINE_BREAK = /[\r\n\0]/;

/** A pool of HTTP/1.1 connections to one server. */
export class Http1Client implements Exchange {
  readonly #connect: () => Promise<Deno.Conn>;
  /** The headers every request carries, ready to append. */
  readonly #fixedHeaders: string;
  readonly #basePath: string;
  readonly #idleMs: number;
  /** Idle connections, the most recently used last: taken from the end, aged out from the start. */
  readonly #idle: Http1Connection[] = [];
  /** Connections carrying an exchange or a stream, for {@link close}. */
  readonly #busy = new Set<Http1Connection>();
  /** Bumped by {@link resetConnections}: a connection of an older generation is not pooled again. */
  #generation = 0;
  #closed = false;
  readonly #returns: Returns = {
    release: (conn, keepAlive) => this.#release(conn, keepAlive),
    drop: (conn) => {
      this.#busy.delete(conn);
      conn.close();
    },
  };

  constructor(options: Http1Options) {
    this.#connect = connector(options);
    this.#fixedHeaders = `Host: ${options.server.host}\r\nUser-Agent: ${options.userAgent}\r\n`;
    this.#basePath = options.server.pathname.replace(/\/+$/, "");
    this.#idleMs = options.idleMs ?? 30_000;
  }

  async send(request: OutgoingRequest, signal: AbortSignal): Promise<IncomingResponse> {
    signal.throwIfAborted();
    if (this.#closed) throw new Error("the client is closed");
    const bytes = encoder.encode(this.#head(request));
    for (let mayRetry = true;; mayRetry = false) {
      // A retry goes on a new connection: the idle ones may have been closed together.
      const conn = (mayRetry ? this.#takeIdle() : undefined) ?? await this.#open(signal);
      const onAbort = () => conn.close();
      signal.addEventListener("abort", onAbort);
      let written = false;
      try {
        await conn.write(bytes);
        written = true;
        const head = await conn.readHead(request.method !== "HEAD");
        return new Http1Response(this.#returns, conn, head, signal, onAbort);
      } catch (e) {
        signal.removeEventListener("abort", onAbort);
        this.#returns.drop(conn);
        if (signal.aborted) throw signal.reason;
        const replayable = !written || request.method !== "POST";
        if (mayRetry && replayable && conn.served > 0 && !conn.answered && closedUnderUs(e)) {
          continue;
        }
        throw e;
      }
    }
  }

  resetConnections(): void {
    this.#generation++;
    this.#closeIdle();
  }

  close(): void {
    this.#closed = true;
    this.resetConnections();
    for (const conn of this.#busy) conn.close();
    this.#busy.clear();
  }

  #head(r: OutgoingRequest): string {
    let target = this.#basePath + r.target;
    // fetch escaped what a URL may not hold; paths and queries built by the client never need it.
    if (!PLAIN_TARGET.test(target)) {
      const url = new URL(target, "http://h");
      target = url.pathname + url.search;
    }
    let head = `${r.method} ${target} HTTP/1.1\r\n${this.#fixedHeaders}Accept: ${r.accept}\r\n`;
    if (r.token !== undefined) {
      if (LINE_BREAK.test(r.token)) throw new TypeError("The bearer token holds a line break");
      head += `Authorization: Bearer ${r.token}\r\n`;
    }
    if (r.body === undefined) return `${head}\r\n`;
    if (r.contentType !== undefined) head += `Content-Type: ${r.contentType}\r\n`;
    const length = NON_ASCII.test(r.body) ? encoder.encode(r.body).length : r.body.length;
    return `${head}Content-Length: ${length}\r\n\r\n${r.body}`;
  }

  #closeIdle(): void {
    for (const conn of this.#idle) conn.close();
    this.#idle.length = 0;
  }

  #takeIdle(): Http1Connection | undefined {
    for (let conn = this.#idle.pop(); conn !== undefined; conn = this.#idle.pop()) {
      // Closed while it waited: by the server, or by a cut that closed the others too.
      if (conn.closed) continue;
      if (performance.now() - conn.idleSince > this.#idleMs) {
        // The freshest is too old, so are the others.
        conn.close();
        this.#closeIdle();
        return undefined;
      }
      conn.wake();
      this.#busy.add(conn);
      return conn;
    }
    return undefined;
  }

  async #open(signal: AbortSignal): Promise<Http1Connection> {
    const generation = this.#generation;
    const opening = this.#connect();
    // Neither Deno.connect nor a handshake takes a signal: stop waiting, and close what arrives late.
    const { promise: aborted, reject } = Promise.withResolvers<never>();
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    let socket: Deno.Conn;
    try {
      socket = await Promise.race([opening, aborted]);
    } catch (e) {
      if (signal.aborted) opening.then((late) => late.close(), () => {});
      throw e;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
    const conn = new Http1Connection(socket, generation);
    if (this.#closed) {
      conn.close();
      throw new Error("the client is closed");
    }
    this.#busy.add(conn);
    return conn;
  }

  #release(conn: Http1Connection, keepAlive: boolean): void {
    this.#busy.delete(conn);
    if (
      !keepAlive || conn.closed || conn.hasUnreadBytes || this.#closed ||
      conn.generation !== this.#generation
    ) {
      conn.close();
      return;
    }
    conn.served++;
    const now = performance.now();
    conn.idleSince = now;
    conn.rest();
    this.#idle.push(conn);
    while (this.#idle.length > 1 && now - this.#idle[0]!.idleSince > this.#idleMs) {
      this.#idle.shift()!.close();
    }
  }
}

/** An answer on a pooled connection; the request's abort listener stays on until the body is read. */
class Http1Response implements IncomingResponse {
  readonly #returns: Returns;
  readonly #conn: Http1Connection;
  readonly #head: ResponseHead;
  readonly #signal: AbortSignal;
  readonly #onAbort: () => void;

  constructor(
    returns: Returns,
    conn: Http1Connection,
    head: ResponseHead,
    signal: AbortSignal,
    onAbort: () => void,
  ) {
    this.#returns = returns;
    this.#conn = conn;
    this.#head = head;
    this.#signal = signal;
    this.#onAbort = onAbort;
  }

  get status(): number {
    return this.#head.status;
  }

  get statusText(): string {
    return this.#head.statusText;
  }

  headers(): Headers {
    return new Headers(headerValues(this.#head.lines));
  }

  async text(): Promise<string> {
    try {
      const text = await this.#conn.text();
      this.#done(true);
      return text;
    } catch (e) {
      throw this.#failed(e);
    }
  }

  async discard(): Promise<void> {
    try {
      while (await this.#conn.piece());
      this.#done(true);
    } catch (e) {
      throw this.#failed(e);
    }
  }

  stream(signal?: AbortSignal): ReadableStream<Uint8Array> {
    this.#signal.removeEventListener("abort", this.#onAbort);
    const conn = this.#conn;
    const returns = this.#returns;
    const onAbort = () => conn.close();
    const finish = () => {
      signal?.removeEventListener("abort", onAbort);
      returns.drop(conn);
    };
    if (signal?.aborted) conn.close();
    else signal?.addEventListener("abort", onAbort, { once: true });
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const piece = await conn.piece();
          if (piece === null) {
            finish();
            controller.close();
          } else {
            // A copy: the reader may keep it past the next read into the buffer.
            controller.enqueue(piece.slice());
          }
        } catch (e) {
          finish();
          controller.error(signal?.aborted ? signal.reason : e);
        }
      },
      cancel: finish,
    }, { highWaterMark: 0 });
  }

  #done(keepAlive: boolean): void {
    this.#signal.removeEventListener("abort", this.#onAbort);
    this.#returns.release(this.#conn, keepAlive && this.#head.keepAlive);
  }

  #failed(e: unknown): unknown {
    this.#signal.removeEventListener("abort", this.#onAbort);
    this.#returns.drop(this.#conn);
    return this.#signal.aborted ? this.#signal.reason : e;
  }
}

/** Whether `e` says the server closed or reset the connection. */
function closedUnderUs(e: unknown): boolean {
  return e instanceof ClosedBeforeAnswer || e instanceof Deno.errors.ConnectionReset ||
    e instanceof Deno.errors.BrokenPipe || e instanceof Deno.errors.UnexpectedEof ||
    e instanceof Deno.errors.ConnectionAborted;
}

/** Opens a connection to the server, with TCP_NODELAY wherever Deno lets us set it. */
function connector(options: Http1Options): () => Promise<Deno.Conn> {
  const { server, clientCert: cert, clientKey: key } = options;
  const hostname = server.hostname.replace(/^\[(.*)\]$/, "$1");
  const https = server.protocol === "https:";
  const port = Number(server.port) || (https ? 443 : 80);
  const caCerts = options.caCert ? [options.caCert] : [];
  const tcp = async () => {
    const conn = await Deno.connect({ hostname, port });
    conn.setNoDelay(true);
    return conn;
  };
  if (!https) return tcp;
  // A handshake now, so that a TLS failure is a failure to connect, never taken for a closed idle one.
  const handshake = async (conn: Deno.TlsConn) => {
    try {
      await conn.handshake();
      return conn;
    } catch (e) {
      conn.close();
      throw e;
    }
  };
  if (cert && key) {
    if (options.serverName !== undefined) {
      throw new TypeError(
        "Cannot verify the server by another name while presenting a client certificate",
      );
    }
    return async () => handshake(await Deno.connectTls({ hostname, port, caCerts, cert, key }));
  }
  const serverName = options.serverName ?? hostname;
  return async () => handshake(await Deno.startTls(await tcp(), { hostname: serverName, caCerts }));
}
