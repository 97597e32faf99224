/**
 * lib/deploy for an author's operator: a sample with two controllers, one
 * owning Deployments and one watching ConfigMaps, gets exactly the RBAC its
 * specs need, a Deployment that takes its memory limit from the Downward
 * API, and units that name its binary and its variables.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { deployFiles } from "../../lib/deploy/mod.ts";
import { SAMPLE } from "../_support/operator_description.ts";

const files = deployFiles(SAMPLE);
const yaml = <T>(path: string): T => parse(files.get(path)!) as T;
type Rule = { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] };

Deno.test("the ClusterRole grants exactly what the two specs need, verb by verb", () => {
  const role = yaml<{ metadata: { name: string }; rules: Rule[] }>("deploy/clusterrole.yaml");
  assert.equal(role.metadata.name, "mirror-operator");
  const rules = role.rules.map((r) => `${r.apiGroups}|${r.resources}|${r.verbs}`);
  assert.deepEqual(rules, [
    "example.dev|mirrors,reflections|get,list,watch",
    "example.dev|mirrors/status,reflections/status|patch",
    "example.dev|mirrors/finalizers|update",
    "apps|deployments|list,watch,create,patch",
    "|configmaps|list,watch",
    "events.k8s.io|events|create,patch",
  ]);
});

Deno.test("the leader election's Role reaches the operator's Lease alone, in its namespace", () => {
  const role = yaml<{ metadata: { name: string; namespace: string }; rules: Rule[] }>(
    "deploy/role.yaml",
  );
  assert.deepEqual(role.metadata, {
    name: "mirror-operator-leader-election",
    namespace: "mirror-operator-system",
    labels: { "app.kubernetes.io/name": "mirror-operator" },
  });
  assert.deepEqual(role.rules, [
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
    {
      apiGroups: ["coordination.k8s.io"],
      resources: ["leases"],
      resourceNames: ["mirror-operator-leader"],
      verbs: ["get", "watch", "update"],
    },
  ]);
  const binding = yaml<{ subjects: unknown[] }>("deploy/rolebinding.yaml");
  assert.deepEqual(binding.subjects, [
    { kind: "ServiceAccount", name: "mirror-operator", namespace: "mirror-operator-system" },
  ]);
});

Deno.test("every rule of the ClusterRole has a comment that says why", () => {
  const lines = files.get("deploy/clusterrole.yaml")!.split("\n");
  const rules = lines.flatMap((line, i) => line.startsWith("  - apiGroups:") ? [i] : []);
  assert.equal(rules.length, 6);
  for (const i of rules) assert.match(lines[i - 1]!, /^ {2}# /);
});

type Container = {
  name: string;
  image: string;
  args: string[];
  env: { name: string; value?: string; valueFrom?: unknown }[];
  resources: { limits: { memory: string } };
  securityContext: { readOnlyRootFilesystem: boolean };
};
type Deployment = {
  metadata: { namespace: string };
  spec: { template: { spec: { serviceAccountName: string; containers: Container[] } } };
};

Deno.test("the Deployment hands the container's memory limit to MIRROR_MEMORY_LIMIT by the Downward API", () => {
  const deployment = yaml<Deployment>("deploy/deployment.yaml");
  assert.equal(deployment.metadata.namespace, "mirror-operator-system");
  const pod = deployment.spec.template.spec;
  assert.equal(pod.serviceAccountName, "mirror-operator");
  const container = pod.containers[0]!;
  assert.equal(container.image, "ghcr.io/example/mirror-operator:0.1.0");
  assert.deepEqual(container.args, ["--leader-elect"]);
  assert.equal(container.resources.limits.memory, "192Mi");
  assert.equal(container.securityContext.readOnlyRootFilesystem, true);
  assert.deepEqual(container.env.find((e) => e.name === "MIRROR_MEMORY_LIMIT"), {
    name: "MIRROR_MEMORY_LIMIT",
    valueFrom: {
      resourceFieldRef: { containerName: "mirror-operator", resource: "limits.memory" },
    },
  });
  assert.deepEqual(container.env.find((e) => e.name === "DENO_TLS_CA_STORE"), {
    name: "DENO_TLS_CA_STORE",
    value: ",",
  });
});

Deno.test("the node unit runs the operator's binary with its kubeconfig, Lease and memory limit", () => {
  const unit = files.get("deploy/systemd/mirror-operator.service")!;
  assert.match(unit, /^ExecStart=\/usr\/local\/bin\/mirror-operator --leader-elect$/m);
  assert.match(unit, /^Environment=KUBECONFIG=\/var\/lib\/mirror-operator\/kubeconfig$/m);
  assert.match(unit, /^EnvironmentFile=-\/etc\/mirror-operator\/mirror-operator\.env$/m);
  assert.match(unit, /^MemoryMax=192M$/m);
  assert.match(unit, /^Environment=MIRROR_MEMORY_LIMIT=192Mi$/m);
  assert.match(unit, /^DynamicUser=yes$/m);
  assert.match(unit, /^ProtectSystem=strict$/m);
  assert.match(unit, /^Restart=on-failure$/m);
  assert.match(unit, /^RestartPreventExitStatus=2$/m, "a configuration error restarts forever");
  const credentials = files.get("deploy/systemd/mirror-operator-credentials.service")!;
  assert.match(
    credentials,
    /^ExecStart=\/usr\/local\/bin\/mirror-operator install --kubeconfig %d\/admin --node-kubeconfig \/var\/lib\/mirror-operator\/kubeconfig$/m,
  );
  assert.match(credentials, /^LoadCredential=admin:\/etc\/rancher\/k3s\/k3s\.yaml$/m);
  assert.match(
    files.get("deploy/systemd/mirror-operator-credentials.timer")!,
    /^OnUnitActiveSec=8h$/m,
  );
});

Deno.test("the image is built from the operator's binary and its own file list", () => {
  const dockerfile = files.get("deploy/Dockerfile.scratch")!;
  assert.match(dockerfile, /deno task build --target "\$arch-unknown-linux-gnu"/);
  assert.match(
    dockerfile,
    /scripts\/deploy\.ts --rootfs \\\n +\/rootfs "dist\/mirror-operator-\$arch/,
  );
  assert.match(dockerfile, /^ENTRYPOINT \["\/mirror-operator"\]$/m);
  assert.match(dockerfile, /^USER 65532:65532$/m);
  assert.ok(files.has("deploy/Dockerfile.scratch.dockerignore"));
  assert.match(
    files.get("deploy/scratch_files.txt")!,
    /^\[x86_64\] \/lib64\/ld-linux-x86-64\.so\.2$/m,
  );
  // Prose is wrapped whatever the name's length; commands (after "#   ") are not.
  for (const line of dockerfile.split("\n").filter((l) => /^# \S/.test(l))) {
    assert.ok(line.length <= 80, line);
  }
});

Deno.test("the kustomization applies the CRDs, the RBAC and the Deployment in order", () => {
  const crds = yaml<{ resources: string[] }>("crds/kustomization.yaml");
  assert.deepEqual(crds.resources, ["mirrors.example.dev.yaml", "reflections.example.dev.yaml"]);
  const kustomization = yaml<{ resources: string[] }>("deploy/kustomization.yaml");
  assert.deepEqual(kustomization.resources, [
    "../crds/",
    "namespace.yaml",
    "serviceaccount.yaml",
    "clusterrole.yaml",
    "clusterrolebinding.yaml",
    "role.yaml",
    "rolebinding.yaml",
    "validatingadmissionpolicy.yaml",
    "validatingadmissionpolicybinding.yaml",
    "deployment.yaml",
  ]);
});

Deno.test("the ownership policy confines the operator's ServiceAccount to the Deployments it owns", () => {
  type Admission = {
    metadata: { name: string };
    spec: {
      policyName?: string;
      validationActions?: string[];
      matchConstraints?: { resourceRules: { resources: string[]; operations: string[] }[] };
      matchConditions?: { expression: string }[];
    };
  };
  const policy = yaml<Admission>("deploy/validatingadmissionpolicy.yaml");
  assert.equal(policy.metadata.name, "mirror-operator-owned-only");
  assert.deepEqual(policy.spec.matchConstraints?.resourceRules.map((r) => r.resources), [
    ["deployments"],
  ]);
  assert.deepEqual(policy.spec.matchConstraints?.resourceRules[0]?.operations, [
    "CREATE",
    "UPDATE",
  ]);
  assert.equal(
    policy.spec.matchConditions?.[0]?.expression,
    "request.userInfo.username == " +
      "'system:serviceaccount:mirror-operator-system:mirror-operator'",
  );
  const header = files.get("deploy/validatingadmissionpolicy.yaml")!.split("\napiVersion")[0]!;
  assert.match(header.replaceAll("\n# ", " "), /Confined: deployments \(create, update\)\./);
  assert.match(header.replaceAll("\n# ", " "), /Left to RBAC: mirrors\/status/);
  const binding = yaml<Admission>("deploy/validatingadmissionpolicybinding.yaml");
  assert.deepEqual(binding.spec, {
    policyName: "mirror-operator-owned-only",
    validationActions: ["Deny"],
  });
});

Deno.test("an operator that writes nothing but its primaries and Events gets no policy", () => {
  const only = deployFiles({ ...SAMPLE, controllers: [SAMPLE.controllers[1]!] });
  assert.ok(!only.has("deploy/validatingadmissionpolicy.yaml"));
  const kustomization = parse(only.get("deploy/kustomization.yaml")!) as { resources: string[] };
  assert.ok(!kustomization.resources.some((file) => file.startsWith("validating")));
});
