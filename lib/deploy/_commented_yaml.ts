/**
 * Block YAML with comments where a reader needs them, for the manifests
 * `deployFiles` writes: the `yaml` package keeps comments only on a
 * document built node by node, and these objects are simple enough to write
 * directly. Mappings and lists of mappings are written as blocks, lists of
 * scalars in flow style (`verbs: ["get", "list"]`), as the hand-written
 * manifests were.
 *
 * @example
 * ```ts
 * import { commentedYaml } from "./_commented_yaml.ts";
 * commentedYaml({ kind: "Role", rules: [{ verbs: ["get"] }] }, {
 *   header: ["Reads things."],
 *   comments: (path) => path === "rules[0]" ? ["Why get."] : undefined,
 * });
 * // "# Reads things.\nkind: Role\nrules:\n  # Why get.\n  - verbs: [\"get\"]\n"
 * ```
 *
 * @module
 */

/** Options of {@link commentedYaml}. */
export interface CommentedYamlOptions {
  /** Paragraphs of the comment at the top of the file. Defaults to none. */
  header?: readonly string[];
  /**
   * Paragraphs of the comment above the entry at `path` (`metadata.name`,
   * `rules[2]`). Defaults to none anywhere.
   */
  comments?: (path: string) => readonly string[] | undefined;
}

const WIDTH = 100;
const PLAIN = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;
const RESERVED = /^(true|false|yes|no|on|off|null|y|n|[-+]?[0-9][0-9._]*(e[-+]?[0-9]+)?)$/i;

/**
 * `value`, an object of strings, numbers, booleans, lists and objects, as
 * YAML with the comments `options` ask for.
 *
 * @throws {TypeError} when `value` holds something else (`undefined`, a
 * function, a list of lists).
 */
export function commentedYaml(
  value: Record<string, unknown>,
  options: CommentedYamlOptions = {},
): string {
  const comments = options.comments ?? (() => undefined);
  // A bare `#` line parts the paragraphs of the header.
  const lines = (options.header ?? []).flatMap((paragraph, i) => [
    ...(i > 0 ? ["#"] : []),
    ...comment([paragraph], ""),
  ]);
  mapping(value, "", "", comments, lines);
  return lines.join("\n") + "\n";
}

function mapping(
  value: Record<string, unknown>,
  indent: string,
  path: string,
  comments: NonNullable<CommentedYamlOptions["comments"]>,
  lines: string[],
  firstPrefix = indent,
): void {
  let prefix = firstPrefix;
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    const name = scalar(key);
    lines.push(...comment(comments(at) ?? [], indent));
    if (Array.isArray(item) && item.every(isScalar)) {
      lines.push(`${prefix}${name}: [${item.map((v) => JSON.stringify(v)).join(", ")}]`);
    } else if (Array.isArray(item)) {
      lines.push(`${prefix}${name}:`);
      item.forEach((element, i) => {
        if (!isObject(element)) throw new TypeError(`Cannot write ${at}[${i}] as YAML`);
        lines.push(...comment(comments(`${at}[${i}]`) ?? [], `${indent}  `));
        mapping(element, `${indent}    `, `${at}[${i}]`, comments, lines, `${indent}  - `);
      });
    } else if (isObject(item)) {
      lines.push(`${prefix}${name}:`);
      mapping(item, `${indent}  `, at, comments, lines);
    } else if (isScalar(item)) {
      lines.push(`${prefix}${name}: ${scalar(item)}`);
    } else {
      throw new TypeError(`Cannot write ${at} as YAML: ${typeof item}`);
    }
    prefix = indent;
  }
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function scalar(value: string | number | boolean): string {
  if (typeof value !== "string") return String(value);
  return PLAIN.test(value) && !RESERVED.test(value) ? value : JSON.stringify(value);
}

/** `paragraphs` as `# ` lines at `indent`, each wrapped to the line width. */
function comment(paragraphs: readonly string[], indent: string): string[] {
  const lines: string[] = [];
  for (const paragraph of paragraphs) {
    let line = "";
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      if (line && indent.length + 2 + line.length + 1 + word.length > WIDTH) {
        lines.push(`${indent}# ${line}`);
        line = word;
      } else {
        line = line ? `${line} ${word}` : word;
      }
    }
    if (line) lines.push(`${indent}# ${line}`);
  }
  return lines;
}
