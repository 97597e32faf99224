/**
 * deploy/ against a real API server: the kustomization renders every
 * manifest and CRD, the RBAC applies for real, the Deployment passes a
 * server-side dry run under the restricted Pod Security level, the manifests
 * agree with kinglet's flag defaults, and the service account can do exactly
 * what kinglet needs, verb by verb.
 */
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { V1Deployment, V1Role } from "@kubernetes/client-node";
import { parse, parseAllDocuments } from "yaml";
import { endpointPlan } from "../../lib/cli/endpoints.ts";
import { envName, parseFlags } from "../../lib/cli/flags.ts";
import { RUN_FLAGS } from "../../lib/cli/run_flags.ts";
import { parseAddress } from "../../lib/runtime/manager/http.ts";
import { kubectl, type KubectlResult } from "../_support/cluster.ts";
import {
  DEPLOY_DIR,
  KINGLET_SERVICE_ACCOUNT,
  RBAC_MANIFESTS,
} from "../_support/service_account.ts";

const CRDS_DIR = fileURLToPath(new URL("../../crds/", import.meta.url));
const SA = KINGLET_SERVICE_ACCOUNT;
const USER = `system:serviceaccount:${SA.namespace}:${SA.name}`;
const VERBS = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"];

async function ok(args: string[], stdin?: string): Promise<KubectlResult> {
  const result = await kubectl(args, { stdin });
  assert.equal(result.code, 0, `kubectl ${args.join(" ")} failed: ${result.stderr}`);
  return result;
}

async function yamlFiles(dir: string, keep: (name: string) => boolean): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(".yaml") && keep(entry.name)) {
      files.push(join(dir, entry.name));
    }
  }
  return files.sort();
}

/** `Kind/namespace/name` of every object in `text`. */
function identities(text: string): string[] {
  return parseAllDocuments(text).map((doc) => doc.toJSON()).filter(Boolean).map((o) =>
    `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`
  ).sort();
}

Deno.test("deploy/kustomization.yaml renders every manifest of deploy/ and every CRD", async () => {
  const manifests = await yamlFiles(DEPLOY_DIR, (name) => name !== "kustomization.yaml");
  const crds = await yamlFiles(CRDS_DIR, (name) => name.endsWith(".kinglet.dev.yaml"));
  const expected: string[] = [];
  for (const file of [...manifests, ...crds]) {
    expected.push(...identities(await Deno.readTextFile(file)));
  }
  const { stdout } = await ok(["kustomize", DEPLOY_DIR]);
  assert.deepEqual(identities(stdout), expected.sort());
  assert.ok(crds.length >= 3, `only ${crds.map((f) => basename(f))} in crds/`);
});

Deno.test("the manifests agree with kinglet's flag defaults", async () => {
  const deployment = parse(
    await Deno.readTextFile(join(DEPLOY_DIR, "deployment.yaml")),
  ) as V1Deployment;
  const container = deployment.spec!.template.spec!.containers[0]!;
  const [command, ...args] = container.args ?? [];
  assert.equal(command, "run");
  const flags = parseFlags(RUN_FLAGS, args, {}).values;
  assert.equal(flags["leader-elect"], "true");
  const ports = Object.fromEntries((container.ports ?? []).map((p) => [p.name, p.containerPort]));
  assert.equal(ports.metrics, parseAddress(flags["metrics-bind-address"]!).port);
  assert.equal(ports.health, parseAddress(flags["health-probe-bind-address"]!).port);
  assert.equal(flags["metrics-auth"], "tokenreview", "metrics on the pod network unprotected");
  assert.equal(deployment.metadata?.namespace, flags["leader-election-namespace"]);

  const role = parse(await Deno.readTextFile(join(DEPLOY_DIR, "role.yaml"))) as V1Role;
  assert.equal(role.metadata?.namespace, flags["leader-election-namespace"]);
  const named = role.rules?.find((rule) => rule.resourceNames?.length);
  assert.deepEqual(named?.resourceNames, [flags["lease-name"]]);
});

