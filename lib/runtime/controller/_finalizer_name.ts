/**
 * The rule a finalizer's name follows, checked where a finalizer is declared
 * and where one is added.
 *
 * @module
 */

/** Kubernetes' qualified name: an optional DNS subdomain prefix and "/", then up to 63 characters. */
const QUALIFIED_NAME =
  /^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/**
 * Refuses a finalizer name the API server would refuse.
 *
 * @throws {TypeError} naming the value, when `name` is not a qualified name.
 */
export function checkFinalizerName(name: string): void {
  const [prefix, local] = name.includes("/") ? name.split("/", 2) : ["", name];
  if (!QUALIFIED_NAME.test(name) || (local ?? "").length > 63 || (prefix ?? "").length > 253) {
    throw new TypeError(
      `Cannot use finalizer ${JSON.stringify(name)}: it must be a qualified name such as ` +
        `"kinglet.dev/cleanup" (an optional DNS subdomain and "/", then at most 63 letters, ` +
        `digits, "-", "_" or ".")`,
    );
  }
}
