/**
 * Least-privilege RBAC derived from controller specs, as kubebuilder's
 * markers do for Go: what the runtime does for each {@link ControllerSpec}
 * becomes rules, so the Role an operator ships is written once, by its code.
 *
 * What {@link controllerRules} grants, per spec:
 *
 * - the primary: `get`, `list`, `watch` (cached; read back by GET when a
 *   memory limit evicted it); `patch` when it declares a `finalizer` or owns
 *   a kind `anywhere` (a finalizer, added and removed by a JSON patch);
 *   `<plural>/status` `patch` (the context's `status` is a server-side
 *   apply of the status subresource); and
 *   `<plural>/finalizers` `update` when it owns children, whose controller
 *   reference sets `blockOwnerDeletion`, which the API server allows only to
 *   who may update the owner's finalizers;
 * - each owned kind: `list`, `watch`, and `create`, `patch` for the default
 *   server-side apply of children (a PATCH, authorized as create too when the
 *   child is new); a spec with its own `applyChild` gets `list`, `watch`
 *   only and declares its writes in `rbac`; and `list`, `delete` for a
 *   kind owned `anywhere`, whose children the runtime deletes with their
 *   owner;
 * - each watched kind: `list`, `watch`;
 * - `events.k8s.io` Events: `create`, `patch` (a series is patched);
 * - the spec's own `rbac` rules, for what its reconcile does by client
 *   (or reads back from a cache with `getOrFetch`).
 *
 * Nothing else: the runtime deletes no other child (the garbage collector
 * does, through owner references). Rules are merged, then ordered by API
 * group, in the order the specs name them, so the output is stable and
 * readable. Each says whether it is `clusterScoped` (about cluster-scoped
 * resources), so that the others can go into a Role per namespace for an
 * operator confined to namespaces.
 *
 * @example
 * ```ts
 * import { controllerRules } from "./rbac.ts";
 * import { CONFIG_MAPS, type KubeObject } from "../../kube/mod.ts";
 * import type { ControllerSpec } from "../controller/spec.ts";
 * const spec: ControllerSpec<KubeObject> = {
 *   name: "settings",
 *   resource: CONFIG_MAPS,
 *   reconcile: () => Promise.resolve({}),
 * };
 * controllerRules([spec]).map(({ resources, verbs }) => `${resources} ${verbs}`);
 * // ["configmaps get,list,watch", "configmaps/status patch", "events create,patch"]
 * ```
 *
 * @module
 */
import type { Resource } from "../../kube/types.ts";
import { CUSTOM_RESOURCE_DEFINITIONS, resourceName } from "../../kube/resources.ts";
import type { ControllerSpec } from "../controller/spec.ts";
import { finalizerOf } from "../children/owner_labels.ts";
import { type Grant, mergeGrants } from "./_merge.ts";
import type { ExplainedRule, RbacRule } from "./policy_rule.ts";

/**
 * What {@link controllerRules} reads of a controller spec: its kinds, its
 * finalizer, how it writes children and its extra rules. A spec of any kind
 * fits (`ControllerSpec<Backup>` as well as `ControllerSpec<KubeObject>`).
 */
export type RbacSpec = Omit<ControllerSpec<never>, "transform" | "indexes"> & {
  transform?: unknown;
  indexes?: unknown;
};

/**
 * The rule a manager given `ManagerOptions.crds` needs to install them
 * at start-up: get, create (by server-side apply) and patch of exactly the
 * CRDs of `resources`, cluster-scoped. Most operators ship their CRDs in
 * their manifests instead and need none of it.
 *
 * @example
 * ```ts
 * import { controllerRules, crdInstallRule } from "./rbac.ts";
 * import type { Resource } from "../../kube/types.ts";
 * const backups: Resource = {
 *   group: "example.dev", version: "v1", plural: "backups", kind: "Backup", namespaced: true,
 * };
 * const rules = controllerRules([], { extra: [crdInstallRule([backups])] });
 * rules[0]?.resourceNames; // ["backups.example.dev"]
 * ```
 */
