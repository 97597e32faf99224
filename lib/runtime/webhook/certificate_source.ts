/**
 * Where the webhook server takes its serving certificate from: the current
 * one, and word of each new one. The server waits for the first certificate
 * before it listens and swaps to every later one without dropping a request.
 *
 * What the caller must know:
 *
 * - `current()` is `undefined` until a certificate exists; a source must
 *   then call its listeners once it has one.
 * - Listeners are called with each new certificate, in order; the function
 *   `subscribe` returns stops the calls.
 *
 * @module
 */

/** A serving certificate and its private key, both PEM. */
export interface ServingCertificate {
  /** The certificate chain, PEM, leaf first. */
  cert: string;
  /** The private key, PEM. */
  key: string;
}

/** Hands out the serving certificate and says when it changes. */
export interface CertificateSource {
  /** The certificate to serve now, or `undefined` while there is none yet. */
  current(): ServingCertificate | undefined;
  /** Calls `listener` with each new certificate; returns a function that stops the calls. */
  subscribe(listener: (certificate: ServingCertificate) => void): () => void;
}
