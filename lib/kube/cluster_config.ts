/**
 * What a loaded configuration is: where the API server is and how to
 * authenticate to it. `loadConfig` of `config.ts` makes one from a kubeconfig
 * or the in-cluster service account, each read by a module of its own that
 * returns this shape.
 *
 * @module
 */
import type { TokenSource } from "./token_source.ts";

/** Everything a {@link KubeClient} needs to reach and authenticate to one API server. */
export interface ClusterConfig {
  /** Base URL, without a trailing slash, e.g. `https://10.0.0.1:6443`. */
  server: string;
  /**
   * PEM of the CA that signed the server certificate, trusted besides Deno's
   * certificate stores (none in kinglet's launchers: see `DENO_TLS_CA_STORE`).
   */
  caCert?: string;
  /**
   * Set when the kubeconfig asks to skip server certificate verification.
   * Deno can only do that process-wide (`--unsafely-ignore-certificate-errors`),
   * so the client reports a certificate failure as a {@link ConfigError} that says so.
   */
  insecureSkipTLSVerify?: boolean;
  /**
   * `tls-server-name` of the cluster: the name the server's certificate is
   * verified against (and sent as SNI) instead of the host of {@link server},
   * e.g. for a server reached by an address its certificate does not name.
   * Works with a bearer token; Deno cannot present a client certificate with it.
   */
  tlsServerName?: string;
  /** PEM client certificate (chain) for mTLS. */
  clientCert?: string;
  /** PEM private key of {@link clientCert}. */
  clientKey?: string;
  /** `proxy-url` of the cluster: an http(s):// or socks5:// proxy. */
  proxyUrl?: string;
  /** Where the bearer token comes from, if any (exec plugin, token file, static). */
  auth: TokenSource;
  /** The context's namespace, `"default"` when it sets none. */
  namespace: string;
  /** The kubeconfig context this came from. */
  contextName?: string;
  /** The kubeconfig path(s), separated as in `KUBECONFIG`, or `"in-cluster"`. */
  source: string;
}
