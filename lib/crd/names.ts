/**
 * The naming rules of a CRD, checked before the API server sees it: group,
 * version, kind and the names derived from the kind. `defineKind` checks a
 * kind's names with them, and `kinglet init` the names it is given before it
 * writes a project, so both refuse what the API server would.
 *
 * @module
 */

/** A lower-case DNS label, as a plural, singular, short name or version must be (at most 63). */
export const DNS_LABEL: RegExp = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
/** A lower-case DNS subdomain with at least one dot, as a group must be (at most 253). */
export const DNS_SUBDOMAIN: RegExp =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
/** A kind in UpperCamelCase. */
export const KIND: RegExp = /^[A-Z][A-Za-z0-9]*$/;

/**
 * The plural of a kind as `kubectl` and kubebuilder spell it: lower case,
 * `-es` after s, x, z, ch and sh, `-ies` for a consonant and y.
 */
export function defaultPlural(kind: string): string {
  const singular = kind.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(singular)) return `${singular}es`;
  if (/[^aeiou]y$/.test(singular)) return `${singular.slice(0, -1)}ies`;
  return `${singular}s`;
}

/**
 * Throws unless the names are what the API server accepts.
 *
 * @throws {RangeError} naming the option and its value.
 */
export function checkNames(names: {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  shortNames: readonly string[];
  categories: readonly string[];
}): void {
  const { group, version, kind } = names;
  if (typeof group !== "string" || group.length > 253 || !DNS_SUBDOMAIN.test(group)) {
    refuse(kind, "group", group, "a lower-case DNS subdomain with at least one dot");
  }
  label(kind, "version", version);
  if (typeof kind !== "string" || !KIND.test(kind)) {
    refuse(kind, "kind", kind, "a name in UpperCamelCase, e.g. Backup");
  }
  label(kind, "plural", names.plural);
  label(kind, "singular", names.singular);
  names.shortNames.forEach((name, i) => label(kind, `shortNames[${i}]`, name));
  names.categories.forEach((name, i) => label(kind, `categories[${i}]`, name));
}

function label(kind: string, option: string, value: unknown): void {
  if (typeof value !== "string" || value.length > 63 || !DNS_LABEL.test(value)) {
    refuse(kind, option, value, "a lower-case DNS label (letters, digits, '-', at most 63)");
  }
}

/** The one way a bad option is reported. */
export function refuse(kind: unknown, option: string, value: unknown, expected: string): never {
  throw new RangeError(
    `Cannot define the kind ${typeof kind === "string" ? kind : "(no kind)"}: '${option}' ` +
      `must be ${expected}, got ${JSON.stringify(value) ?? String(value)}`,
  );
}
