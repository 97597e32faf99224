/**
 * Least-privilege RBAC derived from controller specs: {@link controllerRules}
 * turns what each spec reconciles, owns and watches (and the rules it
 * declares in `rbac` for what its reconcile does by client) into merged
 * rules, each with the reasons that put it there; {@link leaderElectionRules}
 * gives the Role of a leader election on one named Lease. Write them into a
 * ClusterRole (or a Role per namespace), so the rights an operator ships are
 * written once, by its code.
 *
 * @example
 * ```ts
 * import { controllerRules } from "./mod.ts";
 * import { SECRETS, type KubeObject } from "../../kube/mod.ts";
 * const rules = controllerRules([{
 *   name: "rotations",
 *   resource: SECRETS,
 *   rbac: [{
 *     apiGroups: [""],
 *     resources: ["serviceaccounts"],
 *     verbs: ["get"],
 *     reason: "reads the account a Secret names",
 *   }],
 *   reconcile: (_object: KubeObject) => Promise.resolve({}),
 * }]);
 * rules.find((rule) => rule.resources.includes("serviceaccounts"))?.reasons;
 * // ["serviceaccounts: reads the account a Secret names (by rotations)"]
 * ```
 *
 * @module
 */
export * from "./policy_rule.ts";
export * from "./rbac.ts";
export * from "./ownership_policy.ts";