export function crdInstallRule(resources: readonly Resource[]): RbacRule {
  const names = resources.map(resourceName);
  return {
    apiGroups: [CUSTOM_RESOURCE_DEFINITIONS.group],
    resources: [CUSTOM_RESOURCE_DEFINITIONS.plural],
    resourceNames: names,
    verbs: ["get", "create", "patch"],
    clusterScoped: true,
    reason: `installs the CRD${names.length === 1 ? "" : "s"} ${names.join(", ")} at start-up`,
  };
}

/** Options of {@link controllerRules}. */
export interface ControllerRulesOptions {
  /**
   * Rules the program needs besides its controllers (reading its CRDs at
   * start-up, reviewing the tokens of who scrapes it), merged in after
   * theirs. Defaults to none.
   */
  extra?: readonly RbacRule[];
}

const PRIMARY = "the primary resource, cached (list, watch) and read back (get) when a " +
  "memory limit evicted it";
const STATUS = "status, written by server-side apply: a patch of the status subresource";
const OWNER = "owner of children whose controller reference blocks owner deletion, which the " +
  "API server allows only to who may update the owner's finalizers";
const OWNED = "owned children, cached (list, watch) and server-side applied: a patch, which " +
  "the API server also authorizes as create for a new child";
const OWNED_CUSTOM = "owned children, cached (list, watch); the spec's applyChild writes them, " +
  "with the verbs its rbac declares";
const ANYWHERE = "owned anywhere: the children labelled with an owner being deleted, listed " +
  "across namespaces and deleted before its finalizer is removed";
const WATCHED = "watched, cached (list, watch)";
const EVENTS = "the Events of every controller: created, then patched as a repeat joins a series";

/**
 * The rules the controllers of `specs` need, and nothing more; see the
 * module documentation for what each part of a spec grants. Empty for no
 * specs (and no `extra`).
 *
 * @throws {TypeError} when a spec has no name, a resource of a spec has no
 * `plural` or no `group` (`""` for the core group), or a rule of `rbac` or
 * `extra` lacks `apiGroups`, `resources`, `verbs` or `reason`; the message
 * names the spec and the field.
 *
 * @example
 * ```ts
 * import { controllerRules } from "./rbac.ts";
 * import { DEPLOYMENTS, type KubeObject } from "../../kube/mod.ts";
 * const rules = controllerRules([{
 *   name: "apps",
 *   resource: { group: "example.com", version: "v1", plural: "apps", kind: "App", namespaced: true },
 *   owns: [{ resource: DEPLOYMENTS }],
 *   reconcile: (_object: KubeObject) => Promise.resolve({}),
 * }]);
 * rules.find((rule) => rule.resources.includes("deployments"))?.verbs;
 * // ["list", "watch", "create", "patch"]
 * ```
 */
export function controllerRules(
  specs: readonly RbacSpec[],
  options: ControllerRulesOptions = {},
): ExplainedRule[] {
  const grants: Grant[] = [];
  for (const spec of specs) grants.push(...specGrants(spec));
  if (specs.length > 0) {
    grants.push({
      group: "events.k8s.io",
      resource: "events",
      verbs: ["create", "patch"],
      why: EVENTS,
      clusterScoped: false,
    });
  }
  (options.extra ?? []).forEach((rule, i) => {
    grants.push(...ruleGrants(rule, () => `Cannot derive RBAC: 'extra[${i}]'`));
  });
  return mergeGrants(grants);
}

/**
 * The rules of a leader election on the Lease `leaseName`, for a Role in
 * the Lease's namespace: `create` on Leases (a create cannot be limited by
 * name, which the object does not have yet), and `get`, `update` on that
 * Lease alone (read, then taken or renewed by a replace).
 *
 * @throws {RangeError} when `leaseName` is empty.
 *
 * @example
 * ```ts
 * import { leaderElectionRules } from "./rbac.ts";
 * leaderElectionRules("my-operator").map(({ resourceNames, verbs }) => [resourceNames, verbs]);
 * // [[undefined, ["create"]], [["my-operator"], ["get", "update", "watch"]]]
 * ```
 */
