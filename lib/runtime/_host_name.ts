/**
 * The host's name, the default identity of an event recorder and of a
 * leader election candidate, with a message that says what to do when Deno
 * may not read it.
 *
 * @module
 */

/**
 * `Deno.hostname()`.
 *
 * @throws {TypeError} saying that `option` of `what` defaults to the host's
 * name, when the sys permission is not granted.
 */
export function hostName(what: string, option: string): string {
  try {
    return Deno.hostname();
  } catch (error) {
    throw new TypeError(
      `Cannot create ${what}: '${option}' defaults to the host's name, which needs ` +
        `--allow-sys=hostname; grant it or pass '${option}'`,
      { cause: error },
    );
  }
}
