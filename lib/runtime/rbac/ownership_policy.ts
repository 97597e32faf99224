/**
 * Least privilege past RBAC: a ValidatingAdmissionPolicy
 * (`admissionregistration.k8s.io/v1`, GA since Kubernetes 1.30) and its
 * binding that admit an operator's writes only to objects it owns.
 *
 * RBAC grants a verb on a kind, in one namespace or in all: it cannot say
 * "patch only the Namespaces you made", nor "delete only the claims of your
 * own databases". {@link ownershipPolicy} takes back, for one user (the
 * operator's ServiceAccount), what its rules grant beyond its own objects.
 * An object is the operator's when it carries the owner label
 * `kinglet.dev/owner-kind` naming one of its primary kinds (what the runtime
 * writes on children it owns `anywhere`), or a controller reference to an
 * object of one of its primary kinds. For every kind its rules let it write,
 * but its primaries, the policy refuses:
 *
 * - a create of an object that is not its own;
 * - an update (a patch or a server-side apply included) of an object that
 *   was not its own, or that would no longer be (adding the owner label to
 *   someone else's object is refused: the object was not its own);
 * - a delete of an object that is not its own, nor carries an owner
 *   reference to an object of a kind it owns (what its children's own
 *   controllers make for them, such as the volume claims of its
 *   StatefulSets: CEL cannot look that owner up, so any owner of that kind
 *   passes).
 *
 * What it leaves to RBAC, and says so in `unconfined`: the primaries (what
 * the operator reconciles: their status, their finalizer), its Events (an
 * Event carries no owner), objects its rules already name
 * (`resourceNames`, excluded by name where the kind is confined besides), reviews (TokenReview, SubjectAccessReview: asked,
 * never stored), and subresources other than `status` (their requests carry
 * no metadata of the object to check). Reads are never confined.
 *
 * What the caller must know:
 *
 * - It matches the user by name (`request.userInfo.username`); a node's
 *   credentials of the same ServiceAccount are the same user.
 * - `validationActions: [Deny]` and `failurePolicy: Fail`: an expression
 *   that cannot be evaluated refuses the write rather than let it through.
 * - The API server applies a new policy a moment after its binding is
 *   written (its informers); a refusal names the policy and its binding,
 *   then says what was refused and why.
 * - Only CEL of Kubernetes 1.30 is used (`has`, `in`, `exists`,
 *   `startsWith`), each list walked once per request.
 *
 * @example
 * ```ts
 * import { ownershipPolicy } from "./ownership_policy.ts";
 * import { DEPLOYMENTS, NAMESPACES, type KubeObject } from "../../kube/mod.ts";
 * const sites = {
 *   name: "sites",
 *   resource: { group: "example.com", version: "v1", plural: "sites", kind: "Site", namespaced: false },
 *   owns: [{ resource: NAMESPACES }, { resource: DEPLOYMENTS, anywhere: true }],
 *   reconcile: (_object: KubeObject) => Promise.resolve({}),
 * };
 * const { confined } = ownershipPolicy([sites], {
 *   name: "sites-owned-only",
 *   username: "system:serviceaccount:sites-system:sites",
 * });
 * confined.map(({ resource, operations }) => `${resource} ${operations}`);
 * // ["namespaces CREATE,UPDATE", "deployments CREATE,UPDATE,DELETE"]
 * ```
 *
 * @module
 */
import type { KubeObject, Resource } from "../../kube/types.ts";
import { OWNER_LABELS, ownerKind } from "../children/owner_labels.ts";
import type { PolicyRule } from "./policy_rule.ts";
import { controllerRules, type RbacSpec } from "./rbac.ts";

const ADMISSION = "admissionregistration.k8s.io";

type Kind = Pick<Resource, "group" | "kind" | "plural">;

/**
 * What {@link ownershipPolicy} reads of a controller spec: its primary
 * kind and the kinds it owns. A `ControllerSpec` of any kind is one.
 */
export interface OwnershipSpec {
  /** The controller's name. */
  name: string;
  /** Its primary kind: the owner of what it writes. */
  resource: Pick<Resource, "group" | "kind" | "plural">;
  /** The kinds it owns. */
  owns?: readonly { resource: Pick<Resource, "group" | "kind" | "plural"> }[];
}

