/**
 * An operator's identity and least-privilege rights as manifests: its
 * ServiceAccount, a ClusterRole of the rules `controllerRules` derives from
 * its controller specs (plus the rules it declares), the Role of its leader
 * Lease (`leaderElectionRules`), and their bindings, each rule with the
 * reasons that put it there in a comment above it; then, where RBAC cannot
 * narrow what the ClusterRole grants to the operator's own objects, the
 * ValidatingAdmissionPolicy of `ownershipPolicy` and its binding, their
 * header saying what they confine and what they leave to RBAC.
 *
 * @example
 * ```ts
 * import { rbacObjects } from "./rbac_files.ts";
 * import { describeOperator } from "./operator.ts";
 * import { CONFIG_MAPS } from "../kube/mod.ts";
 * const operator = describeOperator({
 *   name: "mirror-operator",
 *   envPrefix: "MIRROR_",
 *   image: "ghcr.io/example/mirror-operator:0.1.0",
 *   controllers: [{ name: "mirror", resource: CONFIG_MAPS }],
 * });
 * rbacObjects(operator).map((o) => o.object.kind);
 * // ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]
 * ```
 *
 * @module
 */
import {
  CLUSTER_ROLE_BINDINGS,
  CLUSTER_ROLES,
  type KubeObject,
  NAMESPACES,
  type Resource,
  ROLE_BINDINGS,
  ROLES,
  SERVICE_ACCOUNTS,
  VALIDATING_ADMISSION_POLICIES,
  VALIDATING_ADMISSION_POLICY_BINDINGS,
} from "../kube/mod.ts";
import type { ControllerSpec } from "../runtime/controller/mod.ts";
import {
  controllerRules,
  type ExplainedRule,
  leaderElectionRules,
  ownershipPolicy,
  type RbacRule,
} from "../runtime/rbac/mod.ts";
import { commentedYaml } from "./_commented_yaml.ts";
import type { Operator } from "./operator.ts";
import {
  WEBHOOK_CONFIGURATIONS,
  webhookClusterRules,
  webhookSecretRules,
} from "./webhook_files.ts";

/** Where each kind of object an install applies is written: RBAC, its policy, webhooks. */
export const MANIFEST_RESOURCES: Readonly<Record<string, Resource>> = {
  Namespace: NAMESPACES,
  ServiceAccount: SERVICE_ACCOUNTS,
  ClusterRole: CLUSTER_ROLES,
  ClusterRoleBinding: CLUSTER_ROLE_BINDINGS,
  Role: ROLES,
  RoleBinding: ROLE_BINDINGS,
  ValidatingAdmissionPolicy: VALIDATING_ADMISSION_POLICIES,
  ValidatingAdmissionPolicyBinding: VALIDATING_ADMISSION_POLICY_BINDINGS,
  ...WEBHOOK_CONFIGURATIONS,
};

const RBAC = "rbac.authorization.k8s.io";

/** A manifest of the RBAC, its file in deploy/, and the comments it is written with. */
export interface RbacManifest {
  /** The file's name in deploy/, e.g. `clusterrole.yaml`. */
  file: string;
  /** The object as the API server takes it. */
  object:
    & { apiVersion: string; kind: string; metadata: Record<string, unknown> }
    & Record<
      string,
      unknown
    >;
  /** Paragraphs of the comment atop the file. */
  header: string[];
  /** Per rule, its reasons; empty for an object without rules. */
  reasons: string[][];
}

/**
 * The rules of the operator's ClusterRole, each with its reasons.
 *
 * @throws {TypeError} from `controllerRules`, naming the spec and the field it cannot derive.
 */
export function clusterRules(operator: Operator): ExplainedRule[] {
  // controllerRules reads a spec's declarations alone, which a DeployedController holds.
  const specs = operator.controllers as readonly unknown[] as ControllerSpec<KubeObject>[];
  return controllerRules(specs, { extra: [...operator.rules, ...webhookClusterRules(operator)] });
}

