/**
 * Comments of the files `deployFiles` writes: a line of a paragraph longer
 * than the width is broken at spaces, a shorter one is kept as written, so
 * lines an author wrapped stay as they are. The width is 80, as the hand-written deploy files were wrapped, so
 * that a longer operator name still gives lines of that width; YAML
 * manifests use 100 (`_commented_yaml.ts`).
 *
 * @example
 * ```ts
 * import { comment, wrap } from "./_comment.ts";
 * comment("Renews the token.", "  "); // "  # Renews the token.\n"
 * wrap("one two three", "", 10); // ["one two", "three"]
 * ```
 *
 * @module
 */

const WIDTH = 80;

/**
 * The lines of `paragraph` as comment lines at `indent` of at most `width`
 * show them (without `# `): its own line breaks kept, a longer line broken
 * at spaces.
 */
export function wrap(paragraph: string, indent = "", width = WIDTH): string[] {
  if (paragraph.trim() === "") return [];
  return paragraph.split("\n").flatMap((text) => {
    if (indent.length + 2 + text.length <= width) return [text];
    const lines: string[] = [];
    let line = "";
    for (const word of text.split(/\s+/).filter(Boolean)) {
      if (line && indent.length + 2 + line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else {
        line = line ? `${line} ${word}` : word;
      }
    }
    if (line) lines.push(line);
    return lines;
  });
}

/** `paragraph` as comment lines at `indent` of at most `width`, each ending in a newline. */
export function comment(paragraph: string, indent = "", width = WIDTH): string {
  return wrap(paragraph, indent, width).map((line) => `${indent}#${line && ` ${line}`}\n`).join("");
}