/** Options of {@link ownershipPolicy}. */
export interface OwnershipPolicyOptions {
  /** The name of the policy and of its binding, e.g. `mirror-operator-owned-only`. */
  name: string;
  /** The user it confines, e.g. `system:serviceaccount:mirror-operator-system:mirror-operator`. */
  username: string;
  /**
   * What RBAC grants the user besides its leader Lease. Defaults to
   * `controllerRules(specs)`.
   */
  rules?: readonly PolicyRule[];
  /** Labels of the policy and the binding. @default none */
  labels?: Readonly<Record<string, string>>;
}

/** A resource whose writes the policy confines to the operator's own objects. */
export interface ConfinedResource {
  /** The API group; `""` is the core group. */
  group: string;
  /** The plural, or `plural/status`. */
  resource: string;
  /** The admission operations confined: `CREATE`, `UPDATE` (a patch too), `DELETE`. */
  operations: string[];
}

/** A resource the operator writes that the policy leaves to RBAC, and why. */
export interface UnconfinedResource {
  /** The API group; `""` is the core group. */
  group: string;
  /** The plural, or `plural/subresource`. */
  resource: string;
  /** Why, one phrase: "the primary resource", "its Events", … */
  why: string;
}

/** An `admissionregistration.k8s.io/v1` object, as the API server takes it. */
export interface AdmissionObject extends KubeObject {
  /** `admissionregistration.k8s.io/v1`. */
  apiVersion: string;
  /** `ValidatingAdmissionPolicy` or `ValidatingAdmissionPolicyBinding`. */
  kind: string;
  /** Its name and labels: it is cluster-scoped. */
  metadata: { name: string; labels?: Record<string, string> };
  /** The policy or the binding. */
  spec: Record<string, unknown>;
}

/** The policy, its binding, and what it confines and leaves to RBAC. */
export interface OwnershipPolicy {
  /** The ValidatingAdmissionPolicy. */
  policy: AdmissionObject;
  /** Its ValidatingAdmissionPolicyBinding, `validationActions: [Deny]`. */
  binding: AdmissionObject;
  /** What it confines, in the order of the rules. Empty: the operator writes nothing else. */
  confined: ConfinedResource[];
  /** What the operator writes that it leaves to RBAC. */
  unconfined: UnconfinedResource[];
}

const OPERATION_OF: Readonly<Record<string, string>> = {
  create: "CREATE",
  update: "UPDATE",
  patch: "UPDATE",
  delete: "DELETE",
  deletecollection: "DELETE",
};
const OPERATIONS = ["CREATE", "UPDATE", "DELETE"];
const REVIEW_GROUPS = new Set(["authentication.k8s.io", "authorization.k8s.io"]);

/**
 * The ValidatingAdmissionPolicy and binding that confine `username` to the
 * objects the controllers of `specs` own; see the module documentation.
 *
 * @throws {TypeError} when no spec is given, a spec's resource has no
 * `kind`, or `name` or `username` is empty; from `controllerRules` when
 * `rules` is not given and a spec cannot be derived.
 */
