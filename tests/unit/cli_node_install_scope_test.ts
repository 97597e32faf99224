/**
 * The credentials timer keeps the scope the user chose: kinglet-credentials.service
 * loads kinglet.service's environment file, so the one line `KINGLET_NAMESPACE=team-a`
 * that confines `kinglet run` also confines the rights `kinglet install` grants at
 * every renewal. The committed unit's command line runs (main.ts, as the unit would)
 * against an API server double that records what is applied.
 */
import assert from "node:assert/strict";
import { type Applied, envVariables, runUnit, SYSTEMD } from "../_support/node_units.ts";

/** The one `EnvironmentFile=` line of a unit. */
function environmentFile(unit: string): string {
  const lines = unit.split("\n").filter((line) => line.startsWith("EnvironmentFile="));
  assert.equal(lines.length, 1, `expected one EnvironmentFile= line, got ${lines.length}`);
  return lines[0]!;
}

/** Runs the credentials unit with `env` from its environment file; resolves to what it applied. */
async function runCredentialsUnit(env: Record<string, string>): Promise<Applied[]> {
  const run = await runUnit("kinglet-credentials.service", env);
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  return run.applied;
}

const KINGLET_ROLES =
  /^\/apis\/rbac\.authorization\.k8s\.io\/v1\/namespaces\/([^/]+)\/roles\/kinglet$/;

/** The namespaces of the Roles `kinglet`, and whether the ClusterRole grants Secrets. */
function grants(applied: readonly Applied[]) {
  const clusterRole = applied.find((a) => a.path.endsWith("/clusterroles/kinglet"));
  assert.ok(clusterRole, "no ClusterRole kinglet was applied");
  return {
    roles: applied.flatMap((a) => KINGLET_ROLES.exec(a.path)?.[1] ?? []),
    bindings: applied.flatMap((a) =>
      /\/namespaces\/([^/]+)\/rolebindings\/kinglet$/.exec(a.path)?.[1] ?? []
    ),
    clusterSecrets: clusterRole.rules!.some((rule) => rule.resources?.includes("secrets")),
  };
}

Deno.test("the credentials unit loads kinglet.service's environment file", async () => {
  const [service, credentials] = await Promise.all(
    ["kinglet.service", "kinglet-credentials.service"].map((file) =>
      Deno.readTextFile(new URL(file, SYSTEMD))
    ),
  );
  assert.equal(environmentFile(credentials!), environmentFile(service!));
  assert.equal(environmentFile(service!), "EnvironmentFile=-/etc/kinglet/kinglet.env");
});

Deno.test("KINGLET_NAMESPACE in kinglet.env confines the rights the credentials unit grants to that namespace", async () => {
  const env = await Deno.readTextFile(new URL("kinglet.env", SYSTEMD));
  assert.match(env, /^#KINGLET_NAMESPACE=$/m, "kinglet.env shows no KINGLET_NAMESPACE line");
  const wide = grants(await runCredentialsUnit(envVariables(env)));
  assert.deepEqual(wide, { roles: [], bindings: [], clusterSecrets: true });

  // The one line a user uncomments to scope node mode, read by run and install alike.
  const scoped = env.replace(/^#KINGLET_NAMESPACE=$/m, "KINGLET_NAMESPACE=team-a");
  assert.deepEqual(grants(await runCredentialsUnit(envVariables(scoped))), {
    roles: ["team-a"],
    bindings: ["team-a"],
    clusterSecrets: false,
  });
});

Deno.test("a scoped install says what it applied, the narrowed ClusterRole and the Role in the namespace, and the --namespace to run with", async () => {
  const env = await Deno.readTextFile(new URL("kinglet.env", SYSTEMD));
  const scoped = env.replace(/^#KINGLET_NAMESPACE=$/m, "KINGLET_NAMESPACE=team-a");
  const run = await runUnit("kinglet-credentials.service", envVariables(scoped));
  assert.equal(run.code, 0, run.stderr);
  assert.doesNotMatch(run.stdout, /deploy\/'s/);
  const lines = run.stdout.trim().split("\n");
  assert.ok(
    lines.includes(
      "applied ServiceAccount kinglet-system/kinglet, ClusterRole kinglet, ClusterRoleBinding " +
        "kinglet, Role team-a/kinglet, RoleBinding team-a/kinglet, Role " +
        "kinglet-system/kinglet-leader-election, RoleBinding kinglet-system/kinglet-leader-election, " +
        "Role kinglet-system/kinglet-webhook-certificate, RoleBinding " +
        "kinglet-system/kinglet-webhook-certificate, ValidatingAdmissionPolicy kinglet-owned-only, " +
        "ValidatingAdmissionPolicyBinding kinglet-owned-only, ValidatingWebhookConfiguration " +
        "kinglet-validating",
    ),
    run.stdout,
  );
  assert.equal(
    lines.at(-1),
    "its rights serve the namespace team-a alone (the Role kinglet there; the ClusterRole keeps " +
      "what is in no namespace): run kinglet with --namespace team-a too",
  );
});
