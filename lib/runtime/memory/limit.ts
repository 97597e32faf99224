/**
 * A memory limit as a person writes it: the one parser behind kinglet's
 * `--memory-limit`, an author's operator's (`parseOperatorFlags` of
 * `@kinglet/kinglet/cli`), and the `<PREFIX>MEMORY_LIMIT` variable every
 * generated unit, environment file and Deployment sets. What it accepts is
 * what their comments say, {@link MEMORY_LIMIT_FORMS}.
 *
 * A memory limit is whole bytes, so it takes a narrower grammar than a
 * Kubernetes quantity: a number with an optional binary (`Ki` … `Ei`) or
 * decimal (`k` … `E`) suffix, which must come to a whole number of bytes
 * (read as a quantity reads it, `../../_quantity.ts`); the Downward API
 * hands a container's `limits.memory` over as bytes.
 *
 * @example
 * ```ts
 * import { parseMemoryLimit } from "./limit.ts";
 * parseMemoryLimit("64Mi"); // 67108864
 * parseMemoryLimit("500M"); // 500000000
 * parseMemoryLimit("none"); // 0
 * ```
 *
 * @module
 */
import { parseQuantity } from "../../_quantity.ts";

/** How a memory limit is written, as every flag's help and every generated comment says it. */
export const MEMORY_LIMIT_FORMS = "64Mi, 1Gi, 500M or bytes; none: no limit";

/** Below this no limit can be kept: an idle operator on Deno alone takes 40 to 50 MiB. */
export const MIN_MEMORY_LIMIT = 32 * 2 ** 20;

const LIMIT = /^[0-9]+(?:\.[0-9]+)?(?:[KMGTPE]i|[kMGTPE])?$/;

/**
 * The bytes of a memory limit; `0` for `none` and `0`, which mean no limit.
 * Surrounding white space is ignored.
 *
 * @throws {RangeError} when `text` is empty, is not one of
 * {@link MEMORY_LIMIT_FORMS}, is not a whole number of bytes, or is below
 * {@link MIN_MEMORY_LIMIT}; the message says what to write instead and
 * starts with the value, for the caller to prefix with where it was set.
 */
export function parseMemoryLimit(text: string): number {
  const value = text.trim();
  const write = "write 64Mi, 1Gi, 500M or bytes, or none for no limit";
  if (value === "") throw new RangeError(`an empty memory limit names no limit: ${write}`);
  if (value === "none" || value === "0") return 0;
  if (!LIMIT.test(value)) {
    throw new RangeError(`${JSON.stringify(value)} is not a memory limit: ${write}`);
  }
  const bytes = parseQuantity(value);
  if (!Number.isSafeInteger(bytes)) {
    throw new RangeError(`${JSON.stringify(value)} is not a whole number of bytes: ${write}`);
  }
  if (bytes < MIN_MEMORY_LIMIT) {
    throw new RangeError(
      `${value} is below 32Mi, less than an operator on Deno takes idle (40 to 50 MiB): ` +
        "give it at least 64Mi, or none to run without a limit",
    );
  }
  return bytes;
}
