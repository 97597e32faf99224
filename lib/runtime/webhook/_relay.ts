/**
 * The webhook server's public port: a plain TCP listener that relays each
 * connection, bytes untouched, to the TLS listener serving the current
 * certificate on a loopback port of its own. A new certificate gets a new
 * TLS listener; the relay sends new connections there while the old
 * listener finishes what it began. TLS ends in the listener, so the API
 * server sees the certificate (and negotiates HTTP/2) as if it spoke to it
 * directly.
 *
 * Why not two `Deno.serve`s sharing the port with `reusePort`: in Deno that
 * needs `--unstable-net` for TLS, and outside Linux the option is ignored, so
 * the second listener would fail to bind.
 *
 * @module
 */
import { systemClock } from "../../async/clock.ts";
import { describeError } from "../../kube/errors.ts";
import { logger } from "../../log.ts";

/** How often a connection tries the current target when the one it dialled has just closed. */
const DIAL_ATTEMPTS = 3;

/** Relays connections from one public listener to a target port that may change. */
export class ConnectionRelay {
  readonly #listener: Deno.TcpListener;
  /** Every relayed pair open now; closed together when the relay closes. */
  readonly #open = new Set<Deno.Conn>();
  #target: number;
  #closed = false;

  /** Relays what `listener` accepts to `127.0.0.1:target`. */
  constructor(listener: Deno.TcpListener, target: number) {
    this.#listener = listener;
    this.#target = target;
  }

  /** Where connections accepted from now on go. */
  set target(port: number) {
    this.#target = port;
  }

  /** The public address. */
  get addr(): Deno.NetAddr {
    return this.#listener.addr;
  }

  /** Accepts and relays until {@link close}. */
  async serve(): Promise<void> {
    try {
      for await (const conn of this.#listener) void this.#relay(conn);
    } catch (error) {
      if (!this.#closed) throw error;
    }
  }

  /** Stops accepting; connections still open are closed by {@link closeConnections}. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#listener.close();
  }

  /** Closes every relayed connection still open (once their TLS listener has finished). */
  closeConnections(): void {
    for (const conn of this.#open) closeQuietly(conn);
    this.#open.clear();
  }

  async #relay(client: Deno.Conn): Promise<void> {
    this.#open.add(client);
    let upstream: Deno.Conn | undefined;
    try {
      upstream = await this.#dial();
      this.#open.add(upstream);
      const options = { preventClose: true, preventAbort: true, preventCancel: true };
      // Either side ending ends the pair: HTTP over TLS never relies on a half-closed
      // connection. The other direction then fails on its closed connection, which is no news.
      await Promise.race([
        client.readable.pipeTo(upstream.writable, options).catch(() => {}),
        upstream.readable.pipeTo(client.writable, options).catch(() => {}),
      ]);
    } catch (error) {
      if (!this.#closed) {
        logger("webhook").warn("cannot relay a connection to the TLS listener: {error}", {
          error: describeError(error),
        });
      }
    } finally {
      for (const conn of [client, upstream]) {
        if (!conn) continue;
        this.#open.delete(conn);
        closeQuietly(conn);
      }
    }
  }

  /** A connection to the target; a target closed by a swap meanwhile is retried at the new one. */
  async #dial(): Promise<Deno.Conn> {
    for (let attempt = 1;; attempt++) {
      const port = this.#target;
      try {
        const conn = await Deno.connect({ hostname: "127.0.0.1", port });
        conn.setNoDelay(true);
        return conn;
      } catch (error) {
        if (attempt >= DIAL_ATTEMPTS || this.#closed) throw error;
        if (port === this.#target) await systemClock.sleep(5);
      }
    }
  }
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Closed already, by the other direction or the peer.
  }
}