export function leaderElectionRules(leaseName: string): ExplainedRule[] {
  if (!leaseName) {
    throw new RangeError("Cannot derive the leader election's RBAC: the Lease name is empty");
  }
  const group = "coordination.k8s.io";
  return mergeGrants([
    {
      group,
      clusterScoped: false,
      resource: "leases",
      verbs: ["create"],
      why: "a candidate creates the Lease when it is absent; a create cannot be limited by " +
        "name, which the object does not have yet",
    },
    {
      group,
      resource: "leases",
      resourceNames: [leaseName],
      clusterScoped: false,
      verbs: ["get", "update", "watch"],
      why: `the Lease ${leaseName}, read, then taken or renewed by a replace (update) that ` +
        "carries the resourceVersion read; a standby watches it (by name) to see each renewal " +
        "as it happens and take over right at its expiry",
    },
  ]);
}

function specGrants(spec: RbacSpec): Grant[] {
  if (typeof spec.name !== "string" || spec.name === "") {
    throw new TypeError("Cannot derive RBAC: a controller spec has no 'name'");
  }
  const by = spec.name;
  const where = (field: string) => `Cannot derive the RBAC of controller '${by}': '${field}'`;
  const primary = on(checked(spec.resource, where("resource")));
  const grants: Grant[] = [{ ...primary, verbs: ["get", "list", "watch"], why: PRIMARY, by }];
  const finalizer = finalizerOf(spec);
  if (finalizer !== undefined) {
    grants.push({
      ...primary,
      verbs: ["patch"],
      why: `finalizer ${finalizer}, added and removed by a JSON patch with a precondition`,
      by,
    });
  }
  const sub = (name: string) => ({ ...primary, resource: `${primary.resource}/${name}` });
  grants.push({ ...sub("status"), verbs: ["patch"], why: STATUS, by });
  const owns = spec.owns ?? [];
  if (owns.length > 0) {
    grants.push({ ...sub("finalizers"), verbs: ["update"], why: OWNER, by });
  }
  const applied = spec.applyChild === undefined;
  owns.forEach((owned, i) => {
    grants.push({
      ...on(checked(owned.resource, where(`owns[${i}].resource`))),
      verbs: applied ? ["list", "watch", "create", "patch"] : ["list", "watch"],
      why: applied ? OWNED : OWNED_CUSTOM,
      by,
    });
    if (owned.anywhere) {
      grants.push({ ...on(owned.resource), verbs: ["list", "delete"], why: ANYWHERE, by });
    }
  });
  (spec.watches ?? []).forEach((watched, i) => {
    const resource = on(checked(watched.resource, where(`watches[${i}].resource`)));
    grants.push({ ...resource, verbs: ["list", "watch"], why: WATCHED, by });
  });
  (spec.rbac ?? []).forEach((rule, i) => {
    grants.push(...ruleGrants(rule, () => where(`rbac[${i}]`), by));
  });
  return grants;
}

/** What a grant on `resource` names. */
function on(resource: Resource): Pick<Grant, "group" | "resource" | "clusterScoped"> {
  return {
    group: resource.group,
    resource: resource.plural,
    clusterScoped: resource.namespaced === false,
  };
}

/** `resource`, or a TypeError starting with `where` when RBAC cannot name it. */
function checked(resource: Resource | undefined, where: string): Resource {
  if (typeof resource?.plural !== "string" || resource.plural === "") {
    throw new TypeError(
      `${where} has no 'plural': give the lower-case plural RBAC names it by, e.g. "deployments"`,
    );
  }
  if (typeof resource.group !== "string") {
    throw new TypeError(`${where} has no 'group'; give "" for the core group`);
  }
  return resource;
}

/** A declared rule as grants, one per group and resource; refuses an incomplete one. */
function ruleGrants(rule: RbacRule, where: () => string, by?: string): Grant[] {
  for (const field of ["apiGroups", "resources", "verbs"] as const) {
    const list = rule[field];
    if (!Array.isArray(list) || list.length === 0 || list.some((v) => typeof v !== "string")) {
      throw new TypeError(`${where()} needs '${field}', a non-empty list of strings`);
    }
  }
  if (typeof rule.reason !== "string" || rule.reason.trim() === "") {
    throw new TypeError(`${where()} needs a 'reason': say why the controller needs it`);
  }
  return rule.apiGroups.flatMap((group) =>
    rule.resources.map((resource) => ({
      group,
      resource,
      ...(rule.resourceNames && { resourceNames: rule.resourceNames }),
      verbs: rule.verbs,
      why: rule.reason,
      clusterScoped: rule.clusterScoped ?? false,
      ...(by !== undefined && { by }),
    }))
  );
}
