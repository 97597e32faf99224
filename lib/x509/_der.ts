/**
 * The few ASN.1 DER encodings an X.509 v3 certificate needs: each function
 * returns one complete tag-length-value, so a certificate is written as
 * nested calls in the order of its ASN.1 definition.
 *
 * @example
 * ```ts
 * import { integer, sequence } from "./_der.ts";
 * const der = sequence(integer(new Uint8Array([2])));
 * if (der.join() !== "48,3,2,1,2") throw new Error(der.join());
 * ```
 *
 * @module
 */

/** Bytes over a plain `ArrayBuffer`, as WebCrypto takes them. */
export type Bytes = Uint8Array<ArrayBuffer>;

/** One tag-length-value with a definite length, in DER's shortest form. */
export function tlv(tag: number, ...contents: Uint8Array[]): Bytes {
  const body = concat(contents);
  const length = body.length;
  let header: number[];
  if (length < 0x80) {
    header = [tag, length];
  } else {
    const bytes: number[] = [];
    for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
    header = [tag, 0x80 | bytes.length, ...bytes];
  }
  return concat([new Uint8Array(header), body]);
}

/** `SEQUENCE { … }`. */
export function sequence(...items: Uint8Array[]): Bytes {
  return tlv(0x30, ...items);
}

/** `SET { … }`, for a relative distinguished name of one attribute. */
export function set(...items: Uint8Array[]): Bytes {
  return tlv(0x31, ...items);
}

/**
 * `INTEGER` of the unsigned big-endian `bytes`: leading zeros dropped, one
 * zero prepended when the top bit is set, so the value stays positive.
 */
export function integer(bytes: Uint8Array): Bytes {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  const positive = (trimmed[0] ?? 0) & 0x80 ? concat([new Uint8Array([0]), trimmed]) : trimmed;
  return tlv(0x02, positive.length === 0 ? new Uint8Array([0]) : positive);
}

/** `BOOLEAN TRUE`; DER leaves FALSE out as the default. */
export function booleanTrue(): Bytes {
  return tlv(0x01, new Uint8Array([0xff]));
}

/** The object identifiers that both the certificate writer and its readers use. */
export const OIDS = {
  /** The basic constraints extension, which says whether a certificate is a CA. */
  basicConstraints: "2.5.29.19",
  /** The subject alternative name extension: DNS names and IP addresses. */
  subjectAltName: "2.5.29.17",
  /** A name's common name attribute. */
  commonName: "2.5.4.3",
  /** ECDSA over SHA-256, the one signature kinglet writes and verifies. */
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
} as const;

/** `OBJECT IDENTIFIER` of a dotted string such as `2.5.4.3`. */
export function oid(dotted: string): Bytes {
  const arcs = dotted.split(".").map(Number);
  const [first = 0, second = 0, ...rest] = arcs;
  const bytes: number[] = [];
  for (const arc of [first * 40 + second, ...rest]) {
    const base128: number[] = [arc & 0x7f];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128)) {
      base128.unshift(0x80 | (value & 0x7f));
    }
    bytes.push(...base128);
  }
  return tlv(0x06, new Uint8Array(bytes));
}

/** `BIT STRING` of whole bytes, or of `bytes` with `unusedBits` trailing bits unused. */
export function bitString(bytes: Uint8Array, unusedBits = 0): Bytes {
  return tlv(0x03, new Uint8Array([unusedBits]), bytes);
}

/** `OCTET STRING`. */
export function octetString(bytes: Uint8Array): Bytes {
  return tlv(0x04, bytes);
}

/** `UTF8String`. */
export function utf8String(text: string): Bytes {
  return tlv(0x0c, new TextEncoder().encode(text));
}

/** `UTCTime` before 2050 and `GeneralizedTime` from then on, as RFC 5280 requires. */
export function time(date: Date): Bytes {
  // Not toISOString: its first call makes over a MiB of the executable resident.
  const two = (n: number) => String(n).padStart(2, "0");
  const digits = String(date.getUTCFullYear()).padStart(4, "0") + two(date.getUTCMonth() + 1) +
    two(date.getUTCDate()) + two(date.getUTCHours()) + two(date.getUTCMinutes()) +
    two(date.getUTCSeconds());
  const utc = date.getUTCFullYear() < 2050;
  return tlv(utc ? 0x17 : 0x18, new TextEncoder().encode(`${utc ? digits.slice(2) : digits}Z`));
}

/** `[n] EXPLICIT`: a constructed context-specific tag around `inner`. */
export function explicit(n: number, inner: Uint8Array): Bytes {
  return tlv(0xa0 | n, inner);
}

/** `[n] IMPLICIT` of a primitive value: its contents under a context-specific tag. */
export function implicit(n: number, contents: Uint8Array): Bytes {
  return tlv(0x80 | n, contents);
}

/** The bytes of `parts`, one after another. */
export function concat(parts: Uint8Array[]): Bytes {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
