/**
 * kinglet's own identity and rights, as objects: the ServiceAccount, the
 * ClusterRole with what the operators do, the Role for the leader Lease,
 * and their bindings. deploy/*.yaml holds the same objects with a comment
 * on every rule (a unit test keeps the two equal); `kinglet install
 * --node-kubeconfig` applies these, so that a node runs kinglet with them
 * instead of the cluster-admin kubeconfig of k3s.
 *
 * @example
 * ```ts
 * import { kingletRbac } from "./rbac.ts";
 * kingletRbac().map((o) => o.kind);
 * // ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]
 * ```
 *
 * @module
 */
import {
  CLUSTER_ROLE_BINDINGS,
  CLUSTER_ROLES,
  ROLE_BINDINGS,
  ROLES,
  SERVICE_ACCOUNTS,
} from "../kube/resources.ts";
import type { KubeObject, Resource } from "../kube/types.ts";

/** Where deploy/ puts kinglet: its ServiceAccount, Lease and Role live here. */
export const KINGLET_NAMESPACE = "kinglet-system";
/** The name of kinglet's ServiceAccount, ClusterRole and ClusterRoleBinding. */
export const KINGLET_ACCOUNT = "kinglet";

const RBAC = "rbac.authorization.k8s.io";
const LABELS = { "app.kubernetes.io/name": "kinglet" };
const KINDS = ["webapps", "databaseclusters", "inferenceservices"];

/** The rules of the `kinglet` ClusterRole; deploy/clusterrole.yaml says why each is there. */
export const CLUSTER_RULES: readonly Record<string, string[]>[] = [
  { apiGroups: ["kinglet.dev"], resources: KINDS, verbs: ["get", "list", "watch"] },
  { apiGroups: ["kinglet.dev"], resources: ["databaseclusters"], verbs: ["patch"] },
  { apiGroups: ["kinglet.dev"], resources: KINDS.map((k) => `${k}/status`), verbs: ["patch"] },
  { apiGroups: ["kinglet.dev"], resources: KINDS.map((k) => `${k}/finalizers`), verbs: ["update"] },
  {
    apiGroups: ["apps"],
    resources: ["deployments", "statefulsets"],
    verbs: ["list", "watch", "create", "patch"],
  },
  { apiGroups: [""], resources: ["services"], verbs: ["list", "watch", "create", "patch"] },
  { apiGroups: [""], resources: ["secrets"], verbs: ["list", "watch", "create", "patch"] },
  { apiGroups: [""], resources: ["persistentvolumeclaims"], verbs: ["list", "delete"] },
  {
    apiGroups: ["apiextensions.k8s.io"],
    resources: ["customresourcedefinitions"],
    resourceNames: KINDS.map((k) => `${k}.kinglet.dev`),
    verbs: ["get"],
  },
  { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
  { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
  { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
];

/** The objects, in the order they can be applied, each with the resource it is written to. */
export function kingletRbac(
  namespace: string = KINGLET_NAMESPACE,
): (KubeObject & { resource: Resource })[] {
  const subjects = [{ kind: "ServiceAccount", name: KINGLET_ACCOUNT, namespace }];
  const meta = (name: string, ns?: string) => ({
    name,
    ...(ns !== undefined && { namespace: ns }),
    labels: { ...LABELS },
  });
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
      rules: CLUSTER_RULES.map((rule) => ({ ...rule })),
    },
    {
      resource: CLUSTER_ROLE_BINDINGS,
      apiVersion: `${RBAC}/v1`,
      kind: "ClusterRoleBinding",
      metadata: meta(KINGLET_ACCOUNT),
      roleRef: { apiGroup: RBAC, kind: "ClusterRole", name: KINGLET_ACCOUNT },
      subjects,
    },
    {
      resource: ROLES,
      apiVersion: `${RBAC}/v1`,
      kind: "Role",
      metadata: meta("kinglet-leader-election", namespace),
      rules: [
        { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
        {
          apiGroups: ["coordination.k8s.io"],
          resources: ["leases"],
          resourceNames: ["kinglet-leader"],
          verbs: ["get", "update"],
        },
      ],
    },
    {
      resource: ROLE_BINDINGS,
      apiVersion: `${RBAC}/v1`,
      kind: "RoleBinding",
      metadata: meta("kinglet-leader-election", namespace),
      roleRef: { apiGroup: RBAC, kind: "Role", name: "kinglet-leader-election" },
      subjects,
    },
  ];
}