Deno.test("the systemd unit and its environment file use kinglet's flags and defaults", async () => {
  const unit = await Deno.readTextFile(join(DEPLOY_DIR, "systemd", "kinglet.service"));
  const exec = /^ExecStart=(\S+) run (.*)$/m.exec(unit);
  assert.equal(exec?.[1], "/usr/local/bin/kinglet");
  const flags = parseFlags(RUN_FLAGS, exec![2]!.split(/\s+/), {}).values;
  assert.equal(flags["leader-elect"], "true");
  // Not k3s.yaml: kinglet's own kubeconfig, which the credentials unit writes and renews.
  assert.equal(flags.kubeconfig, "/var/lib/kinglet/kubeconfig");
  assert.doesNotMatch(unit, /k3s\.yaml/);
  assert.match(unit, /^StateDirectory=kinglet$/m);
  const credentials = await Deno.readTextFile(
    join(DEPLOY_DIR, "systemd", "kinglet-credentials.service"),
  );
  const install = /^ExecStart=\/usr\/local\/bin\/kinglet install (.*)$/m.exec(credentials);
  assert.deepEqual(install?.[1]?.split(/\s+/), [
    "--kubeconfig",
    "%d/admin",
    "--node-kubeconfig",
    flags.kubeconfig,
  ]);
  // %d is systemd's credentials directory, where LoadCredential= puts the admin kubeconfig.
  assert.match(credentials, /^LoadCredential=admin:\/etc\/rancher\/k3s\/k3s\.yaml$/m);
  assert.match(credentials, /^StateDirectory=kinglet$/m);
  assert.match(credentials, /^User=kinglet$/m);
  assert.match(unit, /^User=kinglet$/m);

  const env = await Deno.readTextFile(join(DEPLOY_DIR, "systemd", "kinglet.env"));
  const settings = [...env.matchAll(/^#?(KINGLET_[A-Z_]+)=(.*)$/gm)];
  assert.ok(settings.length >= 10, "kinglet.env shows too few settings");
  // Where the default depends on where kinglet runs, a line shows what kinglet.service runs with:
  // the addresses kinglet chooses on a node (loopback), json for a standard error that is the
  // journal, and the unit's own memory limit.
  const node = endpointPlan({}, { inCluster: false });
  const unitMemory = /^Environment=KINGLET_MEMORY_LIMIT=(\S+)$/m.exec(unit)?.[1];
  assert.ok(unitMemory, "kinglet.service sets no KINGLET_MEMORY_LIMIT beside its MemoryMax=");
  const nodeDefaults: Record<string, string> = {
    "metrics-bind-address": node.metricsAddress,
    "health-probe-bind-address": node.healthAddress,
    "webhook-bind-address": node.webhookAddress,
    // Unset, it is the Lease's namespace, whose default the line shows.
    "webhook-cert-namespace": "kinglet-system",
    "log-format": "json",
    "memory-limit": unitMemory,
  };
  for (const [, variable, value] of settings) {
    const spec = RUN_FLAGS.find((s) => envName(s.name) === variable);
    assert.ok(spec, `${variable} sets no flag of kinglet run`);
    // Every line, uncommented as shown, is accepted.
    parseFlags(RUN_FLAGS, [], { [variable!]: value });
    if (spec.name === "metrics-auth") {
      // Its default follows the address (none on loopback): the line shows the other choice.
      assert.ok(spec.choices?.includes(value!), `${variable} shows ${value}`);
      continue;
    }
    assert.equal(
      value,
      spec.default ?? nodeDefaults[spec.name] ?? "",
      `${variable} shows a default kinglet does not have`,
    );
  }
});

const UNITS = ["kinglet.service", "kinglet-credentials.service", "kinglet-credentials.timer"];

const systemdAnalyze = await new Deno.Command("systemd-analyze", {
  args: ["--version"],
  stdout: "null",
})
  .output().then((o) => o.success, () => false);
if (!systemdAnalyze) {
  Deno.stdout.writeSync(new TextEncoder().encode("skipped: systemd-analyze is not installed\n"));
}

Deno.test({
  name: systemdAnalyze
    ? "kinglet.service and the credentials units pass systemd-analyze verify"
    : "skipped (systemd-analyze is not installed): the systemd units pass systemd-analyze verify",
  ignore: !systemdAnalyze,
  fn: async () => {
    // A throwaway root holding the unit, an executable at its ExecStart path and
    // the host's system units, so verify finds everything but touches nothing.
    const root = await Deno.makeTempDir({ prefix: "kinglet_systemd_" });
    try {
      const units = join(root, "etc", "systemd", "system");
      await Deno.mkdir(units, { recursive: true });
      for (const file of UNITS) {
        await Deno.copyFile(join(DEPLOY_DIR, "systemd", file), join(units, file));
      }
      await Deno.mkdir(join(root, "usr", "local", "bin"), { recursive: true });
      await Deno.copyFile("/bin/true", join(root, "usr", "local", "bin", "kinglet"));
      await Deno.chmod(join(root, "usr", "local", "bin", "kinglet"), 0o755);
      for (const dir of ["/usr/lib/systemd/system", "/lib/systemd/system"]) {
        const parent = join(root, dir, "..");
        await Deno.mkdir(parent, { recursive: true });
        const copy = await new Deno.Command("cp", { args: ["-r", dir, parent] }).output();
        if (copy.success) break;
      }
      const verify = await new Deno.Command("systemd-analyze", {
        args: [`--root=${root}`, "verify", ...UNITS],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const output = new TextDecoder().decode(verify.stderr) +
        new TextDecoder().decode(verify.stdout);
      assert.ok(verify.success, output);
      assert.equal(output.trim(), "", output);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test("the RBAC applies for real and the Deployment passes a server-side dry run", async () => {
  await ok(["apply", "--server-side", "-k", CRDS_DIR]);
  for (const file of RBAC_MANIFESTS) {
    // Forced: tests before this one applied the same files under the field manager kinglet-tests,
    // and the API server reports the policy's matchConstraints as a conflict though unchanged.
    await ok(["apply", "--server-side", "--force-conflicts", "-f", join(DEPLOY_DIR, file)]);
  }
  const { stdout: sa } = await ok(["get", "serviceaccount", SA.name, "-n", SA.namespace]);
  assert.match(sa, new RegExp(`^${SA.name}\\s`, "m"));

  const dryRun = await ok([
    "apply",
    "--server-side",
    "--dry-run=server",
    "-f",
    join(DEPLOY_DIR, "deployment.yaml"),
    "-o",
    "json",
  ]);
  // kinglet-system warns about (and enforces for pods) the restricted Pod Security level.
  assert.doesNotMatch(dryRun.stderr, /Warning/i, dryRun.stderr);
  const applied = JSON.parse(dryRun.stdout) as V1Deployment;
  const pod = applied.spec!.template.spec!;
  assert.equal(pod.serviceAccountName, SA.name);
  assert.equal(pod.securityContext?.runAsUser, 65532);
  assert.equal(pod.containers[0]!.securityContext?.readOnlyRootFilesystem, true);
  const { stdout: absent } = await kubectl(["get", "deployment", "kinglet", "-n", SA.namespace]);
  assert.equal(absent, "", "a dry run must not create the Deployment");
});

/** What kinglet may do in any namespace other than kinglet-system; nothing else is allowed. */
const NAMESPACED_GRANTS: Record<string, string[]> = {
  "kinglet.dev/webapps": ["get", "list", "watch"],
  "kinglet.dev/inferenceservices": ["get", "list", "watch"],
  "kinglet.dev/databaseclusters": ["get", "list", "watch", "patch"],
  "kinglet.dev/webapps/status": ["patch"],
  "kinglet.dev/inferenceservices/status": ["patch"],
  "kinglet.dev/databaseclusters/status": ["patch"],
  "kinglet.dev/webapps/finalizers": ["update"],
  "kinglet.dev/inferenceservices/finalizers": ["update"],
  "kinglet.dev/databaseclusters/finalizers": ["update"],
  // Server-side apply creates them: a PATCH authorized as create too.
  "apps/deployments": ["list", "watch", "create", "patch"],
  // get: a DatabaseCluster's cleanup reads its StatefulSet back when a memory limit evicted it.
  "apps/statefulsets": ["get", "list", "watch", "create", "patch"],
  "/services": ["list", "watch", "create", "patch"],
  // Cluster-wide, kube-system included: a DatabaseCluster may live in any namespace.
  "/secrets": ["list", "watch", "create", "patch"],
  "/persistentvolumeclaims": ["list", "delete"],
  "events.k8s.io/events": ["create", "patch"],
  "/pods": [],
  "/configmaps": [],
  "/events": [],
  "/serviceaccounts/token": [],
  "apps/replicasets": [],
  "apps/deployments/scale": [],
  "coordination.k8s.io/leases": [],
  "rbac.authorization.k8s.io/rolebindings": [],
};

const CLUSTER_SCOPED: string[] = [
  "/namespaces",
  "/nodes",
  "apiextensions.k8s.io/customresourcedefinitions",
  "rbac.authorization.k8s.io/clusterroles",
  "rbac.authorization.k8s.io/clusterrolebindings",
];

interface Check {
  namespace?: string;
  resource: string;
  verb: string;
  name?: string;
  allowed: boolean;
}

function attributes(check: Check): Record<string, string> {
  const [group, resource, subresource] = check.resource.split("/") as [string, string, string?];
  return {
    group,
    resource,
    verb: check.verb,
    ...(subresource && { subresource }),
    ...(check.namespace && { namespace: check.namespace }),
    ...(check.name && { name: check.name }),
  };
}

Deno.test("the service account can do exactly what kinglet needs, verb by verb", async () => {
  for (const file of RBAC_MANIFESTS) {
    // Forced: tests before this one applied the same files under the field manager kinglet-tests,
    // and the API server reports the policy's matchConstraints as a conflict though unchanged.
    await ok(["apply", "--server-side", "--force-conflicts", "-f", join(DEPLOY_DIR, file)]);
  }
  const checks: Check[] = [];
  for (const namespace of ["tenant-a", "kube-system"]) {
    for (const [resource, verbs] of Object.entries(NAMESPACED_GRANTS)) {
      for (const verb of VERBS) {
        checks.push({ namespace, resource, verb, allowed: verbs.includes(verb) });
      }
    }
  }
  for (const resource of CLUSTER_SCOPED) {
    for (const verb of VERBS) checks.push({ resource, verb, allowed: false });
  }
  // kinglet's own CRDs, read by name at start-up to check their schema; no other CRD.
  const crds = "apiextensions.k8s.io/customresourcedefinitions";
  for (const name of ["webapps.kinglet.dev", "certificates.cert-manager.io"]) {
    for (const verb of VERBS) {
      const allowed = verb === "get" && name.endsWith(".kinglet.dev");
      checks.push({ resource: crds, verb, name, allowed });
    }
  }
  // Reviews of who scrapes /metrics and /debug/cache: asked, never read back.
  for (
    const resource of [
      "authentication.k8s.io/tokenreviews",
      "authorization.k8s.io/subjectaccessreviews",
    ]
  ) {
    for (const verb of VERBS) checks.push({ resource, verb, allowed: verb === "create" });
  }
  // The leader Lease: created in kinglet-system, then read, replaced and watched by name only.
  const leases = "coordination.k8s.io/leases";
  for (const verb of VERBS) {
    const namespace = SA.namespace;
    checks.push({ namespace, resource: leases, verb, allowed: verb === "create" });
    for (const name of ["kinglet-leader", "kube-controller-manager"]) {
      const allowed = verb === "create" ||
        (name === "kinglet-leader" && ["get", "update", "watch"].includes(verb));
      checks.push({ namespace, resource: leases, verb, name, allowed });
    }
  }

  // The same SubjectAccessReviews `kubectl auth can-i --as` makes, in one request each, one kubectl.
  const reviews = checks.map((check) => ({
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    spec: {
      user: USER,
      groups: [
        "system:serviceaccounts",
        `system:serviceaccounts:${SA.namespace}`,
        "system:authenticated",
      ],
      resourceAttributes: attributes(check),
    },
  }));
  const { stdout } = await ok(
    ["create", "-o", 'jsonpath={.status.allowed}{"\\n"}', "-f", "-"],
    JSON.stringify({ apiVersion: "v1", kind: "List", items: reviews }),
  );
  const answers = stdout.trim().split("\n").map((line) => line === "true");
  assert.equal(answers.length, checks.length);
  const wrong = checks.flatMap((check, i) => {
    const allowed = answers[i];
    if (allowed === check.allowed) return [];
    const where = `${check.namespace ?? "cluster"}${check.name ? ` name=${check.name}` : ""}`;
    return [`${check.verb} ${check.resource} (${where}): ${allowed ? "allowed" : "denied"}`];
  });
  assert.deepEqual(wrong, [], `unexpected answers:\n${wrong.join("\n")}`);

  const canI = async (args: string[]) =>
    (await kubectl(["auth", "can-i", `--as=${USER}`, ...args])).stdout.trim();
  assert.equal(
    await canI(["patch", "webapps.kinglet.dev", "--subresource=status", "-n", "a"]),
    "yes",
  );
  assert.equal(await canI(["delete", "namespaces"]), "no");
  assert.equal(await canI(["get", "secrets", "-n", "kube-system"]), "no");
  assert.equal(await canI(["update", "leases/kinglet-leader", "-n", SA.namespace]), "yes");
});
