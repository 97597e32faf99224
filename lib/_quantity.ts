/**
 * Kubernetes resource quantities (`500m`, `1Gi`, `2`) as numbers: the one
 * reading of their suffixes, under the operators' quantity fields
 * (`operators/quantity.ts`) and the runtime's memory limit
 * (`runtime/memory/limit.ts`), which accepts a narrower grammar and reads it
 * here. Negative quantities are rejected because none of kinglet's fields
 * has a use for them.
 *
 * @example
 * ```ts
 * import { parseQuantity } from "./_quantity.ts";
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

/** A quantity as written in a spec. */
export type Quantity = number | string;

/**
 * The value of a quantity in base units: cores for CPU, bytes for memory.
 *
 * @throws {TypeError} when `quantity` is not a valid quantity.
 * @example
 * ```ts
 * import { parseQuantity } from "./_quantity.ts";
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
