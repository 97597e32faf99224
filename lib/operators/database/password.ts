/**
 * Passwords for the credentials Secret. The only impure part of the database
 * operator besides I/O, kept apart so that rendering stays pure: the
 * reconciler generates a password only when the Secret does not exist yet,
 * and passes it to `renderCredentialsSecret`.
 *
 * @example
 * ```ts
 * import { generatePassword } from "./password.ts";
 * generatePassword().length; // 32
 * ```
 *
 * @module
 */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
// Bytes at or above the largest multiple of the alphabet's size are redrawn,
// so every character is equally likely.
const LIMIT = 256 - (256 % ALPHABET.length);

/**
 * A random password of letters and digits from `crypto.getRandomValues`
 * (about 5.95 bits per character; 32 characters give over 190 bits). Letters
 * and digits only, so the password is safe unquoted in URIs, shells and
 * connection strings.
 *
 * @param length number of characters. Defaults to 32.
 * @throws {RangeError} when `length` is not an integer from 16 to 1024.
 * @example
 * ```ts
 * import { generatePassword } from "./password.ts";
 * /^[A-Za-z0-9]{24}$/.test(generatePassword(24)); // true
 * ```
 */
export function generatePassword(length = 32): string {
  if (!Number.isInteger(length) || length < 16 || length > 1024) {
    throw new RangeError(
      `Cannot generate a password: 'length' must be an integer from 16 to 1024, got ${length}`,
    );
  }
  let password = "";
  const bytes = new Uint8Array(length * 2);
  while (password.length < length) {
    crypto.getRandomValues(bytes);
    for (const byte of bytes) {
      if (byte >= LIMIT) continue;
      password += ALPHABET[byte % ALPHABET.length];
      if (password.length === length) break;
    }
  }
  return password;
}
