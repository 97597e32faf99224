/**
 * The objects of a test ServiceAccount, as plain data: the account, a
 * ClusterRole and a ClusterRoleBinding holding its cluster-wide rules, a
 * Role and a RoleBinding per namespace of its namespaced rules, and the
 * ownership policy of its controller specs with its binding, when asked.
 * Pure, so the shapes are tested without a cluster; service_account.ts
 * creates them.
 *
 * @module
 */
import {
  CLUSTER_ROLE_BINDINGS,
  CLUSTER_ROLES,
  ROLE_BINDINGS,
  ROLES,
  SERVICE_ACCOUNTS,
  VALIDATING_ADMISSION_POLICIES,
  VALIDATING_ADMISSION_POLICY_BINDINGS,
} from "../kube/resources.ts";
import type { KubeObject, Resource } from "../kube/types.ts";
import type { PolicyRule } from "../runtime/rbac/policy_rule.ts";
import { ownershipPolicy, type OwnershipSpec } from "../runtime/rbac/ownership_policy.ts";

const RBAC_GROUP = "rbac.authorization.k8s.io";

/** An object to create, with the resource it is created as. */
export interface RbacObject {
  resource: Resource;
  body: KubeObject & {
    kind: string;
    metadata: { name: string; namespace?: string };
    rules?: PolicyRule[];
  };
}

/** What {@link accountObjects} builds from. */
export interface AccountSpec {
  /** The account's namespace, which also prefixes the names of its roles. */
  namespace: string;
  name: string;
  /** Granted everywhere: a ClusterRole and a ClusterRoleBinding, when not empty. */
  rules: readonly PolicyRule[];
  /** Granted in each namespace: a Role and a RoleBinding there, when not empty. */
  namespaced: Readonly<Record<string, readonly PolicyRule[]>>;
  /**
   * The specs whose ownership policy confines the account's writes under
   * `rules` to what they own: a ValidatingAdmissionPolicy and its binding,
   * when given and the rules write anything but the primaries.
   */
  policy?: readonly OwnershipSpec[];
}

/** `system:serviceaccount:<namespace>:<name>`, the user RBAC sees for the account. */
export function accountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/**
 * The account's objects in the order to create them (the ServiceAccount
 * first, each role before its binding); delete them in reverse.
 */
export function accountObjects(spec: AccountSpec): RbacObject[] {
  const { namespace, name } = spec;
  const roleName = `${namespace}-${name}`;
  const subjects = [{ kind: "ServiceAccount", name, namespace }];
  const objects: RbacObject[] = [{
    resource: SERVICE_ACCOUNTS,
    body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } },
  }];
  const role = (kind: "ClusterRole" | "Role", rules: readonly PolicyRule[], at?: string) => {
    const metadata = { name: roleName, ...(at !== undefined && { namespace: at }) };
    objects.push({
      resource: kind === "Role" ? ROLES : CLUSTER_ROLES,
      body: { apiVersion: `${RBAC_GROUP}/v1`, kind, metadata, rules: rules.map(bare) },
    }, {
      resource: kind === "Role" ? ROLE_BINDINGS : CLUSTER_ROLE_BINDINGS,
      body: {
        apiVersion: `${RBAC_GROUP}/v1`,
        kind: `${kind}Binding`,
        metadata,
        roleRef: { apiGroup: RBAC_GROUP, kind, name: roleName },
        subjects,
      },
    });
  };
  if (spec.rules.length > 0) role("ClusterRole", spec.rules);
  for (const [at, rules] of Object.entries(spec.namespaced)) {
    if (rules.length > 0) role("Role", rules, at);
  }
  if (spec.policy) {
    const { policy, binding, confined } = ownershipPolicy(spec.policy, {
      name: `${roleName}-owned-only`,
      username: accountUser(namespace, name),
      rules: spec.rules,
    });
    if (confined.length > 0) {
      objects.push(
        { resource: VALIDATING_ADMISSION_POLICIES, body: policy },
        { resource: VALIDATING_ADMISSION_POLICY_BINDINGS, body: binding },
      );
    }
  }
  return objects;
}

/** `rule` as a Role holds it: a derived rule's `reasons` and `clusterScoped` dropped. */
function bare(rule: PolicyRule): PolicyRule {
  return {
    apiGroups: [...rule.apiGroups],
    resources: [...rule.resources],
    ...(rule.resourceNames && { resourceNames: [...rule.resourceNames] }),
    verbs: [...rule.verbs],
  };
}
