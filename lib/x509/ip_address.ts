/**
 * IP addresses as a certificate holds them (4 or 16 bytes in an
 * `iPAddress` subject alternative name) and as text: IPv4 dotted, IPv6 in
 * RFC 5952's canonical form (lower case, zeros dropped, the longest run of
 * zero groups written `::`), so that two spellings of one address compare
 * equal.
 *
 * @example
 * ```ts
 * import { canonicalIpAddress } from "./ip_address.ts";
 * canonicalIpAddress("0:0:0:0:0:0:0:1"); // "::1"
 * canonicalIpAddress("127.0.0.1"); // "127.0.0.1"
 * ```
 *
 * @module
 */

/**
 * The 4 (IPv4) or 16 (IPv6) bytes of `text`.
 *
 * @throws {RangeError} when `text` is not an IPv4 or IPv6 address.
 */
export function ipAddressBytes(text: string): Uint8Array<ArrayBuffer> {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const bytes = v4.slice(1).map(Number);
    if (bytes.every((byte) => byte <= 255)) return new Uint8Array(bytes);
  } else if (/^[0-9a-fA-F:]+$/.test(text) && text.split("::").length <= 2) {
    const [head = "", tail] = text.split("::");
    const groups = (part: string) => (part === "" ? [] : part.split(":"));
    const before = groups(head);
    const after = tail === undefined ? [] : groups(tail);
    const missing = 8 - before.length - after.length;
    const fits = tail === undefined ? missing === 0 : missing >= 1;
    const all = [...before, ...Array<string>(Math.max(missing, 0)).fill("0"), ...after];
    if (fits && all.every((group) => /^[0-9a-fA-F]{1,4}$/.test(group))) {
      const bytes = new Uint8Array(16);
      all.forEach((group, i) => {
        const value = parseInt(group, 16);
        bytes[i * 2] = value >> 8;
        bytes[i * 2 + 1] = value & 0xff;
      });
      return bytes;
    }
  }
  throw new RangeError(`Expected an IPv4 or IPv6 address, got ${JSON.stringify(text)}`);
}

/**
 * The text of a 4- or 16-byte address, IPv6 in RFC 5952's form.
 *
 * @throws {RangeError} when `bytes` is neither 4 nor 16 bytes long.
 */
export function formatIpAddress(bytes: Uint8Array): string {
  if (bytes.length === 4) return bytes.join(".");
  if (bytes.length !== 16) {
    throw new RangeError(`Expected an address of 4 or 16 bytes, got ${bytes.length}`);
  }
  const groups = Array.from({ length: 8 }, (_, i) => (bytes[i * 2]! << 8) | bytes[i * 2 + 1]!);
  // The longest run of two or more zero groups, the first when runs tie, becomes `::`.
  let best = { at: -1, length: 1 };
  for (let at = 0; at < 8;) {
    let end = at;
    while (end < 8 && groups[end] === 0) end++;
    if (end - at > best.length) best = { at, length: end - at };
    at = end === at ? at + 1 : end;
  }
  const text = groups.map((group) => group.toString(16));
  if (best.at < 0) return text.join(":");
  const head = text.slice(0, best.at).join(":");
  const tail = text.slice(best.at + best.length).join(":");
  return `${head}::${tail}`;
}

/**
 * `text` in the form a certificate's addresses are reported in, so that
 * `::1` and `0:0:0:0:0:0:0:1` compare equal.
 *
 * @example
 * ```ts
 * import { canonicalIpAddress } from "./ip_address.ts";
 * canonicalIpAddress("FD00:0:0::10"); // "fd00::10"
 * ```
 *
 * @throws {RangeError} when `text` is not an IPv4 or IPv6 address.
 */
export function canonicalIpAddress(text: string): string {
  return formatIpAddress(ipAddressBytes(text));
}