export function ownershipPolicy(
  specs: readonly OwnershipSpec[],
  options: OwnershipPolicyOptions,
): OwnershipPolicy {
  const { name, username } = options;
  const refuse = (what: string): never => {
    throw new TypeError(`Cannot derive the ownership policy ${JSON.stringify(name)}: ${what}`);
  };
  if (!name) refuse("'name' is empty");
  if (!username) refuse("'username' is empty: name the user it confines");
  if (specs.length === 0) refuse("no controller specs: name the kinds that own what it writes");
  const primaries = unique(specs.map((spec, i) => kindOf(spec.resource, `specs[${i}]`, refuse)));
  const children = unique(
    specs.flatMap((spec, i) =>
      (spec.owns ?? []).map((o, j) => kindOf(o.resource, `specs[${i}].owns[${j}]`, refuse))
    ),
  ).filter((kind) => !primaries.some((p) => sameKind(p, kind)));
  const rules = options.rules ?? controllerRules(specs as readonly unknown[] as RbacSpec[]);
  const { confined, unconfined, named } = partition(rules, primaries);
  // Objects a rule names are RBAC's even where another rule lets the kind be written at large.
  const excluded = named.filter((n) => confined.some((c) => `${c.group}/${c.resource}` === n.key));
  const labels = options.labels ? { labels: { ...options.labels } } : {};
  const deletes = confined.some((c) => c.operations.includes("DELETE")) && children.length > 0;
  // A ServiceAccount's name, as messages say it: system:serviceaccount:<namespace>:<name>.
  const who = username.split(":").at(-1)!;
  const policy: AdmissionObject = {
    apiVersion: `${ADMISSION}/v1`,
    kind: "ValidatingAdmissionPolicy",
    metadata: { name, ...labels },
    spec: {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: resourceRules(confined),
        ...(excluded.length > 0 && { excludeResourceRules: excluded.map((n) => n.rule) }),
      },
      matchConditions: [{
        name: "operator",
        expression: `request.userInfo.username == ${cel(username)}`,
      }],
      variables: [
        { name: "owned", expression: owned("object", primaries) },
        { name: "wasOwned", expression: owned("oldObject", primaries) },
        ...(deletes
          ? [{ name: "madeForChild", expression: referenced("oldObject", children, false) }]
          : []),
      ],
      validations: validations(who, primaries, deletes ? children : []),
    },
  };
  const binding: AdmissionObject = {
    apiVersion: `${ADMISSION}/v1`,
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name, ...labels },
    spec: { policyName: name, validationActions: ["Deny"] },
  };
  return { policy, binding, confined, unconfined };
}

/** Splits what `rules` let the user write into what the policy confines and what it leaves. */
function partition(rules: readonly PolicyRule[], primaries: readonly Kind[]) {
  const confined = new Map<string, ConfinedResource>();
  const unconfined = new Map<string, UnconfinedResource>();
  const named: { key: string; rule: Record<string, string[]> }[] = [];
  for (const rule of rules) {
    const operations = sortOperations(rule.verbs.flatMap((verb) => OPERATION_OF[verb] ?? []));
    if (operations.length === 0) continue;
    for (const group of rule.apiGroups) {
      for (const resource of rule.resources) {
        const key = `${group}/${resource}`;
        if (rule.resourceNames) {
          named.push({
            key,
            rule: {
              apiGroups: [group],
              apiVersions: ["*"],
              operations,
              resources: [resource],
              resourceNames: [...rule.resourceNames],
            },
          });
        }
        const [plural, subresource] = resource.split("/", 2) as [string, string?];
        const why = primaries.some((p) => p.group === group && p.plural === plural)
          ? "the primary resource, which the operator reconciles"
          : group === "events.k8s.io" || (group === "" && plural === "events")
          ? "its Events, which carry no owner"
          : rule.resourceNames
          ? "RBAC names the objects already"
          : REVIEW_GROUPS.has(group)
          ? "a review, asked and answered, never stored"
          : subresource !== undefined && subresource !== "status"
          ? "a subresource whose request carries none of the object's metadata"
          : undefined;
        if (why !== undefined) {
          if (!unconfined.has(key)) unconfined.set(key, { group, resource, why });
          continue;
        }
        const entry = confined.get(key);
        if (entry) entry.operations = sortOperations([...entry.operations, ...operations]);
        else confined.set(key, { group, resource, operations });
      }
    }
  }
  return { confined: [...confined.values()], unconfined: [...unconfined.values()], named };
}

/** The policy's `resourceRules`: one per API group and set of operations. */
function resourceRules(confined: readonly ConfinedResource[]) {
  const rules = new Map<string, { group: string; operations: string[]; resources: string[] }>();
  for (const { group, resource, operations } of confined) {
    const key = JSON.stringify([group, operations]);
    const rule = rules.get(key);
    if (rule) rule.resources.push(resource);
    else rules.set(key, { group, operations, resources: [resource] });
  }
  return [...rules.values()].map(({ group, operations, resources }) => ({
    apiGroups: [group],
    apiVersions: ["*"],
    operations,
    resources,
  }));
}

