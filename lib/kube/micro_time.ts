/**
 * The timestamp format of Lease and Event fields typed `metav1.MicroTime`.
 *
 * @module
 */

/** RFC 3339 in UTC with exactly six fractional digits, as the API server writes MicroTime. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, "000Z");
}
