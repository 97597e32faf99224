/**
 * The timestamp format of Lease and Event fields typed `metav1.MicroTime`.
 *
 * @module
 */
import { rfc3339 } from "../_rfc3339.ts";

/** RFC 3339 in UTC with exactly six fractional digits, as the API server writes MicroTime. */
export function microTime(ms: number): string {
  return rfc3339(ms, 6);
}
