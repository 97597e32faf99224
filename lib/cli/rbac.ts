/**
 * kinglet's own identity and rights, as objects: the ServiceAccount, the
 * ClusterRole derived from the specs of its three controllers (plus what the
 * CLI itself needs), the Role of the leader Lease, their bindings, and the
 * ValidatingAdmissionPolicy (and its binding) that admits kinglet's writes
 * only to objects it owns.
 * `deno task deploy` writes them to deploy/ with the reasons of every rule
 * (a unit test fails when the two drift apart); `kinglet install
 * --node-kubeconfig` applies them, so that a node runs kinglet with them
 * instead of the cluster-admin kubeconfig of k3s.
 *
 * @example
 * ```ts
 * import { kingletRbac } from "./rbac.ts";
 * kingletRbac().map((o) => o.kind);
 * // ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
 * //  "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
 * ```
 *
 * @module
 */
import {
  CLUSTER_ROLE_BINDINGS,
  CLUSTER_ROLES,
  CUSTOM_RESOURCE_DEFINITIONS,
  resourceName,
  ROLE_BINDINGS,
  ROLES,
  SERVICE_ACCOUNTS,
  SUBJECT_ACCESS_REVIEWS,
  TOKEN_REVIEWS,
  VALIDATING_ADMISSION_POLICIES,
  VALIDATING_ADMISSION_POLICY_BINDINGS,
} from "../kube/resources.ts";
import type { KubeObject, Resource } from "../kube/types.ts";
import {
  controllerRules,
  type ExplainedRule,
  leaderElectionRules,
  ownershipPolicy,
  type PolicyRule,
  type RbacRule,
} from "../runtime/rbac/mod.ts";
import { CONTROLLERS } from "./run.ts";
import { CONTROLLER_NAMES, RUN_FLAGS } from "./run_flags.ts";

/** Where deploy/ puts kinglet: its ServiceAccount, Lease and Role live here. */
export const KINGLET_NAMESPACE = "kinglet-system";
/** The name of kinglet's ServiceAccount, ClusterRole and ClusterRoleBinding. */
export const KINGLET_ACCOUNT = "kinglet";
/** The name of the Role and the RoleBinding of kinglet's leader Lease. */
export const LEADER_ELECTION_ROLE = "kinglet-leader-election";
/** The name of the ValidatingAdmissionPolicy that confines kinglet to what it owns, and of its binding. */
export const OWNERSHIP_POLICY = "kinglet-owned-only";

const RBAC = "rbac.authorization.k8s.io";
const LABELS = { "app.kubernetes.io/name": "kinglet" };

/**
 * What the CLI itself does, beside the controllers of `primaries`: read
 * their CRDs at start-up, review the tokens of who scrapes it.
 */
export function cliRules(primaries: readonly Resource[]): RbacRule[] {
  const review = (resource: Resource): RbacRule => ({
    apiGroups: [resource.group],
    resources: [resource.plural],
    verbs: ["create"],
    clusterScoped: true,
    reason: "/metrics and /debug/cache on the pod network answer only a bearer token the API " +
      "server authenticates (TokenReview) and allows to get the path (SubjectAccessReview), as " +
      "controller-runtime's secure metrics do; asked, never read back",
  });
  return [
    {
      apiGroups: [CUSTOM_RESOURCE_DEFINITIONS.group],
      resources: [CUSTOM_RESOURCE_DEFINITIONS.plural],
      resourceNames: primaries.map(resourceName),
      verbs: ["get"],
      clusterScoped: true,
      reason: "at start-up, kinglet run reads its own CRDs by name to say when one is missing or " +
        "older than the binary (the kinglet.dev/schema-hash annotation)",
    },
    review(TOKEN_REVIEWS),
    review(SUBJECT_ACCESS_REVIEWS),
  ];
}

/**
 * The rules of the `kinglet` ClusterRole, each with its reasons: those
 * `controllerRules` derives from the specs of every controller kinglet runs,
 * then the CLI's own.
 *
 * @example
 * ```ts
 * import { kingletClusterRules } from "./rbac.ts";
 * kingletClusterRules()[0]?.resources; // ["webapps", "inferenceservices"]
 * ```
 */
export function kingletClusterRules(): ExplainedRule[] {
  const specs = kingletSpecs();
  return controllerRules(specs, { extra: cliRules(specs.map((spec) => spec.resource)) });
}

function kingletSpecs() {
  return CONTROLLER_NAMES.map((name) => CONTROLLERS[name]());
}

/**
 * The rules of the Role of kinglet's leader Lease (`--lease-name`'s default),
 * each with its reasons.
 *
 * @example
 * ```ts
 * import { kingletLeaderRules } from "./rbac.ts";
 * kingletLeaderRules()[1]?.resourceNames; // ["kinglet-leader"]
 * ```
 */
