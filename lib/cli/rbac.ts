/**
 * kinglet's own identity and rights, as objects: the ServiceAccount, the
 * ClusterRole derived from the specs of its three controllers (plus what the
 * CLI itself and its webhooks need), the Roles of the leader Lease and of
 * the webhooks' certificate Secret, their bindings, and the
 * ValidatingAdmissionPolicy (and its binding) that admits kinglet's writes
 * only to objects it owns; and, for a node, the webhook configurations that
 * send DatabaseCluster's admissions to the kinglet beside the API server.
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
 * //  "Role", "RoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
 * ```
 *
 * @module
 */
import {
  CUSTOM_RESOURCE_DEFINITIONS,
  resourceName,
  SUBJECT_ACCESS_REVIEWS,
  TOKEN_REVIEWS,
} from "../kube/resources.ts";
import type { Resource } from "../kube/types.ts";
import type { ExplainedRule, PolicyRule, RbacRule } from "../runtime/rbac/mod.ts";
import { type Applied, applied } from "../deploy/node_credentials.ts";
import { describeOperator, type OperatorDescription } from "../deploy/operator.ts";
import { clusterRules, rbacObjects } from "../deploy/rbac_files.ts";
import { webhookConfigurations } from "../deploy/webhook_files.ts";
import { databaseClusterAdmission } from "../operators/database/admission.ts";
import { databaseClusterConversion } from "../operators/database/conversion.ts";
import { CONTROLLERS } from "./run.ts";
import { CONTROLLER_NAMES, RUN_FLAGS } from "./run_flags.ts";
import { VERSION } from "./version.ts";

/** Where deploy/ puts kinglet: its ServiceAccount, Lease and Role live here. */
export const KINGLET_NAMESPACE = "kinglet-system";
/** The name of kinglet's ServiceAccount, ClusterRole and ClusterRoleBinding. */
export const KINGLET_ACCOUNT = "kinglet";

const RBAC = "rbac.authorization.k8s.io";
const LABELS = { "app.kubernetes.io/name": "kinglet" };

/**
 * What the CLI itself does, beside the controllers of `primaries`: read
 * their CRDs at start-up, review the tokens of who scrapes it.
 */
function cliRules(primaries: readonly Resource[]): RbacRule[] {
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
 * kinglet as lib/deploy describes an operator, as far as its rights and its
 * webhooks go: its controllers, the CLI's own rules, its Lease, and
 * DatabaseCluster's webhooks. `deno task deploy` adds how kinglet is built
 * and run (hack/gen_deploy.ts); {@link kingletRbac} applies what both derive.
 *
 * @example
 * ```ts
 * import { kingletRightsDescription } from "./rbac.ts";
 * kingletRightsDescription().webhooks?.conversions?.[0]?.hub; // "v1alpha2"
 * ```
 */
export function kingletRightsDescription(
  namespace: string = KINGLET_NAMESPACE,
): OperatorDescription {
  const specs = kingletSpecs();
  const lease = RUN_FLAGS.find((flag) => flag.name === "lease-name")?.default;
  return {
    name: KINGLET_ACCOUNT,
    envPrefix: "KINGLET_",
    image: `ghcr.io/kinglet/kinglet:${VERSION}`,
    namespace,
    serviceAccount: KINGLET_ACCOUNT,
    leaseName: typeof lease === "string" ? lease : "",
    controllers: specs,
    rules: cliRules(specs.map((spec) => spec.resource)),
    // Served while the databasecluster controller runs (kinglet run --webhooks).
    webhooks: {
      admission: [databaseClusterAdmission],
      conversions: [databaseClusterConversion],
    },
  };
}

function kingletSpecs() {
  return CONTROLLER_NAMES.map((name) => CONTROLLERS[name]());
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
   * is in no namespace (its CRDs by name, token and access reviews, its
   * webhook configurations, StorageClasses).
   * Defaults to none: the ClusterRole grants everything, in every namespace.
   */
  watchNamespaces?: readonly string[];
}

/**
 * The objects, in the order they can be applied, each with the resource it
 * is written to: deploy/'s RBAC (lib/deploy's `rbacObjects` of
 * {@link kingletRightsDescription}), with `namespace` kinglet's own (its
 * ServiceAccount, Lease, leader and webhook certificate Roles).
 *
 * @throws {RangeError} when a name in `watchNamespaces` is empty.
 */
export function kingletRbac(
  namespace: string = KINGLET_NAMESPACE,
  options: KingletRbacOptions = {},
): Applied[] {
  const confined = options.watchNamespaces ?? [];
  if (confined.some((ns) => !ns)) {
    throw new RangeError(
      `Cannot confine kinglet's RBAC: a namespace to watch is empty, got ${
        JSON.stringify(confined)
      }`,
    );
  }
  const operator = describeOperator(kingletRightsDescription(namespace));
  const objects = rbacObjects(operator).map(({ object }) => applied(object));
  if (confined.length === 0) return objects;
  const rules = clusterRules(operator);
  const labels = { ...LABELS };
  const subjects = [{ kind: "ServiceAccount", name: KINGLET_ACCOUNT, namespace }];
  const namespaced = confined.flatMap((ns) => [
    {
      apiVersion: `${RBAC}/v1`,
      kind: "Role",
      metadata: { name: KINGLET_ACCOUNT, namespace: ns, labels: { ...labels } },
      rules: bare(rules.filter((rule) => !rule.clusterScoped)),
    },
    {
      apiVersion: `${RBAC}/v1`,
      kind: "RoleBinding",
      metadata: { name: KINGLET_ACCOUNT, namespace: ns, labels: { ...labels } },
      roleRef: { apiGroup: RBAC, kind: "Role", name: KINGLET_ACCOUNT },
      subjects,
    },
  ]).map(applied);
  const clusterRole = objects.findIndex((o) => o.kind === "ClusterRole");
  objects[clusterRole] = {
    ...objects[clusterRole]!,
    rules: bare(rules.filter((rule) => rule.clusterScoped)),
  };
  // Each Role after the ClusterRoleBinding, before the Roles in kinglet's own namespace.
  objects.splice(clusterRole + 2, 0, ...namespaced);
  return objects;
}

/**
 * DatabaseCluster's webhook configurations as a node applies them: called
 * at `https://127.0.0.1:9443` by the API server beside each kinglet
 * (deploy/systemd/webhooks.yaml), each with the resource it is written to.
 *
 * @example
 * ```ts
 * import { kingletNodeWebhooks } from "./rbac.ts";
 * kingletNodeWebhooks().map((o) => o.metadata?.name); // ["kinglet-validating"]
 * ```
 */
export function kingletNodeWebhooks(
  namespace: string = KINGLET_NAMESPACE,
): Applied[] {
  const operator = describeOperator(kingletRightsDescription(namespace));
  return webhookConfigurations(operator, "url").map(applied);
}
