/**
 * Making X.509 v3 certificates with WebCrypto: a self-signed certificate
 * authority, and certificates it signs for TLS servers (with DNS and IP
 * subject alternative names) and clients (with the organizations Kubernetes
 * reads as groups).
 *
 * What the caller must know:
 *
 * - Keys are ECDSA P-256 (fast to make, accepted by Go and by rustls), PEM
 *   PKCS #8; a CA given back to {@link issueCertificate} must hold one.
 * - Every certificate is v3 with the extensions rustls and Go check (rustls
 *   refuses v1): basic constraints, key usage, extended key usage, key
 *   identifiers. Validity starts `backdateMs` before `now` so that a clock
 *   a little behind still accepts it, and an issued certificate never
 *   outlives its CA: its end is cut to the CA's.
 * - Nothing here reads the system clock but the defaults of `now`: pass it
 *   to make certificates on a test's clock.
 *
 * @example
 * ```ts
 * import { createCertificateAuthority, issueServingCertificate } from "./certificate.ts";
 * const ca = await createCertificateAuthority({ commonName: "demo-ca" });
 * const serving = await issueServingCertificate(ca, { dnsNames: ["demo.default.svc"], ipAddresses: ["127.0.0.1"] });
 * serving.cert.startsWith("-----BEGIN CERTIFICATE-----"); // true
 * ```
 *
 * @module
 */
import {
  bitString,
  booleanTrue,
  explicit,
  implicit,
  integer,
  octetString,
  oid,
  OIDS,
  sequence,
  set,
  time,
  utf8String,
} from "./_der.ts";
import { isAuthority, parseCertificate, readChildren, readTlv } from "./_der_read.ts";
import { ipAddressBytes } from "./ip_address.ts";
import { pemDecode, pemEncode } from "./pem.ts";

/** A certificate and its private key, both PEM. */
export interface CertificateKeyPair {
  /** The certificate, PEM. */
  cert: string;
  /** Its private key, PEM PKCS #8. */
  key: string;
}

/** Whom a certificate names: `CN=…` and, for a client of Kubernetes, its groups as `O=…`. */
export interface DistinguishedName {
  /** `CN=…`: the user name Kubernetes reads from a client certificate. */
  commonName: string;
  /** Organizations, written before the common name; Kubernetes reads them as groups. */
  organizations?: readonly string[];
}

/** When a certificate is valid. */
export interface ValidityOptions {
  /** The moment of issue, in Unix milliseconds. @default Date.now() */
  now?: number;
  /** How long it is valid after `now`. Defaults to 365 days for a CA, 90 days otherwise. */
  lifetimeMs?: number;
  /** How long before `now` it is already valid. @default 3_600_000 (an hour) */
  backdateMs?: number;
}

/** Options of {@link createCertificateAuthority}. */
export interface CertificateAuthorityOptions extends ValidityOptions {
  /** The CA's common name. @default "kinglet-ca" */
  commonName?: string;
}

/** Options of {@link issueCertificate}. */
export interface CertificateOptions extends ValidityOptions {
  /** Whom it names. */
  subject: DistinguishedName;
  /** What the key may authenticate: a TLS server or a TLS client. */
  usage: "serverAuth" | "clientAuth";
  /** DNS subject alternative names; `*.` wildcards allowed. @default [] */
  dnsNames?: readonly string[];
  /** IPv4 or IPv6 subject alternative names. @default [] */
  ipAddresses?: readonly string[];
}