export function kingletLeaderRules(): ExplainedRule[] {
  const lease = RUN_FLAGS.find((flag) => flag.name === "lease-name")?.default;
  return leaderElectionRules(lease ?? "");
}

/** `rules` as a Role holds them: without their reasons and scope. */
function bare(rules: readonly ExplainedRule[]): PolicyRule[] {
  return rules.map(({ reasons: _, clusterScoped: __, ...rule }) => rule);
}

/** Options of {@link kingletRbac}. */
export interface KingletRbacOptions {
  /**
   * Confines kinglet to these namespaces, for a kinglet run with
   * `--namespace`: what it does in a namespace (its kinds, their children,
   * Secrets and PersistentVolumeClaims included, Events) is granted by a Role
   * `kinglet` and a RoleBinding in each, and the ClusterRole keeps only what
   * is in no namespace (its CRDs by name, token and access reviews).
   * Defaults to none: the ClusterRole grants everything, in every namespace.
   */
  watchNamespaces?: readonly string[];
}

/**
 * The objects, in the order they can be applied, each with the resource it
 * is written to; `namespace` is kinglet's own (its ServiceAccount, Lease and
 * leader Role).
 *
 * @throws {RangeError} when a name in `watchNamespaces` is empty.
 */
export function kingletRbac(
  namespace: string = KINGLET_NAMESPACE,
  options: KingletRbacOptions = {},
): (KubeObject & { resource: Resource })[] {
  const subjects = [{ kind: "ServiceAccount", name: KINGLET_ACCOUNT, namespace }];
  const meta = (name: string, ns?: string) => ({
    name,
    ...(ns !== undefined && { namespace: ns }),
    labels: { ...LABELS },
  });
  const confined = options.watchNamespaces ?? [];
  if (confined.some((ns) => !ns)) {
    throw new RangeError(
      `Cannot confine kinglet's RBAC: a namespace to watch is empty, got ${
        JSON.stringify(confined)
      }`,
    );
  }
  const rules = kingletClusterRules();
  const clusterRules = confined.length ? rules.filter((rule) => rule.clusterScoped) : rules;
  const { policy, binding } = ownershipPolicy(kingletSpecs(), {
    name: OWNERSHIP_POLICY,
    username: `system:serviceaccount:${namespace}:${KINGLET_ACCOUNT}`,
    rules,
    labels: LABELS,
  });
  const namespaced = confined.flatMap((ns) => [
    {
      resource: ROLES,
      apiVersion: `${RBAC}/v1`,
      kind: "Role",
      metadata: meta(KINGLET_ACCOUNT, ns),
      rules: bare(rules.filter((rule) => !rule.clusterScoped)),
    },
    {
      resource: ROLE_BINDINGS,
      apiVersion: `${RBAC}/v1`,
      kind: "RoleBinding",
      metadata: meta(KINGLET_ACCOUNT, ns),
      roleRef: { apiGroup: RBAC, kind: "Role", name: KINGLET_ACCOUNT },
      subjects,
    },
  ]);
  return [
    {
      resource: SERVICE_ACCOUNTS,
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: meta(KINGLET_ACCOUNT, namespace),
      automountServiceAccountToken: false,
    },
    {
      resource: CLUSTER_ROLES,
      apiVersion: `${RBAC}/v1`,
      kind: "ClusterRole",
      metadata: meta(KINGLET_ACCOUNT),
      rules: bare(clusterRules),
    },
    {
      resource: CLUSTER_ROLE_BINDINGS,
      apiVersion: `${RBAC}/v1`,
      kind: "ClusterRoleBinding",
      metadata: meta(KINGLET_ACCOUNT),
      roleRef: { apiGroup: RBAC, kind: "ClusterRole", name: KINGLET_ACCOUNT },
      subjects,
    },
    ...namespaced,
    {
      resource: ROLES,
      apiVersion: `${RBAC}/v1`,
      kind: "Role",
      metadata: meta(LEADER_ELECTION_ROLE, namespace),
      rules: bare(kingletLeaderRules()),
    },
    {
      resource: ROLE_BINDINGS,
      apiVersion: `${RBAC}/v1`,
      kind: "RoleBinding",
      metadata: meta(LEADER_ELECTION_ROLE, namespace),
      roleRef: { apiGroup: RBAC, kind: "Role", name: LEADER_ELECTION_ROLE },
      subjects,
    },
    { resource: VALIDATING_ADMISSION_POLICIES, ...policy },
    { resource: VALIDATING_ADMISSION_POLICY_BINDINGS, ...binding },
  ];
}
