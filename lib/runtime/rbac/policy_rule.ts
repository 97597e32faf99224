/**
 * The shapes of RBAC rules: a {@link PolicyRule} as a Role or ClusterRole
 * holds it, an {@link RbacRule} an author declares with the reason it is
 * needed, and an {@link ExplainedRule}, what `controllerRules` (rbac.ts) derives:
 * a rule with every reason that put it there.
 *
 * @example
 * ```ts
 * import type { RbacRule } from "./policy_rule.ts";
 * const rule: RbacRule = {
 *   apiGroups: [""],
 *   resources: ["persistentvolumeclaims"],
 *   verbs: ["list", "delete"],
 *   reason: "cleanup deletes the volumes of a deleted cluster",
 * };
 * ```
 *
 * @module
 */

/** One rule of a Role or ClusterRole (`rbac.authorization.k8s.io/v1` PolicyRule). */
export interface PolicyRule {
  /** API groups of the resources; `""` is the core group. */
  apiGroups: string[];
  /** Resources by plural, a subresource as `plural/subresource` (`webapps/status`). */
  resources: string[];
  /** Names the rule is limited to; absent means every object of the resources. */
  resourceNames?: string[];
  /** What may be done: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, … */
  verbs: string[];
}

/** A rule an author declares (see `ControllerSpec.rbac`), with why it is needed. */
export interface RbacRule extends PolicyRule {
  /**
   * Why the controller needs it, one sentence that a reviewer of the Role
   * reads, e.g. "cleanup deletes the volumes of a deleted cluster".
   */
  reason: string;
  /**
   * Whether the rule is about no namespace: cluster-scoped resources (CRDs,
   * Nodes) or requests outside any namespace (TokenReviews). A Role cannot
   * grant it, so an install confined to namespaces keeps it in a ClusterRole.
   *
   * @default false
   */
  clusterScoped?: boolean;
}

/** A derived rule and every reason that put a grant into it, for a comment beside it. */
export interface ExplainedRule extends PolicyRule {
  /** One line per grant merged into the rule, each naming the resources it is about. */
  reasons: string[];
  /**
   * Whether the rule is about no namespace (see {@link RbacRule.clusterScoped}):
   * the rules that are not can go into a Role per namespace instead of a
   * ClusterRole.
   */
  clusterScoped: boolean;
}
