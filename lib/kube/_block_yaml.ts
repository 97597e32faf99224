/**
 * A reader for the block-style YAML that kubectl, k3s and kubeadm write
 * kubeconfigs in: indented mappings and `- ` sequences of plain, quoted or
 * empty-collection scalars, with comments. Anything else (anchors, tags,
 * block scalars, flow collections with content, several documents, an
 * unusual number form) makes {@link readBlockYaml} return
 * {@link NOT_BLOCK_YAML}, and the caller hands the text to the full `yaml`
 * package instead. That keeps the package, and Deno's Node compatibility
 * layer it brings (about 10 MiB of resident memory together), out of a
 * process whose kubeconfig is the usual kind.
 *
 * Where this reader gives a value, it is the value the `yaml` package gives
 * (YAML 1.2 core schema); a unit test compares the two.
 *
 * @example
 * ```ts
 * import { readBlockYaml } from "./_block_yaml.ts";
 * readBlockYaml("clusters:\n- name: k3s\n  cluster: {}\n"); // { clusters: [{ name: "k3s", cluster: {} }] }
 * ```
 *
 * @module
 */

/** Returned for text outside the block subset: parse it with the full YAML parser. */
export const NOT_BLOCK_YAML: unique symbol = Symbol("not block YAML");

interface Line {
  indent: number;
  text: string;
}

class Unsupported extends Error {}

/**
 * The value of `text`, or {@link NOT_BLOCK_YAML} when it uses anything beyond
 * block mappings, block sequences and single-line scalars (or is invalid).
 */
export function readBlockYaml(text: string): unknown {
  try {
    const lines = significantLines(text);
    if (lines.length === 0) return null;
    const state = { lines, at: 0 };
    const value = block(state, lines[0]!.indent);
    if (state.at !== lines.length) throw new Unsupported("trailing content");
    return value;
  } catch (error) {
    if (error instanceof Unsupported) return NOT_BLOCK_YAML;
    throw error;
  }
}

function significantLines(text: string): Line[] {
  const lines: Line[] = [];
  for (const raw of text.split(/\r?\n/)) {
    if (raw.includes("\t")) throw new Unsupported("tab");
    const content = withoutComment(raw).trimEnd();
    const trimmed = content.trimStart();
    if (trimmed === "") continue;
    if (/^(---|\.\.\.)(\s|$)/.test(trimmed) || trimmed.startsWith("%")) {
      throw new Unsupported("document marker or directive");
    }
    lines.push({ indent: content.length - trimmed.length, text: trimmed });
  }
  return lines;
}

/** The line without a comment: `#` at the start or after a space, outside quotes. */
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) {
        if (quote === "'" && line[i + 1] === "'") i++;
        else quote = undefined;
      }
    } else if (c === "#" && (i === 0 || line[i - 1] === " ")) return line.slice(0, i);
    else if ((c === '"' || c === "'") && (i === 0 || /[\s:\-[{,]/.test(line[i - 1]!))) quote = c;
  }
  return line;
}

interface State {
  lines: Line[];
  at: number;
}

/** The mapping or sequence whose lines start at `indent`. */
function block(state: State, indent: number): unknown {
  const first = state.lines[state.at]!;
  if (first.indent !== indent) throw new Unsupported("indentation");
  return isItem(first.text) ? sequence(state, indent) : mapping(state, indent);
}

function isItem(text: string): boolean {
  return text === "-" || text.startsWith("- ");
}

function sequence(state: State, indent: number): unknown[] {
  const items: unknown[] = [];
  while (state.at < state.lines.length) {
    const line = state.lines[state.at]!;
    // A key at the sequence's own indentation ends it: kubectl writes "- " under its key.
    if (line.indent < indent || (line.indent === indent && !isItem(line.text))) break;
    if (line.indent > indent) throw new Unsupported("sequence layout");
    const rest = line.text.slice(1).trimStart();
    if (rest === "") {
      state.at++;
      items.push(nested(state, indent));
    } else {
      // "- key: value" opens a mapping whose lines align with "key".
      const column = line.indent + line.text.length - rest.length;
      state.lines[state.at] = { indent: column, text: rest };
      items.push(isItem(rest) || keyOf(rest) ? block(state, column) : lone(state, rest));
    }
  }
  return items;
}

