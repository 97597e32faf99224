/**
 * Kubernetes resource quantities (`500m`, `1Gi`, `2`) as the kinds use them
 * for CPU, memory and storage: a parser for comparing two of them (shared
 * with the runtime's memory limit, `../_quantity.ts`), and the messages for
 * what is not one (the zod schema is in `schema/quantity.ts`).
 *
 * Quantities are `int-or-string` in the CRD, as in the core API: `cpu: 2` and
 * `cpu: "2"` are both accepted.
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
import type { Quantity } from "../_quantity.ts";

export { parseQuantity, type Quantity, QUANTITY_PATTERN } from "../_quantity.ts";

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
