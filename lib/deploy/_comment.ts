/**
 * A paragraph as `# ` comment lines of at most 80 characters, as the
 * hand-written deploy files were wrapped, so that a longer operator name
 * still gives lines of that width.
 *
 * @example
 * ```ts
 * import { comment } from "./_comment.ts";
 * comment("Renews the token.", "  "); // "  # Renews the token.\n"
 * ```
 *
 * @module
 */

const WIDTH = 80;

/** `paragraph` as comment lines at `indent` of at most `width`, each ending in a newline. */
export function comment(paragraph: string, indent = "", width = WIDTH): string {
  const lines: string[] = [];
  let line = "";
  for (const word of paragraph.split(/\s+/).filter(Boolean)) {
    if (line && indent.length + 2 + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines.map((l) => `${indent}# ${l}\n`).join("");
}
