/**
 * Label selectors as the in-memory API server understands them: the
 * equality-based form (`k=v`, `k==v`, `k!=v`, `k`, `!k`, joined by commas).
 *
 * @module
 */

type Requirement = (labels: Record<string, string>) => boolean;

/**
 * A predicate on labels for `selector`; an empty or absent selector matches
 * everything.
 *
 * @throws {TypeError} for a set-based requirement (`in`, `notin`) or a
 * requirement that is not a label key.
 */
export function labelMatcher(selector: string | undefined): Requirement {
  const requirements = (selector ?? "").split(",").map((r) => r.trim()).filter(Boolean)
    .map(requirement);
  return (labels) => requirements.every((matches) => matches(labels));
}

function requirement(text: string): Requirement {
  const match = /^(!?)([^=!\s]+)\s*(?:(==|=|!=)\s*([^=!\s]*))?$/.exec(text);
  if (!match || (match[1] && match[3])) {
    throw new TypeError(
      `The in-memory API server cannot select labels by ${JSON.stringify(text)}: it knows ` +
        `"key=value", "key!=value", "key" and "!key"`,
    );
  }
  const [, not, key, op, value] = match as unknown as [string, string, string, string?, string?];
  if (!op) return not ? (labels) => !(key in labels) : (labels) => key in labels;
  return op === "!=" ? (labels) => labels[key] !== value : (labels) => labels[key] === value;
}
