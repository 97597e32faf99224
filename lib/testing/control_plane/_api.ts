/**
 * Just enough of a Kubernetes API client for bringing up the local control
 * plane: JSON requests over mutual TLS with the admin certificate. The real
 * client lives in `lib/kube/`; this one exists so that the control plane does
 * not depend on the code it is used to test.
 *
 * @module
 */

/** PEM file paths of the CA and a client certificate and key. */
export interface TlsFiles {
  ca: string;
  cert: string;
  key: string;
}

/** A response: HTTP status and the parsed JSON body (`undefined` if not JSON). */
export interface ApiResponse {
  status: number;
  body: unknown;
}

/** A minimal API client with a client certificate; close it when done. */
export class ApiClient implements Disposable {
  #server: string;
  #client: Deno.HttpClient;

  private constructor(server: string, client: Deno.HttpClient) {
    this.#server = server;
    this.#client = client;
  }

  /** Reads the PEM files and opens an HTTP client for `server`. */
  static async connect(server: string, tls: TlsFiles): Promise<ApiClient> {
    const [ca, cert, key] = await Promise.all(
      [tls.ca, tls.cert, tls.key].map((path) => Deno.readTextFile(path)),
    );
    const client = Deno.createHttpClient({ caCerts: [ca!], cert: cert!, key: key! });
    return new ApiClient(server, client);
  }

  /**
   * Sends one request, giving up after 10 s. Network errors and timeouts are
   * returned as status 0 so that callers polling a starting server can simply
   * retry; only an abort through `signal` throws.
   */
  async request(
    method: string,
    path: string,
    options: { body?: unknown; signal?: AbortSignal } = {},
  ): Promise<ApiResponse> {
    let response: Response;
    try {
      response = await fetch(`${this.#server}${path}`, {
        method,
        client: this.#client,
        headers: options.body === undefined ? {} : { "content-type": "application/json" },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal
          ? AbortSignal.any([options.signal, AbortSignal.timeout(10_000)])
          : AbortSignal.timeout(10_000),
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      return { status: 0, body: error instanceof Error ? error.message : String(error) };
    }
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Health endpoints answer in plain text.
    }
    return { status: response.status, body };
  }

  /** Closes the underlying HTTP client. */
  [Symbol.dispose](): void {
    this.#client.close();
  }
}