/** The Role of the webhook's certificate Secret and its binding, when it serves webhooks. */
function webhookRoleManifests(operator: Operator): RbacManifest[] {
  const rules = webhookSecretRules(operator);
  if (rules.length === 0) return [];
  const { name, namespace } = operator;
  return roleManifests(operator, {
    kind: "Role",
    role: `${name}-webhook-certificate`,
    file: "webhook-role",
    rules: mergeRules(rules),
    header: [
      `The certificate of ${name}'s webhooks: one Secret in ${namespace}, kept by ${name} ` +
      "(created when absent, rotated in place). Other Secrets stay out of reach but for " +
      "create, which RBAC cannot limit by name.",
    ],
  });
}

/**
 * A Role (in the operator's namespace) or ClusterRole of `rules` in `<file>.yaml`, and
 * `<file>binding.yaml` granting it to the operator's ServiceAccount.
 */
function roleManifests(operator: Operator, { kind, role, file, rules, header }: {
  kind: "Role" | "ClusterRole";
  role: string;
  file: string;
  rules: readonly ExplainedRule[];
  header: string[];
}): RbacManifest[] {
  const { name, namespace, serviceAccount } = operator;
  // Each manifest has metadata of its own: a caller changing one leaves the other alone.
  const metadata = () => ({
    name: role,
    ...(kind === "Role" && { namespace }),
    labels: { "app.kubernetes.io/name": name },
  });
  const scope = kind === "Role" ? `in ${namespace} only` : "in every namespace";
  return [
    {
      file: `${file}.yaml`,
      object: { apiVersion: `${RBAC}/v1`, kind, metadata: metadata(), rules: bare(rules) },
      header,
      reasons: rules.map((rule) => rule.reasons),
    },
    {
      file: `${file}binding.yaml`,
      object: {
        apiVersion: `${RBAC}/v1`,
        kind: `${kind}Binding`,
        metadata: metadata(),
        roleRef: { apiGroup: RBAC, kind, name: role },
        subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace }],
      },
      header: [`Grants ${file}.yaml to ${name}'s ServiceAccount, ${scope}.`],
      reasons: [],
    },
  ];
}

/** Declared rules with their reasons, as `controllerRules` explains them. */
function mergeRules(rules: readonly RbacRule[]): ExplainedRule[] {
  return controllerRules([], { extra: rules });
}

/**
 * The RBAC manifests, in the order they can be applied.
 *
 * @throws {TypeError} from `controllerRules`, naming the spec and the field it cannot derive.
 */
export function rbacObjects(operator: Operator): RbacManifest[] {
  const { name, namespace, serviceAccount: account, notes } = operator;
  const cluster = clusterRules(operator);
  const policy = ownershipManifests(operator);
  const proof = notes.rbacProof ? `Nothing else is granted: ${notes.rbacProof}` : "Nothing else " +
    "is granted.";
  return [
    {
      file: "serviceaccount.yaml",
      object: {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: account, namespace, labels: { "app.kubernetes.io/name": name } },
        automountServiceAccountToken: false,
      },
      header: [
        `${name}'s identity in the cluster; clusterrole.yaml and role.yaml say what it may do.`,
      ],
      reasons: [],
    },
    ...roleManifests(operator, {
      kind: "ClusterRole",
      role: name,
      file: "clusterrole",
      rules: cluster,
      header: [
        `What ${name} does in every namespace, verb by verb, derived from what its controllers ` +
        "reconcile, own and watch and what their reconciles do by client; each rule says why. " +
        proof,
        ...(notes.clusterRole ?? []),
        ...(policy.length > 0
          ? [
            "RBAC cannot narrow a verb to the objects the operator owns: what these rules let it " +
            "write beyond its own kinds, validatingadmissionpolicy.yaml confines to its own objects.",
          ]
          : []),
      ],
    }),
    ...roleManifests(operator, {
      kind: "Role",
      role: `${name}-leader-election`,
      file: "role",
      rules: leaderElectionRules(operator.leaseName),
      header: [
        `Leader election (--leader-elect): one Lease in ${namespace}${
          notes.leaseNamespaceFlag ? `, the default ${notes.leaseNamespaceFlag}` : ""
        }. Leases of other components stay out of reach.`,
      ],
    }),
    ...webhookRoleManifests(operator),
    ...policy,
  ];
}

