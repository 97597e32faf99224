/**
 * The files of a project that come from the scaffold: kinglet's `scaffold/`
 * folder, the project `kinglet init --group example.org --kind Widget` writes,
 * which is formatted, linted, type-checked and tested as kinglet's own code
 * is. `deno task scaffold` turns it into `_scaffold.ts` (with the
 * cluster-scoped variant of the files where `--scope Cluster` differs), and
 * a drift test fails when the two differ.
 *
 * The author's names go in by exact substitution: each name the scaffold
 * spells ({@link substitutions}) is replaced by the author's, at each place
 * the longest that matches, in one pass, so that no name written is replaced
 * again. Where two names of the scaffold are spelt alike, their places tell
 * them apart: `widget` is the object's variable, `-widget` the suffix of its
 * ConfigMap's name; `widgets` is the `defineKind` constant, `"widgets"` (a
 * string) the plural. Lines that longer names make too long, `deno fmt`
 * breaks once init has written them.
 *
 * @example
 * ```ts
 * import { scaffoldFiles } from "./scaffold.ts";
 * import { projectNames } from "./names.ts";
 * const names = projectNames({ group: "example.dev", kind: "Mirror" });
 * const files = scaffoldFiles(names, { source: "../kinglet" });
 * files.get("src/kind.ts")!.includes('plural: "mirrors",'); // true
 * ```
 *
 * @module
 */
import { envPrefix } from "../../build/grants.ts";
import type { KingletRecord } from "../../build/vendor.ts";
import {
  CLUSTER_FILES,
  CLUSTER_WEBHOOK_FILES,
  NAMESPACED_FILES,
  WEBHOOK_FILES,
} from "./_scaffold.ts";
import { kingletParagraph } from "./dependency.ts";
import { type ProjectNames, projectNames } from "./names.ts";

/** The names the scaffold is written with: for these, init writes it unchanged. */
export const SCAFFOLD_INPUT = { group: "example.org", kind: "Widget" } as const;

/** The kinglet the scaffold's README names: its own checkout, one folder up. */
export const SCAFFOLD_KINGLET: KingletRecord = { source: ".." };

/** A text of the scaffold and the text that replaces it. */
export type Substitution = readonly [from: string, to: string];

/** The identifier of the controller constant, e.g. `mirrorController`. */
function controllerConst(names: ProjectNames): string {
  return `${names.kind[0]!.toLowerCase()}${names.kind.slice(1)}Controller`;
}

/**
 * Each name the scaffold spells, with the one of `names` that replaces it.
 * Names made of others (the API version, the CRD's name, the operator's
 * namespace and Lease) follow from their parts, but where a part alone would
 * mean another name (`widgets` in `widgets.example.org`).
 */
export function substitutions(names: ProjectNames): Substitution[] {
  const scaffold = projectNames(SCAFFOLD_INPUT);
  const pair = (of: (n: ProjectNames) => string): Substitution => [of(scaffold), of(names)];
  return [
    pair(controllerConst),
    pair((n) => n.operator),
    pair((n) => envPrefix(n.operator)),
    pair((n) => n.crdName),
    pair((n) => JSON.stringify(n.plural)),
    pair((n) => n.group),
    pair((n) => n.version),
    pair((n) => n.resourceConst),
    pair((n) => n.kindConst),
    pair((n) => `-${n.childSuffix}`),
    pair((n) => n.objectVar),
    pair((n) => n.kind),
  ];
}

/**
 * `text` with each `from` of `pairs` replaced by its `to`: at each place the
 * longest `from` that starts there, in one pass.
 *
 * @example
 * ```ts
 * import { substitute } from "./scaffold.ts";
 * substitute("widgets of a widget", [["widget", "mirror"], ["widgets", "mirrors"]]);
 * // "mirrors of a mirror"
 * ```
 */
export function substitute(text: string, pairs: readonly Substitution[]): string {
  const longestFirst = [...pairs].sort(([a], [b]) => b.length - a.length);
  let out = "";
  let copied = 0;
  for (let at = 0; at < text.length;) {
    const hit = longestFirst.find(([from]) => text.startsWith(from, at));
    if (!hit) {
      at++;
      continue;
    }
    out += text.slice(copied, at) + hit[1];
    at += hit[0].length;
    copied = at;
  }
  return out + text.slice(copied);
}

/** The scaffold's files that only a project with a webhook holds. */
export const WEBHOOK_ONLY_FILES: readonly string[] = [
  "src/webhook.ts",
  "tests/unit/webhook_test.ts",
];

/** What a project holds besides its names and its kinglet. */
export interface ScaffoldOptions {
  /**
   * An admission webhook (`kinglet init --webhook`): src/webhook.ts and its
   * test, served by main.ts and declared in src/operator.ts. @default false
   */
  webhook?: boolean;
}

/**
 * The scaffold's files for `names`, by path: its cluster-scoped variant for a
 * cluster-scoped kind, its webhook variant with `options.webhook` (and its
 * webhook's files only then), the README's paragraph on kinglet for
 * `kinglet`, and the test of a vendored kinglet only when kinglet is vendored.
 */
export function scaffoldFiles(
  names: ProjectNames,
  kinglet: KingletRecord,
  options: ScaffoldOptions = {},
): Map<string, string> {
  const pairs = [
    ...substitutions(names),
    [kingletParagraph(SCAFFOLD_KINGLET), kingletParagraph(kinglet)] as const,
  ];
  const files = { ...NAMESPACED_FILES, ...(names.namespaced ? {} : CLUSTER_FILES) };
  if (options.webhook) {
    Object.assign(files, names.namespaced ? WEBHOOK_FILES : CLUSTER_WEBHOOK_FILES);
  } else for (const path of WEBHOOK_ONLY_FILES) delete files[path];
  if (!kinglet.sha256) delete files["tests/unit/kinglet_test.ts"];
  return new Map(Object.entries(files).map(([path, text]) => [path, substitute(text, pairs)]));
}
