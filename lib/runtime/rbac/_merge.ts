/**
 * Folds grants (one resource, some verbs, one reason) into few readable
 * rules: a resource's verbs are united first, then resources of one API
 * group with the same verbs (and the same `resourceNames`) share a rule.
 * Rules come grouped by API group, groups and rules in the order their first
 * grant came, so the same grants always give the same rules.
 *
 * @module
 */
import type { ExplainedRule } from "./policy_rule.ts";

/** One resource, some verbs and why. */
export interface Grant {
  /** API group; `""` is the core group. */
  group: string;
  /** Plural, or `plural/subresource`. */
  resource: string;
  /** Names the grant is limited to; absent means all. */
  resourceNames?: readonly string[];
  verbs: readonly string[];
  /** Why, without who: the grants of one rule with the same `why` are told in one line. */
  why: string;
  /** The controller the grant is for, when there is one. */
  by?: string;
  /** Whether the resource is in no namespace; such grants never share a rule with others. */
  clusterScoped: boolean;
}

/** The order verbs are listed in; others follow, sorted. */
const VERB_ORDER = [
  "get",
  "list",
  "watch",
  "create",
  "update",
  "patch",
  "delete",
  "deletecollection",
];

/** `verbs` without repeats, in {@link VERB_ORDER}. */
export function sortVerbs(verbs: Iterable<string>): string[] {
  const rank = (verb: string) => {
    const i = VERB_ORDER.indexOf(verb);
    return i < 0 ? VERB_ORDER.length : i;
  };
  return [...new Set(verbs)].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

interface Bucket {
  group: string;
  clusterScoped: boolean;
  resourceNames: readonly string[] | undefined;
  verbs: string[];
  resources: string[];
  grants: Grant[];
}

/** The rules that grant exactly what `grants` ask, each with its reasons; see the module doc. */
export function mergeGrants(grants: readonly Grant[]): ExplainedRule[] {
  const names = (g: { resourceNames?: readonly string[] | undefined }) =>
    g.resourceNames === undefined ? "*" : JSON.stringify(g.resourceNames);
  const perResource = new Map<string, { verbs: Set<string>; grants: Grant[] }>();
  for (const grant of grants) {
    const key = JSON.stringify([grant.group, grant.resource, names(grant), grant.clusterScoped]);
    let entry = perResource.get(key);
    if (!entry) perResource.set(key, entry = { verbs: new Set(), grants: [] });
    for (const verb of grant.verbs) entry.verbs.add(verb);
    entry.grants.push(grant);
  }
  const buckets = new Map<string, Bucket>();
  for (const { verbs, grants: mine } of perResource.values()) {
    const first = mine[0]!;
    const sorted = sortVerbs(verbs);
    const key = JSON.stringify([first.group, names(first), sorted, first.clusterScoped]);
    let bucket = buckets.get(key);
    if (!bucket) {
      bucket = {
        group: first.group,
        clusterScoped: first.clusterScoped,
        resourceNames: first.resourceNames,
        verbs: sorted,
        resources: [],
        grants: [],
      };
      buckets.set(key, bucket);
    }
    bucket.resources.push(first.resource);
    bucket.grants.push(...mine);
  }
  const groups = [...new Set(grants.map((g) => g.group))];
  const ordered = [...buckets.values()].sort((a, b) =>
    groups.indexOf(a.group) - groups.indexOf(b.group)
  );
  return ordered.map((bucket) => ({
    apiGroups: [bucket.group],
    resources: bucket.resources,
    ...(bucket.resourceNames && { resourceNames: [...bucket.resourceNames] }),
    verbs: bucket.verbs,
    reasons: reasons(bucket.grants),
    clusterScoped: bucket.clusterScoped,
  }));
}

/** A line per distinct `why`: the resources it is about, then the controllers it is for. */
function reasons(grants: readonly Grant[]): string[] {
  const byWhy = new Map<string, { resources: Set<string>; by: Set<string> }>();
  for (const grant of grants) {
    let entry = byWhy.get(grant.why);
    if (!entry) byWhy.set(grant.why, entry = { resources: new Set(), by: new Set() });
    entry.resources.add(grant.resource);
    if (grant.by !== undefined) entry.by.add(grant.by);
  }
  return [...byWhy].map(([why, { resources, by }]) =>
    `${[...resources].join(", ")}: ${why}${by.size ? ` (by ${[...by].join(", ")})` : ""}`
  );
}
