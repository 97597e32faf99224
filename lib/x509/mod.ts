/**
 * X.509 certificates made and read with WebCrypto, no `openssl` needed: a
 * self-signed CA ({@link createCertificateAuthority}), the certificates it
 * signs for TLS servers with DNS and IP names ({@link issueServingCertificate})
 * and for clients ({@link issueCertificate}), their validity and names read
 * back ({@link certificateValidity}, {@link inspectCertificate}), a signature
 * checked against a CA ({@link verifyIssuedBy}), and PEM. The webhook
 * server's certificates and the local control plane's are made here.
 *
 * Keys are ECDSA P-256: fast to generate, accepted by Go and by rustls.
 * Every certificate is v3 because Deno's TLS stack (rustls) rejects v1 ones.
 *
 * The DER is written by hand (`_der.ts`, read back by `_der_read.ts`)
 * because the maintained libraries cost more than the lines they would save:
 * importing `@peculiar/x509` (21 packages, and a global `Reflect` polyfill),
 * `pkijs` (5 packages) or `node-forge` (no ECDSA) adds 11 to 15 MiB of RSS
 * to a 34 MiB process and 0.3 to 1 s of import time to every test that
 * loads the test kit, where the two files this module grew from (the DER
 * writer and the local control plane's certificate maker) added 1.6 MiB.
 *
 * @example A CA, a serving certificate, and Deno trusting it
 * ```ts
 * import { createCertificateAuthority, issueServingCertificate, verifyIssuedBy } from "./mod.ts";
 * const ca = await createCertificateAuthority({ commonName: "demo-ca" });
 * const serving = await issueServingCertificate(ca, { ipAddresses: ["127.0.0.1"] });
 * if (!await verifyIssuedBy(serving.cert, ca.cert)) throw new Error("not signed by the CA");
 * const server = Deno.serve({ hostname: "127.0.0.1", port: 0, ...serving, onListen: () => {} }, () => new Response("hi"));
 * const client = Deno.createHttpClient({ caCerts: [ca.cert] });
 * const response = await fetch(`https://127.0.0.1:${server.addr.port}/`, { client });
 * if (await response.text() !== "hi") throw new Error("not served");
 * client.close();
 * await server.shutdown();
 * ```
 *
 * @module
 */
export {
  type CertificateAuthorityOptions,
  type CertificateKeyPair,
  type CertificateOptions,
  createCertificateAuthority,
  type DistinguishedName,
  issueCertificate,
  issueServingCertificate,
  type ServingCertificateOptions,
  type ValidityOptions,
} from "./certificate.ts";
export {
  type CertificateInfo,
  type CertificateValidity,
  certificateValidity,
  inspectCertificate,
  verifyIssuedBy,
} from "./inspect.ts";
export { canonicalIpAddress } from "./ip_address.ts";
export { pemDecode, pemEncode, splitCertificates } from "./pem.ts";
