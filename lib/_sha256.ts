/**
 * The one SHA-256 kinglet takes of several byte runs: of a bundle's inputs,
 * of a vendored kinglet, and of the webhook certificates a directory holds.
 *
 * @example
 * ```ts
 * import { sha256Hex } from "./_sha256.ts";
 * await sha256Hex([new TextEncoder().encode("abc")]);
 * // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 * ```
 *
 * @module
 */

/** The SHA-256 of `parts` run together, in lowercase hex. */
export async function sha256Hex(parts: Uint8Array<ArrayBuffer>[]): Promise<string> {
  const all = await new Blob(parts).arrayBuffer();
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", all));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
