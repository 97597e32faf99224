/**
 * Reading back the DER that `_der.ts` writes, and that any X.509 issuer
 * writes: one tag-length-value at a time, and the fields of a certificate
 * kinglet looks at (validity, names, extensions, key and signature).
 *
 * Malformed input throws a `TypeError` that says where the reading stopped;
 * a certificate is never partly trusted.
 *
 * @example
 * ```ts
 * import { readTlv } from "./_der_read.ts";
 * const tlv = readTlv(new Uint8Array([0x30, 3, 2, 1, 2]));
 * if (tlv.tag !== 0x30 || tlv.value.length !== 3) throw new Error("misread");
 * ```
 *
 * @module
 */
import { oid, OIDS } from "./_der.ts";

/** One tag-length-value: its tag, its contents, and the whole encoding. */
export interface Tlv {
  tag: number;
  /** The contents, after the header. */
  value: Uint8Array;
  /** Tag, length and contents, as they were written (what a signature covers). */
  raw: Uint8Array;
}

/**
 * The tag-length-value starting at `at` in `bytes`.
 *
 * @throws {TypeError} when the bytes end before it does, or its length is indefinite.
 */
export function readTlv(bytes: Uint8Array, at = 0): Tlv {
  const tag = bytes[at];
  let length = bytes[at + 1];
  if (tag === undefined || length === undefined) {
    throw new TypeError(`Cannot read DER: the input ends at byte ${at}, inside a header`);
  }
  let start = at + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4) {
      throw new TypeError(`Cannot read DER: unsupported length form 0x${length.toString(16)}`);
    }
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (bytes[start + i] ?? NaN);
    start += count;
  }
  const end = start + length;
  if (!(end <= bytes.length)) {
    throw new TypeError(`Cannot read DER: a value of ${length} bytes runs past the input's end`);
  }
  return { tag, value: bytes.subarray(start, end), raw: bytes.subarray(at, end) };
}

/** The tag-length-values one after another in `contents`, e.g. the items of a SEQUENCE. */
export function readChildren(contents: Uint8Array): Tlv[] {
  const children: Tlv[] = [];
  for (let at = 0; at < contents.length;) {
    const child = readTlv(contents, at);
    children.push(child);
    at += child.raw.length;
  }
  return children;
}

/** The fields of an X.509 certificate kinglet reads. */
export interface ParsedCertificate {
  /** The signed part, as written. */
  tbs: Uint8Array;
  issuer: Uint8Array;
  subject: Uint8Array;
  notBefore: Date;
  notAfter: Date;
  /** The `SubjectPublicKeyInfo`, as written. */
  spki: Uint8Array;
  /** Each extension's value (the OCTET STRING's contents) by its OID's encoding in hex. */
  extensions: Map<string, Uint8Array>;
  /** The signature algorithm's `AlgorithmIdentifier`, as written. */
  signatureAlgorithm: Uint8Array;
  /** The signature: the BIT STRING's bytes. */
  signature: Uint8Array;
}

/**
 * The fields of the certificate `der`.
 *
 * @throws {TypeError} when it is not a DER certificate.
 */
export function parseCertificate(der: Uint8Array): ParsedCertificate {
  const [tbs, algorithm, signature] = expect(readTlv(der), 0x30, "Certificate", 3);
  const fields = expect(tbs!, 0x30, "TBSCertificate", 6);
  // The version is [0] EXPLICIT and left out for v1; everything after it has a fixed place.
  const at = fields[0]!.tag === 0xa0 ? 1 : 0;
  const [, , issuer, validity, subject, spki] = fields.slice(at);
  if (!issuer || !validity || !subject || !spki) {
    throw new TypeError("Cannot read the certificate: its TBSCertificate lacks fields");
  }
  const [notBefore, notAfter] = expect(validity, 0x30, "Validity", 2);
  const extensions = new Map<string, Uint8Array>();
  const wrapped = fields.find((field) => field.tag === 0xa3);
  if (wrapped) {
    const [list] = expect(wrapped, 0xa3, "extensions", 1);
    for (const extension of expect(list!, 0x30, "Extensions", 0)) {
      const parts = expect(extension, 0x30, "Extension", 2);
      const value = parts.at(-1)!;
      if (parts[0]!.tag !== 0x06 || value.tag !== 0x04) {
        throw new TypeError(
          "Cannot read the certificate: an extension is not OID and OCTET STRING",
        );
      }
      extensions.set(hex(parts[0]!.raw), value.value);
    }
  }
  const bits = signature!;
  if (bits.tag !== 0x03 || bits.value[0] !== 0) {
    throw new TypeError("Cannot read the certificate: its signature is not a whole BIT STRING");
  }
  return {
    tbs: tbs!.raw,
    issuer: issuer.raw,
    subject: subject.raw,
    notBefore: readTime(notBefore!),
    notAfter: readTime(notAfter!),
    spki: spki.raw,
    extensions,
    signatureAlgorithm: algorithm!.raw,
    signature: bits.value.subarray(1),
  };
}

const BASIC_CONSTRAINTS = hex(oid(OIDS.basicConstraints));

/** Whether `certificate`'s basic constraints say `cA: TRUE`; a `TypeError` when they are not DER. */
export function isAuthority(certificate: ParsedCertificate): boolean {
  const constraints = certificate.extensions.get(BASIC_CONSTRAINTS);
  return constraints !== undefined &&
    readChildren(readTlv(constraints).value)[0]?.value[0] === 0xff;
}

/** `UTCTime` (years 1950 to 2049) or `GeneralizedTime`, both in UTC with whole seconds. */
function readTime(tlv: Tlv): Date {
  const text = new TextDecoder().decode(tlv.value);
  const match = tlv.tag === 0x17
    ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
    : tlv.tag === 0x18
    ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
    : null;
  if (!match) {
    throw new TypeError(`Cannot read the certificate: a bad time ${JSON.stringify(text)}`);
  }
  const [year = 0, month = 1, day, hour, minute, second] = match.slice(1).map(Number);
  const fullYear = tlv.tag === 0x17 ? (year < 50 ? 2000 + year : 1900 + year) : year;
  return new Date(Date.UTC(fullYear, month - 1, day, hour, minute, second));
}

/** The children of `tlv`, which must carry `tag` and hold at least `count` of them. */
function expect(tlv: Tlv, tag: number, what: string, count: number): Tlv[] {
  if (tlv.tag !== tag) {
    throw new TypeError(
      `Cannot read the certificate: expected ${what} (tag 0x${tag.toString(16)}), ` +
        `got tag 0x${tlv.tag.toString(16)}`,
    );
  }
  const children = readChildren(tlv.value);
  if (children.length < count) {
    throw new TypeError(`Cannot read the certificate: ${what} holds ${children.length} items`);
  }
  return children;
}

/** Lower-case hex of `bytes`. */
export function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
