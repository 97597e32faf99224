/**
 * A loopback TCP server whose every connection is answered by a script
 * written at the byte level, for the wire cases of kinglet's HTTP/1.1
 * client that `Deno.serve` will not produce on demand: answers split across
 * writes, a close mid-body, a kept connection closed while idle.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One accepted connection, as its script sees it. */
export class Peer {
  readonly #conn: Deno.Conn;
  #pending = "";

  constructor(conn: Deno.TcpConn) {
    // Each write its own segment, so that a slow write reaches the client as many reads.
    conn.setNoDelay(true);
    this.#conn = conn;
  }

  /** The next request's head and body, or `null` once the client closed the connection. */
  async request(): Promise<{ head: string; body: string } | null> {
    for (;;) {
      const end = this.#pending.indexOf("\r\n\r\n");
      if (end !== -1) {
        const head = this.#pending.slice(0, end);
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (this.#pending.length >= end + 4 + length) {
          const body = this.#pending.slice(end + 4, end + 4 + length);
          this.#pending = this.#pending.slice(end + 4 + length);
          return { head, body };
        }
      }
      const more = await this.#read();
      if (more === null) return null;
      this.#pending += more;
    }
  }

  /** Writes `text` as it is, in one write. */
  async write(text: string): Promise<void> {
    const bytes = encoder.encode(text);
    for (let at = 0; at < bytes.length;) at += await this.#conn.write(bytes.subarray(at));
  }

  /** Writes `text` `step` bytes at a time, a millisecond apart, cutting lines and characters. */
  async writeSlowly(text: string, step: number): Promise<void> {
    const bytes = encoder.encode(text);
    for (let at = 0; at < bytes.length; at += step) {
      await this.#conn.write(bytes.subarray(at, at + step));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  /** Resolves once the client closed its end (or reset it). */
  async closedByClient(): Promise<void> {
    while (await this.#read() !== null);
  }

  close(): void {
    try {
      this.#conn.close();
    } catch {
      // Closed already.
    }
  }

  async #read(): Promise<string | null> {
    const buf = new Uint8Array(16 * 1024);
    const n = await this.#conn.read(buf).catch(() => null);
    return n === null ? null : decoder.decode(buf.subarray(0, n));
  }
}

/** Listens on loopback and runs `script` for each connection, then closes it. */
export function rawServer(script: (peer: Peer, index: number) => Promise<void>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const scripts: Promise<void>[] = [];
  let accepted = 0;
  let finished = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      const peer = new Peer(conn);
      scripts.push(
        script(peer, accepted++).finally(() => {
          peer.close();
          finished++;
        }),
      );
    }
  })();
  return {
    url: `http://127.0.0.1:${listener.addr.port}`,
    /** Connections accepted so far. */
    get accepted(): number {
      return accepted;
    },
    /** Connections whose script ended, and which the server then closed. */
    get finished(): number {
      return finished;
    },
    /** Stops listening and waits for every script to end. */
    async [Symbol.asyncDispose](): Promise<void> {
      listener.close();
      await accepting;
      await Promise.all(scripts);
    },
  };
}

/** An answer with a `Content-Length` body. */
export function answer(body: string, headers = ""): string {
  return `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n${headers}` +
    `Content-Length: ${encoder.encode(body).length}\r\n\r\n${body}`;
}
