/**
 * docs/node-mode.md says what is true: what the cluster-wide install grants
 * on PersistentVolumeClaims is what kinglet's generated RBAC holds and its
 * ownership policy takes back, and the
 * memory it promises back after large objects is what
 * tests/reliability/memory_release_test.ts checks, not more.
 */
import assert from "node:assert/strict";
import { kingletRbac } from "../../lib/cli/rbac.ts";

const read = (path: string) => Deno.readTextFileSync(new URL(`../../${path}`, import.meta.url));
/** The guide as one line of prose: paragraphs are wrapped at any word. */
const GUIDE = read("docs/node-mode.md").replace(/\s+/g, " ");

interface Rule {
  resources?: string[];
  resourceNames?: string[];
  verbs?: string[];
}

/** The verbs `kind`'s rules grant on `resource` for any name. */
function verbs(objects: ReturnType<typeof kingletRbac>, kind: string, resource: string): string[] {
  return objects.filter((o) => o.kind === kind && o.metadata?.name === "kinglet")
    .flatMap((o) => (o as { rules?: Rule[] }).rules ?? [])
    .filter((rule) => rule.resources?.includes(resource) && !rule.resourceNames)
    .flatMap((rule) => rule.verbs ?? []);
}

Deno.test("the guide says RBAC lets the cluster-wide install delete every PersistentVolumeClaim, the scoped one in its namespace only, and the ownership policy takes back all but kinglet's", () => {
  const wide = kingletRbac();
  assert.deepEqual(verbs(wide, "ClusterRole", "persistentvolumeclaims"), ["list", "delete"]);
  assert.match(
    GUIDE,
    /PersistentVolumeClaims: `list` and `delete` in every namespace, by any name, so RBAC alone would let these credentials delete every PersistentVolumeClaim in the cluster/,
  );
  const policy = wide.find((o) => o.kind === "ValidatingAdmissionPolicy") as
    | {
      spec: {
        matchConstraints: { resourceRules: { resources: string[]; operations: string[] }[] };
      };
    }
    | undefined;
  assert.ok(
    policy?.spec.matchConstraints.resourceRules.some((rule) =>
      rule.resources.includes("persistentvolumeclaims") && rule.operations.includes("DELETE")
    ),
    "the ownership policy no longer confines the delete of claims",
  );
  assert.match(
    GUIDE,
    /its deletes of PersistentVolumeClaims only for claims kinglet or a StatefulSet owns/,
  );
  const scoped = kingletRbac(undefined, { watchNamespaces: ["team-a"] });
  assert.deepEqual(verbs(scoped, "ClusterRole", "persistentvolumeclaims"), []);
  assert.deepEqual(verbs(scoped, "Role", "persistentvolumeclaims"), ["list", "delete"]);
  assert.match(GUIDE, /Secrets and the `delete` of PersistentVolumeClaims included, is in a Role/);
});

Deno.test("the guide promises the memory back that the release test checks, not more", () => {
  const test = read("tests/reliability/memory_release_test.ts");
  const slack = /const SLACK_MIB = (\d+);/.exec(test)?.[1];
  const returnMs = /const RETURN_MS = ([\d_]+);/.exec(test)?.[1];
  assert.ok(slack && returnMs, "memory_release_test.ts no longer names its slack and deadline");
  const minutes = Number(returnMs.replaceAll("_", "")) / 60_000;
  assert.match(
    GUIDE,
    new RegExp(
      `RSS back within ${slack} MiB of its level before the burst within ${minutes} minutes`,
    ),
  );
  assert.doesNotMatch(GUIDE, /within about 1 MiB/);
});
