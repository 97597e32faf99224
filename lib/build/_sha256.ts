/**
 * The one SHA-256 the build takes of several byte runs: of a bundle's inputs
 * and of a vendored kinglet.
 *
 * @module
 */

/** The SHA-256 of `parts` run together, in lowercase hex. */
export async function sha256Hex(parts: Uint8Array<ArrayBuffer>[]): Promise<string> {
  const all = await new Blob(parts).arrayBuffer();
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", all));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