/**
 * The three validations, one per operation, each saying what it refuses and
 * why; `children` are the kinds whose dependents a delete may take.
 */
function validations(who: string, primaries: readonly Kind[], children: readonly Kind[]) {
  // A Namespace's request carries its own name as the namespace.
  const what = "request.resource.resource + ' ' + (request.namespace == '' || " +
    "request.resource.resource == 'namespaces' ? '' : request.namespace + '/') + request.name";
  const labelled = `labelled ${OWNER_LABELS.kind} with ${listed(primaries.map(ownerKind), "or")}`;
  const controlled = `controlled by a ${listed(primaries.map((p) => p.kind), "or")}`;
  const writes = `; ${who} writes only objects ${labelled} or ${controlled}`;
  const deletes = children.length
    ? `; ${who} deletes only objects ${labelled}, ${controlled}, or owned by a ${
      listed(children.map((c) => c.kind), "or")
    }`
    : writes;
  return [
    {
      expression: "request.operation != 'CREATE' || variables.owned",
      messageExpression: `${cel(`${who} may not create `)} + ${what} + ` +
        cel(`: it would not be owned by ${who}${writes}`),
      reason: "Forbidden",
    },
    {
      expression: "request.operation != 'UPDATE' || (variables.wasOwned && variables.owned)",
      messageExpression: `${cel(`${who} may not change `)} + ${what} + ` +
        `(variables.wasOwned ? ${cel(` so that it is no longer owned by ${who}`)} : ` +
        `${cel(`: it is not owned by ${who}`)}) + ${cel(writes)}`,
      reason: "Forbidden",
    },
    {
      expression: `request.operation != 'DELETE' || variables.wasOwned${
        children.length ? " || variables.madeForChild" : ""
      }`,
      messageExpression: `${cel(`${who} may not delete `)} + ${what} + ` +
        cel(`: it is not owned by ${who}${deletes}`),
      reason: "Forbidden",
    },
  ];
}

/** CEL: whether `o` carries the owner label or a controller reference to one of `primaries`. */
function owned(o: string, primaries: readonly Kind[]): string {
  const key = cel(OWNER_LABELS.kind);
  const kinds = primaries.map((p) => cel(ownerKind(p))).join(", ");
  return `(has(${o}.metadata.labels) && ${key} in ${o}.metadata.labels && ` +
    `${o}.metadata.labels[${key}] in [${kinds}]) || ${referenced(o, primaries, true)}`;
}

/** CEL: whether `o` has an owner reference (a controller one, if asked) to one of `kinds`. */
function referenced(o: string, kinds: readonly Kind[], controller: boolean): string {
  const to = kinds.map((k) =>
    `(r.kind == ${cel(k.kind)} && ${
      k.group ? `r.apiVersion.startsWith(${cel(`${k.group}/`)})` : "r.apiVersion == 'v1'"
    })`
  ).join(" || ");
  const test = controller ? `has(r.controller) && r.controller && (${to})` : to;
  return `has(${o}.metadata.ownerReferences) && ${o}.metadata.ownerReferences.exists(r, ${test})`;
}

/** `text` as a CEL string literal, single-quoted (YAML quotes the expression in double quotes). */
function cel(text: string): string {
  return `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

function listed(words: readonly string[], last: string): string {
  return words.length < 2
    ? words.join("")
    : `${words.slice(0, -1).join(", ")} ${last} ${words.at(-1)}`;
}

function sortOperations(operations: readonly string[]): string[] {
  return OPERATIONS.filter((op) => operations.includes(op));
}

function sameKind(a: Kind, b: Kind): boolean {
  return a.group === b.group && a.kind === b.kind;
}

function unique(kinds: readonly Kind[]): Kind[] {
  return kinds.filter((kind, i) => kinds.findIndex((k) => sameKind(k, kind)) === i);
}

function kindOf(resource: Kind | undefined, where: string, refuse: (what: string) => never): Kind {
  if (typeof resource?.kind !== "string" || resource.kind === "") {
    refuse(`'${where}.resource' has no 'kind': give the kind its owner references name`);
  }
  return resource!;
}
