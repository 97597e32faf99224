/**
 * The YAML writer of every manifest `deployFiles` writes and of the
 * kubeconfig node mode installs: block YAML with comments where a reader
 * needs them. The `yaml` package keeps comments only on a document built
 * node by node, and these objects are simple enough to write directly.
 * Mappings and lists of mappings are written as blocks, lists of scalars
 * in flow style (`verbs: ["get", "list"]`) unless named in `blockLists`; a
 * string is quoted only where YAML (1.1 or 1.2) could read it as something
 * else. Comments are paragraphs wrapped at 100 columns (`_comment.ts`).
 *
 * @example
 * ```ts
 * import { commentedYaml } from "./_commented_yaml.ts";
 * commentedYaml({ kind: "Role", rules: [{ verbs: ["get"] }] }, {
 *   header: ["Reads things."],
 *   comments: { "rules[0]": ["Why get."] },
 * });
 * // "# Reads things.\nkind: Role\nrules:\n  # Why get.\n  - verbs: [\"get\"]\n"
 * ```
 *
 * @module
 */
import { comment } from "./_comment.ts";

/** Options of {@link commentedYaml}. */
export interface CommentedYamlOptions {
  /** Paragraphs of the comment at the top of the file, parted by a bare `#`. Defaults to none. */
  header?: readonly string[];
  /**
   * Paragraphs of the comment above the entry at a path (`metadata.name`,
   * `rules[2]`). Defaults to none anywhere.
   */
  comments?: Readonly<Record<string, readonly string[] | undefined>>;
  /** The paths of lists of scalars written one item a line (`resources`). Defaults to none. */
  blockLists?: readonly string[];
}

const WIDTH = 100;
const PLAIN = /^-*[A-Za-z0-9./][A-Za-z0-9._/=:-]*$/;
// What a YAML 1.1 or 1.2 reader takes for a boolean, a null or a number.
const RESERVED =
  /^(true|false|yes|no|on|off|null|y|n|~|[-+]?\.?[0-9][0-9a-fox._:+-]*|[-+]?\.(inf|nan))$/i;

/**
 * `value`, an object of strings, numbers, booleans, lists and objects, as
 * YAML with the comments `options` ask for.
 *
 * @throws {TypeError} when `value` holds something else (`undefined`,
 * `null`, a function, a list of lists).
 */
export function commentedYaml(
  value: Record<string, unknown>,
  options: CommentedYamlOptions = {},
): string {
  const { comments = {}, blockLists = [] } = options;
  const above = (path: string, indent: string) =>
    (comments[path] ?? []).map((paragraph) => comment(paragraph, indent, WIDTH)).join("");

  const mapping = (object: object, indent: string, path: string, first = indent): string =>
    Object.entries(object).map(([key, item], i) => {
      const at = path ? `${path}.${key}` : key;
      return above(at, indent) +
        entry(`${i === 0 ? first : indent}${scalar(key)}:`, item, indent, at);
    }).join("");

  const entry = (head: string, item: unknown, indent: string, at: string): string => {
    if (isScalar(item)) return `${head} ${scalar(item)}\n`;
    if (isObject(item)) {
      return Object.keys(item).length === 0
        ? `${head} {}\n`
        : `${head}\n${mapping(item, `${indent}  `, at)}`;
    }
    if (!Array.isArray(item)) throw new TypeError(`Cannot write ${at} as YAML: ${typeof item}`);
    if (item.every(isScalar) && (item.length === 0 || !blockLists.includes(at))) {
      return `${head} [${item.map((v) => JSON.stringify(v)).join(", ")}]\n`;
    }
    return `${head}\n` + item.map((element, i) => {
      const here = `${at}[${i}]`;
      const dash = `${indent}  - `;
      const note = above(here, `${indent}  `);
      if (isScalar(element)) return `${note}${dash}${scalar(element)}\n`;
      if (!isObject(element)) throw new TypeError(`Cannot write ${here} as YAML`);
      if (Object.keys(element).length === 0) return `${note}${dash}{}\n`;
      return note + mapping(element, `${indent}    `, here, dash);
    }).join("");
  };

  const header = (options.header ?? []).map((paragraph) => comment(paragraph, "", WIDTH));
  return header.join("#\n") + mapping(value, "", "");
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function scalar(value: string | number | boolean): string {
  if (typeof value !== "string") return String(value);
  const plain = PLAIN.test(value) && !value.endsWith(":") && /[A-Za-z0-9]/.test(value) &&
    !RESERVED.test(value);
  return plain ? value : JSON.stringify(value);
}
