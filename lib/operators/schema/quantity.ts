/**
 * The zod schema of a Kubernetes quantity, for the CRDs and the spec types.
 * `kinglet run` checks quantities without zod (see `../spec_check.ts`), with
 * the same messages from `../quantity.ts`.
 *
 * @example
 * ```ts
 * import { quantitySchema } from "./quantity.ts";
 * quantitySchema.parse("256Mi"); // "256Mi"
 * ```
 *
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { notAQuantity, QUANTITY_PATTERN, quantityTypeMessage } from "../quantity.ts";

/**
 * A quantity as the kinds accept it: a non-negative integer or a string such
 * as `500m`, `1.5`, `256Mi` or `1e3`.
 */
export const quantitySchema = z
  .union([
    z.int().min(0),
    z.string().regex(QUANTITY_PATTERN, { error: (issue) => notAQuantity(String(issue.input)) }),
  ], {
    error: (issue) => issue.code === "invalid_union" ? quantityTypeMessage(issue.input) : undefined,
  })
  .meta({ "x-kubernetes-int-or-string": true, pattern: QUANTITY_PATTERN.source });
