/**
 * Reading certificates back: when one is valid, what it names, whether it
 * is a CA, and whether a given CA signed it. This is what a keeper of
 * certificates needs to decide when to rotate and which CA still matters;
 * it is no chain validator (TLS clients do that).
 *
 * @example
 * ```ts
 * import { createCertificateAuthority, issueServingCertificate } from "./certificate.ts";
 * import { certificateValidity, verifyIssuedBy } from "./inspect.ts";
 * const ca = await createCertificateAuthority();
 * const serving = await issueServingCertificate(ca, { dnsNames: ["demo.default.svc"] });
 * await verifyIssuedBy(serving.cert, ca.cert); // true
 * certificateValidity(serving.cert).notAfter <= certificateValidity(ca.cert).notAfter; // true
 * ```
 *
 * @module
 */
import { oid, OIDS } from "./_der.ts";
import { hex, isAuthority, parseCertificate, readChildren, readTlv } from "./_der_read.ts";
import { formatIpAddress } from "./ip_address.ts";
import { pemDecode } from "./pem.ts";

/** When a certificate is valid: from `notBefore` to `notAfter`, both included. */
export interface CertificateValidity {
  /** The first moment it is valid. */
  notBefore: Date;
  /** The last moment it is valid. */
  notAfter: Date;
}

/** What a certificate says of itself, as {@link inspectCertificate} reads it. */
export interface CertificateInfo extends CertificateValidity {
  /** The subject's common name, `""` when it has none. */
  commonName: string;
  /** Whether its basic constraints make it a CA. */
  isAuthority: boolean;
  /** Its DNS subject alternative names. */
  dnsNames: string[];
  /** Its IP subject alternative names, IPv6 in RFC 5952's form. */
  ipAddresses: string[];
}

const SUBJECT_ALT_NAME = hex(oid(OIDS.subjectAltName));
const COMMON_NAME = hex(oid(OIDS.commonName));
const ECDSA_WITH_SHA256 = hex(oid(OIDS.ecdsaWithSha256));

/**
 * When the first certificate of `pem` is valid.
 *
 * @example
 * ```ts
 * import { createCertificateAuthority } from "./certificate.ts";
 * import { certificateValidity } from "./inspect.ts";
 * const ca = await createCertificateAuthority({ now: Date.UTC(2030, 0, 1), lifetimeMs: 86_400_000, backdateMs: 0 });
 * certificateValidity(ca.cert).notAfter.toISOString(); // "2030-01-02T00:00:00.000Z"
 * ```
 *
 * @throws {TypeError} when `pem` holds no certificate, or a malformed one.
 */
export function certificateValidity(pem: string): CertificateValidity {
  const { notBefore, notAfter } = parseCertificate(first(pem));
  return { notBefore, notAfter };
}

/**
 * The validity, names and CA flag of the first certificate of `pem`.
 *
 * @example
 * ```ts
 * import { createCertificateAuthority, issueServingCertificate } from "./certificate.ts";
 * import { inspectCertificate } from "./inspect.ts";
 * const ca = await createCertificateAuthority();
 * const serving = await issueServingCertificate(ca, { ipAddresses: ["0:0::1"] });
 * inspectCertificate(serving.cert).ipAddresses; // ["::1"]
 * ```
 *
 * @throws {TypeError} when `pem` holds no certificate, or a malformed one.
 */
export function inspectCertificate(pem: string): CertificateInfo {
  const parsed = parseCertificate(first(pem));
  const authority = isAuthority(parsed);
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  const names = parsed.extensions.get(SUBJECT_ALT_NAME);
  for (const name of names ? readChildren(readTlv(names).value) : []) {
    if (name.tag === 0x82) dnsNames.push(new TextDecoder().decode(name.value));
    else if (name.tag === 0x87) ipAddresses.push(formatIpAddress(name.value));
  }
  let commonName = "";
  for (const rdn of readChildren(readTlv(parsed.subject).value)) {
    for (const attribute of readChildren(rdn.value)) {
      const [type, value] = readChildren(attribute.value);
      if (type && value && hex(type.raw) === COMMON_NAME) {
        commonName = new TextDecoder().decode(value.value);
      }
    }
  }
  const { notBefore, notAfter } = parsed;
  return { notBefore, notAfter, commonName, isAuthority: authority, dnsNames, ipAddresses };
}

/**
 * Whether the first certificate of `ca` signed the first certificate of
 * `cert`: the issuer is the CA's subject and the signature checks out with
 * the CA's key. Only ECDSA P-256 with SHA-256 is checked, what this module
 * issues; any other signature gives `false`. Validity is not looked at.
 *
 * @example
 * ```ts
 * import { createCertificateAuthority, issueServingCertificate } from "./certificate.ts";
 * import { verifyIssuedBy } from "./inspect.ts";
 * const [ca, other] = await Promise.all([createCertificateAuthority(), createCertificateAuthority()]);
 * const serving = await issueServingCertificate(ca, { dnsNames: ["demo"] });
 * await verifyIssuedBy(serving.cert, other.cert); // false
 * ```
 *
 * @throws {TypeError} when either holds no certificate, or a malformed one.
 */
export async function verifyIssuedBy(cert: string, ca: string): Promise<boolean> {
  const issued = parseCertificate(first(cert));
  const authority = parseCertificate(first(ca));
  if (hex(issued.issuer) !== hex(authority.subject)) return false;
  const [algorithm] = readChildren(readTlv(issued.signatureAlgorithm).value);
  if (!algorithm || hex(algorithm.raw) !== ECDSA_WITH_SHA256) return false;
  let key: CryptoKey;
  try {
    const spki = authority.spki.slice();
    key = await crypto.subtle.importKey("spki", spki, EC_KEY, false, ["verify"]);
  } catch {
    return false;
  }
  const raw = rawSignature(issued.signature);
  if (!raw) return false;
  return await crypto.subtle.verify(SIGNING, key, raw, issued.tbs.slice());
}

const EC_KEY: EcKeyImportParams = { name: "ECDSA", namedCurve: "P-256" };
const SIGNING: EcdsaParams = { name: "ECDSA", hash: "SHA-256" };

/** X.509's `SEQUENCE { r, s }` as WebCrypto's r‖s of 32 bytes each, or undefined when malformed. */
function rawSignature(der: Uint8Array): Uint8Array<ArrayBuffer> | undefined {
  const [r, s] = readChildren(readTlv(der).value);
  if (!r || !s || r.tag !== 0x02 || s.tag !== 0x02) return undefined;
  const out = new Uint8Array(64);
  for (const [i, part] of [r.value, s.value].entries()) {
    const trimmed = part.subarray(Math.max(0, part.length - 32));
    if (part.length > 33) return undefined;
    out.set(trimmed, i * 32 + 32 - trimmed.length);
  }
  return out;
}

function first(pem: string): Uint8Array {
  const [der] = pemDecode(pem);
  if (!der) throw new TypeError("Cannot read the certificate: the PEM holds no CERTIFICATE block");
  return der;
}
