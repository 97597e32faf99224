/**
 * A TCP proxy on loopback between a client and the API server, which a test
 * uses to take the network away without touching either end:
 *
 * - {@link TcpProxy.cut} closes every connection through it, so requests and
 *   watch streams in flight fail as they would when a cable is pulled;
 * - {@link TcpProxy.hold} keeps new connections waiting (accepted, not
 *   forwarded) until {@link TcpProxy.release};
 * - {@link TcpProxy.stall} freezes the open connections without closing them,
 *   the silent failure of a NAT or firewall that forgot a connection;
 * - {@link TcpProxy.delay} adds latency to every byte from then on.
 *
 * TLS passes through untouched; the test cluster's serving certificate is
 * valid for 127.0.0.1 on any port.
 *
 * @module
 */
import { type ClientOptions, KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { testKubeconfig } from "../_support/cluster.ts";

interface Link {
  client: Deno.Conn;
  upstream?: Deno.Conn;
  cut: boolean;
  /** Set by {@link TcpProxy.stall}: nothing passes any more, until the link is cut. */
  frozen: boolean;
  /** Resolves when the link is cut, which is what frozen pumps wait for. */
  ended: PromiseWithResolvers<void>;
}

/** Forwards loopback connections to one server; see the module documentation. */
export class TcpProxy implements AsyncDisposable {
  readonly #listener: Deno.TcpListener;
  readonly #target: { hostname: string; port: number };
  readonly #links = new Set<Link>();
  readonly #serving = new Set<Promise<void>>();
  readonly #accepting: Promise<void>;
  readonly #closed = Promise.withResolvers<void>();
  #held: PromiseWithResolvers<void> | undefined;
  #delayMs = 0;
  /** Connections accepted so far. */
  accepted = 0;
  /** Connections waiting for {@link release}. */
  waiting = 0;

  /** Listens on a free loopback port and forwards to `server` (an https:// URL). */
  constructor(server: string) {
    const url = new URL(server);
    this.#target = { hostname: url.hostname, port: Number(url.port || 443) };
    this.#listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.#accepting = this.#accept();
  }

  /** The server URL to give a client. */
  get url(): string {
    return `https://127.0.0.1:${this.#listener.addr.port}`;
  }

  /** Connections open right now, frozen ones included. */
  get open(): number {
    return this.#links.size;
  }

  /** Closes every connection through the proxy, waiting and frozen ones included. */
  cut(): void {
    for (const link of this.#links) {
      link.cut = true;
      link.ended.resolve();
      quietly(() => link.client.close());
      if (link.upstream) quietly(() => link.upstream!.close());
    }
  }

  /** Keeps new connections waiting until {@link release}. */
  hold(): void {
    this.#held ??= Promise.withResolvers<void>();
  }

  /** Forwards the waiting connections and every new one. */
  release(): void {
    this.#held?.resolve();
    this.#held = undefined;
  }

  /**
   * Freezes every open connection: from now on no byte passes either way and
   * neither end is told, until {@link cut} or {@link close}. Connections
   * opened later pass as usual. Returns how many were frozen.
   */
  stall(): number {
    for (const link of this.#links) link.frozen = true;
    return this.#links.size;
  }

  /**
   * Delays every chunk read from now on by `ms` in each direction, keeping
   * their order; `0` ends the delay.
   *
   * @throws {RangeError} when `ms` is negative.
   */
  delay(ms: number): void {
    if (!(ms >= 0)) {
      throw new RangeError(`Cannot delay the proxy: 'ms' must be 0 or more, got ${ms}`);
    }
    this.#delayMs = ms;
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    quietly(() => this.#listener.close());
    this.#closed.resolve();
    this.cut();
    await this.#accepting;
    await Promise.allSettled([...this.#serving]);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #accept(): Promise<void> {
    try {
      for await (const conn of this.#listener) {
        this.accepted++;
        const serving = this.#serve(conn).finally(() => this.#serving.delete(serving));
        this.#serving.add(serving);
      }
    } catch {
      // The listener was closed.
    }
  }

  async #serve(client: Deno.Conn): Promise<void> {
    const link: Link = { client, cut: false, frozen: false, ended: Promise.withResolvers() };
    this.#links.add(link);
    try {
      const held = this.#held;
      if (held) {
        this.waiting++;
        await Promise.race([held.promise, this.#closed.promise]).finally(() => this.waiting--);
      }
      if (link.cut) return;
      const upstream = await Deno.connect(this.#target);
      link.upstream = upstream;
      if (link.cut) return;
      const pumps = [this.#pump(link, client, upstream), this.#pump(link, upstream, client)];
      // Either side ending ends the link; closing both then settles the other pump.
      await Promise.race(pumps).catch(() => {});
      quietly(() => client.close());
      quietly(() => upstream.close());
      await Promise.allSettled(pumps);
    } catch {
      // A connection failed or was cut; the client sees it as such.
    } finally {
      link.ended.resolve();
      quietly(() => client.close());
      if (link.upstream) quietly(() => link.upstream!.close());
      this.#links.delete(link);
    }
  }

  /** Copies `from` to `to` until either ends, delaying chunks and stopping when frozen. */
  async #pump(link: Link, from: Deno.Conn, to: Deno.Conn): Promise<void> {
    const reader = from.readable.getReader();
    const writer = to.writable.getWriter();
    // Chunks wait here for their due time, in order, while reading goes on.
    let delivered = Promise.resolve();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || link.cut) break;
        if (link.frozen) {
          await link.ended.promise;
          break;
        }
        const due = performance.now() + this.#delayMs;
        delivered = delivered.then(async () => {
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          if (link.frozen) await link.ended.promise;
          if (!link.cut) await writer.write(value);
        }).catch(() => reader.cancel().catch(() => {}));
      }
      await delivered;
    } finally {
      quietly(() => reader.releaseLock());
      quietly(() => writer.releaseLock());
    }
  }
}

/** An admin client of the test cluster whose every connection goes through `proxy`. */
export async function clientThrough(
  proxy: TcpProxy,
  options: ClientOptions = {},
): Promise<KubeClient> {
  const config = await loadConfig({ kubeconfig: testKubeconfig() });
  return new KubeClient({ ...config, server: proxy.url }, options);
}

/** The admin kubeconfig's API server URL. */
export async function apiServerUrl(): Promise<string> {
  return (await loadConfig({ kubeconfig: testKubeconfig() })).server;
}

function quietly(close: () => void): void {
  try {
    close();
  } catch {
    // Already closed or released.
  }
}
