/**
 * Generated TypeScript as `deno fmt` writes it, whatever the length of the
 * names in it, so that a project is `deno fmt --check` clean as generated:
 * a line that would pass the width of 100 is written broken, the way the
 * formatter breaks it, and named imports are sorted as it sorts them.
 *
 * @example
 * ```ts
 * import { importLine } from "./_format.ts";
 * importLine(["renderConfigMap", "type ConfigMap"], "./controller.ts");
 * // 'import { type ConfigMap, renderConfigMap } from "./controller.ts";'
 * ```
 *
 * @module
 */

/** `deno fmt`'s line width in generated projects (`fmt.lineWidth` of their `deno.json`). */
export const LINE_WIDTH = 100;

/** `line` if it fits in {@link LINE_WIDTH}, else `broken` (the formatter's way of breaking it). */
export function fit(line: string, broken: string): string {
  return line.length <= LINE_WIDTH ? line : broken;
}

/** An import of `names` from `from`, sorted and broken as `deno fmt` does. */
export function importLine(names: readonly string[], from: string): string {
  const key = (name: string) => name.replace(/^type /, "").toLowerCase();
  const sorted = [...names].sort((a, b) => key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  return fit(
    `import { ${sorted.join(", ")} } from "${from}";`,
    `import {\n${sorted.map((name) => `  ${name},\n`).join("")}} from "${from}";`,
  );
}
