/**
 * What `kinglet init` is told, checked all at once before a file is written,
 * and the names the templates derive from it. Each refusal says what to write
 * instead, since the one who reads it is typing a command line.
 *
 * @example
 * ```ts
 * import { projectNames } from "./names.ts";
 * const names = projectNames({ group: "example.dev", kind: "Mirror" });
 * names.plural; // "mirrors"
 * names.crdName; // "mirrors.example.dev"
 * names.resourceConst; // "MIRRORS"
 * ```
 *
 * @module
 */
import { defaultPlural, DNS_LABEL, DNS_SUBDOMAIN, KIND } from "../../crd/names.ts";
import { UsageError } from "../flags.ts";

/** What the command line names. */
export interface InitInput {
  group: string;
  kind: string;
  /** Defaults to the kind in lower case, pluralised as kubectl does (`mirrors`). */
  plural?: string;
  /** @default "v1alpha1" */
  version?: string;
  /** Whether the kind's objects live in a namespace. @default "Namespaced" */
  scope?: string;
}

/** The names every template is written from. */
export interface ProjectNames {
  group: string;
  version: string;
  kind: string;
  plural: string;
  /** `group/version`. */
  apiVersion: string;
  /** `<plural>.<group>`, the CRD's name. */
  crdName: string;
  /** The identifier of the `defineKind` constant of `src/schema.ts`, e.g. `mirrors`. */
  kindConst: string;
  /** The identifier of the `Resource` constant of `src/kind.ts`, e.g. `MIRRORS`. */
  resourceConst: string;
  /** The identifier of one object of the kind, e.g. `mirror`. */
  objectVar: string;
  /** The operator's name: its controller, field manager and label value, e.g. `mirror-operator`. */
  operator: string;
  /** The suffix of a child ConfigMap's name, e.g. `mirror`. */
  childSuffix: string;
  /**
   * Whether the kind is namespaced (`--scope Namespaced`, the default) or
   * cluster-scoped (`--scope Cluster`): then its spec names the namespace of
   * its ConfigMap.
   */
  namespaced: boolean;
}

/**
 * The longest kind whose operator's namespace, `<kind>-operator-system`, is a
 * DNS label, as its name (its units, its binary) must be too.
 */
const MAX_KIND = 63 - "-operator-system".length;

/** `v1`, `v1alpha1`, `v2beta3`: the versions Kubernetes orders by stability. */
const VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;

/**
 * Names the generated code imports from kinglet or declares beside the kind's
 * type: a kind spelt the same would not compile.
 */
const TAKEN = new Set([
  "ConfigMap",
  "ControllerSpec",
  "CustomObject",
  "FakeClock",
  "KubeObject",
  "Manager",
  "MemoryCluster",
  "Resource",
]);

/**
 * Constants the templates declare or import beside the `Resource` constant,
 * which a plural in upper case cannot become.
 */
const TAKEN_CONSTANTS = new Set([
  "CHILD",
  "CHILD_KEY",
  "CONFIG_MAPS",
  "CRD_FILE",
  "MANAGED_BY",
  "OPERATOR",
  "PROJECT",
]);

/**
 * Identifiers a plural or a kind in lower case cannot become: JavaScript's
 * reserved words, and the names the templates declare beside them.
 */
const UNUSABLE = new Set(
  ("arguments await break case catch class const continue debugger default delete do else enum " +
    "eval export extends false finally for function if implements import in instanceof interface " +
    "let new null package private protected public return static super switch this throw true " +
    "try typeof var void while with yield " +
    "assert children client clock cluster cm conditions configMap crd dir generation header " +
    "manager message name namespace operator ready running signal status stop stored").split(" "),
);

/**
 * Checks `input` and derives the names the project is written with.
 *
 * @throws {UsageError} naming the first bad value and what to write instead.
 */
export function projectNames(input: InitInput): ProjectNames {
  const { group, kind } = input;
  if (group.length > 253 || !DNS_SUBDOMAIN.test(group)) {
    throw new UsageError(
      `--group ${JSON.stringify(group)} is not an API group: write a lower-case DNS subdomain ` +
        `with at least one dot, a domain you own, such as example.dev or ops.example.com`,
    );
  }
  if (!KIND.test(kind)) {
    throw new UsageError(
      `--kind ${JSON.stringify(kind)} is not a kind: write it in UpperCamelCase, letters and ` +
        `digits starting with a capital, such as ${suggestKind(kind)}`,
    );
  }
  if (kind.length > MAX_KIND) {
    throw new UsageError(
      `--kind ${kind} is too long: it names the operator ${kind.toLowerCase()}-operator and its ` +
        `namespace ${kind.toLowerCase()}-operator-system, DNS labels of at most 63 characters; ` +
        `write a kind of at most ${MAX_KIND} characters`,
    );
  }
  if (TAKEN.has(kind)) {
    throw new UsageError(
      `--kind ${kind} is a name the generated code imports from kinglet: choose another, ` +
        `such as ${kind}Resource`,
    );
  }
  const plural = input.plural ?? defaultPlural(kind);
  if (plural.length > 63 || !DNS_LABEL.test(plural)) {
    throw new UsageError(
      `--plural ${JSON.stringify(plural)} is not a resource name: write a lower-case DNS label ` +
        `(letters, digits and '-', starting with a letter, at most 63), such as ` +
        `${defaultPlural(kind)}`,
    );
  }
  const version = input.version ?? "v1alpha1";
  if (!VERSION.test(version)) {
    throw new UsageError(
      `--version ${JSON.stringify(version)} is not a Kubernetes API version: write v1, v2, ` +
        `v1alpha1, v1beta2 or the like (v, a number, optionally alpha or beta and a number)`,
    );
  }
  const scope = input.scope ?? "Namespaced";
  if (scope !== "Namespaced" && scope !== "Cluster") {
    throw new UsageError(
      `--scope ${JSON.stringify(scope)} is not a scope: write Namespaced (the default: each ` +
        `${kind} lives in a namespace) or Cluster (cluster-scoped, as Namespaces and Nodes are)`,
    );
  }
  const camel = plural.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  const upper = plural.replaceAll("-", "_").toUpperCase();
  const singular = kind.toLowerCase();
  const lowerKind = kind[0]!.toLowerCase() + kind.slice(1);
  const objectVar = UNUSABLE.has(lowerKind) ? `${lowerKind}Object` : lowerKind;
  return {
    group,
    version,
    kind,
    plural,
    apiVersion: `${group}/${version}`,
    crdName: `${plural}.${group}`,
    kindConst: UNUSABLE.has(camel) || camel === objectVar ? `${camel}Kind` : camel,
    // Imported beside the kind's type: the two must differ in more than case to sort apart.
    resourceConst: TAKEN_CONSTANTS.has(upper) || upper === kind.toUpperCase()
      ? `${upper}_RESOURCE`
      : upper,
    objectVar,
    operator: `${singular}-operator`,
    childSuffix: singular,
    namespaced: scope === "Namespaced",
  };
}

/** The kind the user probably meant: `mirror` and `my-mirror` become `Mirror` and `MyMirror`. */
function suggestKind(kind: string): string {
  const words = kind.split(/[^A-Za-z0-9]+/).filter((w) => /^[A-Za-z]/.test(w));
  const fixed = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
  return fixed && KIND.test(fixed) ? fixed : "Mirror";
}
