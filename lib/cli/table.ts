/**
 * Plain-text tables as `kubectl get` prints them: upper-case headers, columns
 * padded to their widest cell, three spaces apart.
 *
 * @example
 * ```ts
 * import { formatTable } from "./table.ts";
 * formatTable(["NAME", "AGE"], [["web", "5m"], ["database", "2h"]]);
 * // "NAME       AGE\nweb        5m\ndatabase   2h"
 * ```
 *
 * @module
 */

/**
 * The rows under the header, each cell padded to its column's width. The
 * last column is not padded, so lines carry no trailing spaces.
 */
export function formatTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? "").length)));
  return all.map((row) =>
    row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i]!)).join("   ")
  ).join("\n");
}
