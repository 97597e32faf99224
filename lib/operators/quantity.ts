/**
 * Kubernetes resource quantities (`500m`, `1Gi`, `2`) as the kinds use them
 * for CPU, memory and storage: a parser for comparing two of them, and the
 * messages for what is not one (the zod schema is in `schema/quantity.ts`).
 *
 * Quantities are `int-or-string` in the CRD, as in the core API: `cpu: 2` and
 * `cpu: "2"` are both accepted. Negative quantities are rejected because none
 * of kinglet's fields has a use for them.
 *
 * @example
 * ```ts
 * import { parseQuantity } from "./quantity.ts";
 * parseQuantity("500m"); // 0.5
 * parseQuantity("1Gi"); // 1073741824
 * ```
 *
 * @module
 */
const NUMBER = String.raw`(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)`;
const SUFFIX = String.raw`(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?${NUMBER})`;

/** The pattern a quantity string must match (the core API's, without a sign). */
export const QUANTITY_PATTERN: RegExp = new RegExp(`^${NUMBER}${SUFFIX}?$`);

const PARTS = new RegExp(`^(${NUMBER})(${SUFFIX})?$`);

const BINARY: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL_UP: Record<string, number> = { k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
// Fractions divide rather than multiply so that "100m" and "0.1" parse to the same double.
const DECIMAL_DOWN: Record<string, number> = { n: 1e9, u: 1e6, m: 1e3 };

/**
 * Why a string is not a quantity.
 *
 * @example
 * ```ts
 * import { notAQuantity } from "./quantity.ts";
 * notAQuantity("1 GB"); // '"1 GB" is not a quantity; use a number with an optional suffix, such as 500m, 2, 256Mi or 1Gi'
 * ```
 */
export function notAQuantity(input: string): string {
  return `${JSON.stringify(input)} is not a quantity; use a number with an optional suffix, ` +
    "such as 500m, 2, 256Mi or 1Gi";
}

/**
 * Why a value that is neither an integer nor a string is not a quantity.
 *
 * @example
 * ```ts
 * import { quantityTypeMessage } from "./quantity.ts";
 * quantityTypeMessage(0.5); // '0.5 must be written as a string, e.g. "0.5"'
 * ```
 */
export function quantityTypeMessage(input: unknown): string {
  // YAML reads `cpu: 0.5` as a number, which an int-or-string field cannot hold.
  if (typeof input === "number") return `${input} must be written as a string, e.g. "${input}"`;
  return "must be a quantity: an integer or a string such as 500m, 2, 256Mi or 1Gi";
}

/** A quantity as written in a spec. */
export type Quantity = number | string;

/**
 * The value of a quantity in base units: cores for CPU, bytes for memory.
 *
 * @throws {TypeError} when `quantity` is not a valid quantity.
 * @example
 * ```ts
 * import { parseQuantity } from "./quantity.ts";
 * parseQuantity("250m") < parseQuantity("1"); // true
 * ```
 */
export function parseQuantity(quantity: Quantity): number {
  if (typeof quantity === "number") {
    if (!Number.isFinite(quantity) || quantity < 0) {
      throw new TypeError(`Cannot parse quantity: expected a non-negative number, got ${quantity}`);
    }
    return quantity;
  }
  const match = PARTS.exec(quantity);
  if (!match) {
    throw new TypeError(`Cannot parse quantity: ${JSON.stringify(quantity)} is not a quantity`);
  }
  const [, digits = "", suffix = ""] = match;
  if (suffix === "") return Number(digits);
  if (suffix in BINARY) return Number(digits) * BINARY[suffix]!;
  if (suffix in DECIMAL_UP) return Number(digits) * DECIMAL_UP[suffix]!;
  if (suffix in DECIMAL_DOWN) return Number(digits) / DECIMAL_DOWN[suffix]!;
  return Number(digits + suffix);
}

/**
 * The quantity in the string form the core API's typed clients expect.
 *
 * @example
 * ```ts
 * import { quantityString } from "./quantity.ts";
 * quantityString(2); // "2"
 * ```
 */
export function quantityString(quantity: Quantity): string {
  return typeof quantity === "number" ? String(quantity) : quantity;
}
