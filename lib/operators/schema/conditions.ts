/**
 * The conditions of every kinglet kind in its CRD: `./crd`'s
 * `metav1.Condition` list, described with the standard types the operators
 * report (see `../conditions.ts`).
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { standardConditionsSchema } from "./conditions.ts";
 * z.object({ conditions: standardConditionsSchema }).parse({}); // {}: the list is optional
 * ```
 *
 * @module
 */
import { conditionsSchema } from "../../crd/mod.ts";

/** The conditions a kinglet kind's status holds, keyed by type; optional. */
export const standardConditionsSchema = conditionsSchema(
  "Latest observations of the object's state: Ready, Progressing, Degraded and InvalidSpec.",
);