/** Options of {@link issueServingCertificate}: the names clients reach the server by. */
export interface ServingCertificateOptions extends ValidityOptions {
  /** DNS names, e.g. `<service>.<namespace>.svc`. @default [] */
  dnsNames?: readonly string[];
  /** IP addresses, e.g. `127.0.0.1`. @default [] */
  ipAddresses?: readonly string[];
  /** The subject's common name, which clients ignore. @default the first DNS name, else the first address */
  commonName?: string;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const ECDSA_WITH_SHA256 = sequence(oid(OIDS.ecdsaWithSha256));
const EC_KEY: EcKeyImportParams = { name: "ECDSA", namedCurve: "P-256" };
const KEY_USAGE = { digitalSignature: 0x80, keyCertSign: 0x04, cRLSign: 0x02 };
const USAGES = { serverAuth: "1.3.6.1.5.5.7.3.1", clientAuth: "1.3.6.1.5.5.7.3.2" };
const DNS_NAME =
  /^(\*\.)?[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*$/;

/** A certificate that signs others: its subject, key identifier, signing key and end. */
interface Issuer {
  name: Uint8Array;
  keyId: Uint8Array;
  privateKey: CryptoKey;
  /** Unix milliseconds; what it issues ends no later. */
  notAfter?: number;
}

/**
 * A new self-signed certificate authority with a fresh key.
 *
 * @example
 * ```ts
 * import { createCertificateAuthority } from "./certificate.ts";
 * const ca = await createCertificateAuthority({ commonName: "demo-ca", lifetimeMs: 30 * 86_400_000 });
 * ca.key.startsWith("-----BEGIN PRIVATE KEY-----"); // true
 * ```
 *
 * @throws {RangeError} when `lifetimeMs` or `backdateMs` is not a positive (or zero) number.
 */
export async function createCertificateAuthority(
  options: CertificateAuthorityOptions = {},
): Promise<CertificateKeyPair> {
  const validity = validityOf("create the certificate authority", options, 365 * DAY_MS);
  const keys = await generateKeys();
  const name = distinguishedName({ commonName: options.commonName ?? "kinglet-ca" });
  const keyId = await keyIdentifier(
    new Uint8Array(await crypto.subtle.exportKey("spki", keys.publicKey)),
  );
  const issuer: Issuer = { name, keyId, privateKey: keys.privateKey };
  const cert = await sign(name, keys.publicKey, issuer, validity, [
    extension(OIDS.basicConstraints, true, sequence(booleanTrue())),
    keyUsage(KEY_USAGE.digitalSignature | KEY_USAGE.keyCertSign | KEY_USAGE.cRLSign),
    extension("2.5.29.14", false, octetString(keyId)),
  ]);
  return await pair(cert, keys.privateKey);
}

/**
 * A certificate for a TLS server or client with a fresh key, signed by
 * `ca`; its end is cut to the CA's.
 *
 * @example
 * ```ts
 * import { createCertificateAuthority, issueCertificate } from "./certificate.ts";
 * const ca = await createCertificateAuthority();
 * const admin = await issueCertificate(ca, {
 *   subject: { commonName: "admin", organizations: ["system:masters"] },
 *   usage: "clientAuth",
 * });
 * admin.cert.startsWith("-----BEGIN CERTIFICATE-----"); // true
 * ```
 *
 * @throws {TypeError} when `ca` is not a CA certificate with its P-256 key.
 * @throws {RangeError} when a name, an address or a duration is not one.
 */
export async function issueCertificate(
  ca: CertificateKeyPair,
  options: CertificateOptions,
): Promise<CertificateKeyPair> {
  const doing = `issue a certificate for ${JSON.stringify(options.subject.commonName)}`;
  const validity = validityOf(doing, options, 90 * DAY_MS);
  const names = alternativeNames(doing, options.dnsNames ?? [], options.ipAddresses ?? []);
  const issuer = await issuerOf(doing, ca);
  if (issuer.notAfter !== undefined) {
    validity.notAfter = Math.min(validity.notAfter, issuer.notAfter);
  }
  const keys = await generateKeys();
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", keys.publicKey));
  const keyId = await keyIdentifier(spki);
  const cert = await sign(distinguishedName(options.subject), keys.publicKey, issuer, validity, [
    extension(OIDS.basicConstraints, true, sequence()),
    keyUsage(KEY_USAGE.digitalSignature),
    extension("2.5.29.37", false, sequence(oid(USAGES[options.usage]))),
    ...(names ? [extension(OIDS.subjectAltName, false, names)] : []),
    extension("2.5.29.14", false, octetString(keyId)),
    extension("2.5.29.35", false, sequence(implicit(0, issuer.keyId))),
  ]);
  return await pair(cert, keys.privateKey);
}

/**
 * A TLS server certificate signed by `ca` for `dnsNames` and `ipAddresses`,
 * of which there must be at least one: clients check the names, not the
 * common name.
 *
 * @example
 * ```ts
 * import { createCertificateAuthority, issueServingCertificate } from "./certificate.ts";
 * const ca = await createCertificateAuthority();
 * await issueServingCertificate(ca, { ipAddresses: ["127.0.0.1", "::1"], lifetimeMs: 60_000 });
 * ```
 *
 * @throws {RangeError} when neither names nor addresses are given, or one is not valid.
 * @throws {TypeError} when `ca` is not a CA certificate with its P-256 key.
 */
export async function issueServingCertificate(
  ca: CertificateKeyPair,
  options: ServingCertificateOptions,
): Promise<CertificateKeyPair> {
  const dnsNames = options.dnsNames ?? [];
  const ipAddresses = options.ipAddresses ?? [];
  const commonName = options.commonName ?? dnsNames[0] ?? ipAddresses[0];
  if (commonName === undefined) {
    throw new RangeError(
      "Cannot issue a serving certificate: 'dnsNames' and 'ipAddresses' are both empty",
    );
  }
  const { now, lifetimeMs, backdateMs } = options;
  return await issueCertificate(ca, {
    subject: { commonName },
    usage: "serverAuth",
    dnsNames,
    ipAddresses,
    ...(now !== undefined && { now }),
    ...(lifetimeMs !== undefined && { lifetimeMs }),
    ...(backdateMs !== undefined && { backdateMs }),
  });
}

function validityOf(doing: string, options: ValidityOptions, lifetime: number) {
  const { now = Date.now(), lifetimeMs = lifetime, backdateMs = HOUR_MS } = options;
  const check = (name: string, value: number, positive: boolean) => {
    if (!Number.isFinite(value) || value < 0 || (positive && value === 0)) {
      throw new RangeError(
        `Cannot ${doing}: '${name}' must be a ${positive ? "positive" : "non-negative"} ` +
          `number of milliseconds, got ${value}`,
      );
    }
  };
  check("lifetimeMs", lifetimeMs, true);
  check("backdateMs", backdateMs, false);
  check("now", now, false);
  return { notBefore: now - backdateMs, notAfter: now + lifetimeMs };
}

function alternativeNames(doing: string, dns: readonly string[], ips: readonly string[]) {
  const ascii = new TextEncoder();
  const names = dns.map((name) => {
    if (!DNS_NAME.test(name) || name.length > 253) {
      throw new RangeError(
        `Cannot ${doing}: 'dnsNames' holds ${JSON.stringify(name)}, no DNS name`,
      );
    }
    return implicit(2, ascii.encode(name));
  });
  const addresses = ips.map((ip) => {
    try {
      return implicit(7, ipAddressBytes(ip));
    } catch {
      throw new RangeError(
        `Cannot ${doing}: 'ipAddresses' holds ${JSON.stringify(ip)}, no address`,
      );
    }
  });
  return names.length + addresses.length > 0 ? sequence(...addresses, ...names) : undefined;
}

/** The CA of `ca`'s PEM, ready to sign. */
async function issuerOf(doing: string, ca: CertificateKeyPair): Promise<Issuer> {
  const [der] = pemDecode(ca.cert);
  const [key] = pemDecode(ca.key, "PRIVATE KEY");
  if (!der || !key) {
    throw new TypeError(`Cannot ${doing}: 'ca' needs a CERTIFICATE and a PRIVATE KEY in PEM`);
  }
  const parsed = parseCertificate(der);
  if (!isAuthority(parsed)) {
    throw new TypeError(`Cannot ${doing}: 'ca' is not a certificate authority`);
  }
  let privateKey: CryptoKey;
  try {
    privateKey = await crypto.subtle.importKey("pkcs8", key, EC_KEY, false, ["sign"]);
  } catch (cause) {
    throw new TypeError(`Cannot ${doing}: 'ca.key' is not a P-256 key in PKCS #8`, { cause });
  }
  return {
    name: parsed.subject,
    keyId: await keyIdentifier(parsed.spki),
    privateKey,
    notAfter: parsed.notAfter.getTime(),
  };
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return await crypto.subtle.generateKey(EC_KEY, true, ["sign", "verify"]);
}

/** A signed certificate (DER) for `publicKey`. */
async function sign(
  subject: Uint8Array,
  publicKey: CryptoKey,
  issuer: Issuer,
  validity: { notBefore: number; notAfter: number },
  extensions: Uint8Array[],
): Promise<Uint8Array> {
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", publicKey));
  // X.509 times have whole seconds; both round down, so an end cut to the CA's stays within it.
  const notBefore = new Date(Math.floor(validity.notBefore / 1000) * 1000);
  const notAfter = new Date(Math.floor(validity.notAfter / 1000) * 1000);
  const tbs = sequence(
    explicit(0, integer(new Uint8Array([2]))),
    integer(serial),
    ECDSA_WITH_SHA256,
    issuer.name,
    sequence(time(notBefore), time(notAfter)),
    subject,
    spki,
    explicit(3, sequence(...extensions)),
  );
  const signature = new Uint8Array(
    await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, issuer.privateKey, tbs),
  );
  // WebCrypto signs as r‖s; X.509 wants SEQUENCE { r INTEGER, s INTEGER }.
  const half = signature.length / 2;
  const ecdsa = sequence(integer(signature.subarray(0, half)), integer(signature.subarray(half)));
  return sequence(tbs, ECDSA_WITH_SHA256, bitString(ecdsa));
}

/** `O=…` for each organization, then `CN=…`: the groups and user name the API server reads. */
function distinguishedName(name: DistinguishedName): Uint8Array {
  const attribute = (type: string, value: string) => set(sequence(oid(type), utf8String(value)));
  return sequence(
    ...(name.organizations ?? []).map((o) => attribute("2.5.4.10", o)),
    attribute(OIDS.commonName, name.commonName),
  );
}

function extension(id: string, critical: boolean, value: Uint8Array): Uint8Array {
  return sequence(oid(id), ...(critical ? [booleanTrue()] : []), octetString(value));
}

/** A critical key usage extension; DER drops the trailing zero bits of the flags. */
function keyUsage(flags: number): Uint8Array {
  let unused = 0;
  while (unused < 7 && ((flags >> unused) & 1) === 0) unused++;
  return extension("2.5.29.15", true, bitString(new Uint8Array([flags]), unused));
}

/** SHA-1 of the public key's bits, as RFC 5280's first method derives a key identifier. */
async function keyIdentifier(spki: Uint8Array): Promise<Uint8Array> {
  const [, bits] = readChildren(readTlv(spki).value);
  const key = bits?.value.subarray(1) ?? new Uint8Array();
  return new Uint8Array(await crypto.subtle.digest("SHA-1", key as Uint8Array<ArrayBuffer>));
}

async function pair(cert: Uint8Array, privateKey: CryptoKey): Promise<CertificateKeyPair> {
  const key = await crypto.subtle.exportKey("pkcs8", privateKey);
  return { cert: pemEncode("CERTIFICATE", cert), key: pemEncode("PRIVATE KEY", key) };
}