function mapping(state: State, indent: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  while (state.at < state.lines.length) {
    const line = state.lines[state.at]!;
    if (line.indent < indent) break;
    if (line.indent > indent) throw new Unsupported("mapping layout");
    const entry = keyOf(line.text);
    if (!entry) throw new Unsupported("not a key");
    if (Object.hasOwn(out, entry.key) || entry.key === "__proto__") {
      throw new Unsupported("duplicate key");
    }
    state.at++;
    if (entry.value === "") {
      // A sequence may sit at the key's own indentation, as kubectl writes it.
      const next = state.lines[state.at];
      out[entry.key] = next && next.indent === indent && isItem(next.text)
        ? sequence(state, indent)
        : nested(state, indent);
    } else out[entry.key] = scalar(entry.value);
  }
  return out;
}

/** The block below a line at `indent`, or null when the next line is not deeper. */
function nested(state: State, indent: number): unknown {
  const next = state.lines[state.at];
  if (!next || next.indent <= indent) return null;
  return block(state, next.indent);
}

function lone(state: State, text: string): unknown {
  state.at++;
  return scalar(text);
}

/** `key: value` (value possibly empty), or undefined when the text is not a mapping entry. */
function keyOf(text: string): { key: string; value: string } | undefined {
  if (text.startsWith('"') || text.startsWith("'")) {
    const end = quotedEnd(text);
    const rest = text.slice(end);
    if (rest !== ":" && !rest.startsWith(": ")) return undefined;
    const key = scalar(text.slice(0, end));
    return { key: String(key), value: rest.slice(1).trim() };
  }
  const match = /^([^\s:?&*!|>%@`#[\]{},"'-][^:]*?|-[^\s:][^:]*?):(?: +(.*))?$/.exec(text);
  if (!match) return undefined;
  return { key: match[1]!, value: match[2] ?? "" };
}

function quotedEnd(text: string): number {
  const quote = text[0]!;
  for (let i = 1; i < text.length; i++) {
    if (quote === '"' && text[i] === "\\") i++;
    else if (text[i] === quote) {
      if (quote === "'" && text[i + 1] === "'") i++;
      else return i + 1;
    }
  }
  throw new Unsupported("unterminated quote");
}

const ESCAPES: Readonly<Record<string, string>> = {
  "0": "\0",
  t: "\t",
  n: "\n",
  r: "\r",
  '"': '"',
  "\\": "\\",
  "/": "/",
  " ": " ",
};

function scalar(text: string): unknown {
  if (text.startsWith('"') || text.startsWith("'")) {
    if (quotedEnd(text) !== text.length) throw new Unsupported("text after a quote");
    const body = text.slice(1, -1);
    if (text[0] === "'") return body.replaceAll("''", "'");
    return body.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)/g, (_, escape: string) => {
      if (escape.length > 1) return String.fromCharCode(parseInt(escape.slice(1), 16));
      const replacement = ESCAPES[escape];
      if (replacement === undefined) throw new Unsupported("escape");
      return replacement;
    });
  }
  if (text === "{}") return {};
  if (text === "[]") return [];
  if (/^[[{&*!|>%@`]/.test(text) || text.includes(": ") || text.endsWith(":")) {
    throw new Unsupported("flow, anchor, tag or block scalar");
  }
  if (/^(~|null|Null|NULL)$/.test(text)) return null;
  if (/^(true|True|TRUE)$/.test(text)) return true;
  if (/^(false|False|FALSE)$/.test(text)) return false;
  if (/^[-+]?[0-9]+$/.test(text)) {
    const n = Number(text);
    if (!Number.isSafeInteger(n)) throw new Unsupported("large integer");
    return n;
  }
  // Other number forms (floats, 0x, 0o, .inf) and words the core schema reads
  // as something else are rare in a kubeconfig: leave them to the full parser.
  if (
    /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(text) ||
    /^(0o[0-7]+|0x[0-9a-fA-F]+|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$/.test(text)
  ) {
    throw new Unsupported("number form");
  }
  return text;
}