/**
 * The ValidatingAdmissionPolicy that admits the writes of the operator's
 * ServiceAccount only to objects it owns, and its binding; none when it
 * writes nothing but its primaries and Events.
 *
 * @throws {TypeError} from `controllerRules`, naming the spec and the field it cannot derive.
 */
export function ownershipManifests(operator: Operator): RbacManifest[] {
  const { name, namespace, serviceAccount } = operator;
  const { policy, binding, confined, unconfined } = ownershipPolicy(operator.controllers, {
    name: `${name}-owned-only`,
    username: `system:serviceaccount:${namespace}:${serviceAccount}`,
    rules: [...clusterRules(operator), ...webhookPolicyRules(operator)],
    labels: { "app.kubernetes.io/name": name },
  });
  if (confined.length === 0) return [];
  const writes = confined.map(({ resource, operations }) =>
    `${resource} (${operations.map((op) => op.toLowerCase()).join(", ")})`
  );
  const left = [...new Set(unconfined.map(({ why }) => why))].map((why) =>
    `${unconfined.filter((u) => u.why === why).map((u) => u.resource).join(", ")}: ${why}`
  );
  return [
    {
      file: "validatingadmissionpolicy.yaml",
      object: policy,
      header: [
        `Least privilege past RBAC. clusterrole.yaml lets ${name} write these kinds in every ` +
        "namespace (or cluster-wide), which RBAC cannot narrow to the objects it owns; this " +
        `policy admits the writes of ${name}'s ServiceAccount (in a pod or on a node, the same ` +
        "user) only to objects that are its own: labelled kinglet.dev/owner-kind with one of " +
        "its kinds, or with a controller reference to one. A create must make one of its own, " +
        "an update must find one and leave one (adding the label to another's object is " +
        "refused), a delete must find one, or an object owned by a kind it owns (what its " +
        `children's controllers make for them). Confined: ${writes.join("; ")}.`,
        `Left to RBAC: ${left.join("; ")}. Reads are never confined.`,
        "Needs Kubernetes 1.30 or later (admissionregistration.k8s.io/v1). A refusal names " +
        "the policy and says what was refused and why.",
      ],
      reasons: [],
    },
    {
      file: "validatingadmissionpolicybinding.yaml",
      object: binding,
      header: [
        `Applies validatingadmissionpolicy.yaml to every request of ${name}'s ServiceAccount: ` +
        "a refused write is denied (Deny), never only warned or audited.",
      ],
      reasons: [],
    },
  ];
}

/**
 * What the policy must know of the webhook's Secret: the Role lets the
 * operator create any Secret in its namespace, and the Secret is labelled
 * managed-by, not owned, so its create and its updates are the operator's
 * by name (excluded from what the policy confines), every other create of
 * a Secret must make one the operator owns.
 */
function webhookPolicyRules(operator: Operator): RbacRule[] {
  const rules = webhookSecretRules(operator);
  return rules.map((rule) =>
    rule.resourceNames ? { ...rule, verbs: ["create", ...rule.verbs] } : rule
  );
}

/**
 * Each RBAC manifest's file name and content, commented.
 *
 * @throws {TypeError} from `controllerRules`, naming the spec and the field it cannot derive.
 */
export function rbacFiles(operator: Operator): Map<string, string> {
  const generated = `Generated by \`deno task deploy\` from ${
    operator.notes.source ?? "scripts/deploy.ts"
  } and the controller specs. Do not edit.`;
  const files = new Map<string, string>();
  for (const { file, object, header, reasons } of rbacObjects(operator)) {
    const comments: Record<string, readonly string[]> = object.kind === "ServiceAccount"
      ? {
        automountServiceAccountToken: [
          `Only ${operator.name}'s own pod mounts the token (deployment.yaml asks for it).`,
        ],
      }
      : Object.fromEntries(reasons.map((why, i) => [`rules[${i}]`, why]));
    files.set(file, commentedYaml(object, { header: [generated, ...header], comments }));
  }
  return files;
}

/** `rules` as a Role holds them: without their reasons and scope. */
function bare(rules: readonly ExplainedRule[]) {
  return rules.map(({ reasons: _, clusterScoped: __, ...rule }) => rule);
}
