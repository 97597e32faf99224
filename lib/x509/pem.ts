/**
 * PEM, the text form of DER that Kubernetes, Go and Deno's TLS read:
 * base64 in lines of 64 between `-----BEGIN <label>-----` and
 * `-----END <label>-----`. A CA bundle is several `CERTIFICATE` blocks one
 * after another.
 *
 * @example
 * ```ts
 * import { pemDecode, pemEncode } from "./pem.ts";
 * const pem = pemEncode("CERTIFICATE", new Uint8Array([48, 0]));
 * pemDecode(pem)[0]; // Uint8Array [48, 0]
 * ```
 *
 * @module
 */

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;

/**
 * `der` as one PEM block under `label` (`CERTIFICATE`, `PRIVATE KEY`, …),
 * ending with a newline.
 *
 * @example
 * ```ts
 * import { pemEncode } from "./pem.ts";
 * pemEncode("PRIVATE KEY", new Uint8Array([1, 2, 3]));
 * // "-----BEGIN PRIVATE KEY-----\nAQID\n-----END PRIVATE KEY-----\n"
 * ```
 */
export function pemEncode(label: string, der: Uint8Array | ArrayBuffer): string {
  const bytes = der instanceof Uint8Array ? der : new Uint8Array(der);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  const lines = btoa(binary).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/**
 * The DER of every block under `label` in `pem`, in order; text around and
 * between the blocks, and blocks of other labels, are passed over.
 *
 * @example
 * ```ts
 * import { pemDecode, pemEncode } from "./pem.ts";
 * const bundle = pemEncode("CERTIFICATE", new Uint8Array([1])) + pemEncode("CERTIFICATE", new Uint8Array([2]));
 * pemDecode(bundle).length; // 2
 * ```
 *
 * @throws {TypeError} when a block's body is not base64.
 */
export function pemDecode(pem: string, label = "CERTIFICATE"): Uint8Array<ArrayBuffer>[] {
  const blocks: Uint8Array<ArrayBuffer>[] = [];
  for (const [, found, body] of pem.matchAll(BLOCK)) {
    if (found !== label) continue;
    let binary: string;
    try {
      binary = atob(body!.replace(/\s+/g, ""));
    } catch {
      throw new TypeError(`Cannot decode PEM: a ${label} block is not base64`);
    }
    blocks.push(Uint8Array.from(binary, (char) => char.charCodeAt(0)));
  }
  return blocks;
}

/**
 * Each certificate of a bundle as a PEM of its own, in order: what a CA
 * bundle is made of.
 *
 * @example
 * ```ts
 * import { pemEncode, splitCertificates } from "./pem.ts";
 * const one = pemEncode("CERTIFICATE", new Uint8Array([1]));
 * splitCertificates(`${one}${one}`).length; // 2
 * ```
 */
export function splitCertificates(bundle: string): string[] {
  return pemDecode(bundle).map((der) => pemEncode("CERTIFICATE", der));
}
