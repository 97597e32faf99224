/**
 * Node credentials for an author's operator: its `install` command applies
 * the Namespace and RBAC of its deploy files, in order, requests a token of
 * its own ServiceAccount and writes a kubeconfig naming that token's file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { deployFiles } from "../../lib/deploy/mod.ts";
import {
  type CredentialsClient,
  installNodeCredentials,
  nodeGrant,
} from "../../lib/deploy/node_credentials.ts";
import { SAMPLE } from "../_support/operator_description.ts";

Deno.test("an operator's node grant is its Namespace, then its deploy files' RBAC, object for object", () => {
  const grant = nodeGrant(SAMPLE);
  assert.deepEqual(grant.account, { namespace: "mirror-operator-system", name: "mirror-operator" });
  assert.equal(grant.fieldManager, "mirror-operator");
  const [namespace, ...rbac] = grant.objects.map(({ resource: _, ...object }) => object);
  assert.equal(namespace!.kind, "Namespace");
  assert.equal(namespace!.metadata?.name, "mirror-operator-system");
  const files = deployFiles(SAMPLE);
  const written = [
    "serviceaccount",
    "clusterrole",
    "clusterrolebinding",
    "role",
    "rolebinding",
    "validatingadmissionpolicy",
    "validatingadmissionpolicybinding",
  ].map((file) => parse(files.get(`deploy/${file}.yaml`)!));
  assert.deepEqual(rbac, written);
  assert.deepEqual(
    grant.objects.map((o) => o.resource.plural),
    [
      "namespaces",
      "serviceaccounts",
      "clusterroles",
      "clusterrolebindings",
      "roles",
      "rolebindings",
      "validatingadmissionpolicies",
      "validatingadmissionpolicybindings",
    ],
  );
});

Deno.test("install applies the grant, then writes the token and a kubeconfig naming it, mode 0600", async () => {
  const applied: string[] = [];
  const client: CredentialsClient = {
    apply: (resource, object, options) => {
      applied.push(`${resource.plural}/${object.metadata?.name} by ${options?.fieldManager}`);
      return Promise.resolve(object as never);
    },
    requestToken: (namespace, name) =>
      Promise.resolve({
        token: `token-of-${namespace}-${name}`,
        expirationTimestamp: "2030-01-01T00:00:00Z",
      }),
  };
  const dir = await Deno.makeTempDir({ prefix: "kinglet-node-credentials-" });
  try {
    const path = join(dir, "state", "kubeconfig");
    const lines = await installNodeCredentials(
      client,
      { server: "https://10.0.0.1:6443" },
      nodeGrant(SAMPLE),
      { path },
    );
    assert.equal(applied[0], "namespaces/mirror-operator-system by mirror-operator");
    assert.equal(applied.length, 8);
    assert.equal(
      applied.at(-1),
      "validatingadmissionpolicybindings/mirror-operator-owned-only by mirror-operator",
    );
    assert.equal(
      await Deno.readTextFile(`${path}.token`),
      "token-of-mirror-operator-system-mirror-operator",
    );
    const kubeconfig = await Deno.readTextFile(path);
    assert.match(kubeconfig, new RegExp(`tokenFile: ${path}\\.token`));
    assert.match(kubeconfig, /namespace: mirror-operator-system/);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(`${path}.token`)).mode! & 0o777, 0o600);
    assert.equal(
      lines[0],
      "applied Namespace mirror-operator-system, ServiceAccount " +
        "mirror-operator-system/mirror-operator, ClusterRole mirror-operator, ClusterRoleBinding " +
        "mirror-operator, Role mirror-operator-system/mirror-operator-leader-election, " +
        "RoleBinding mirror-operator-system/mirror-operator-leader-election, " +
        "ValidatingAdmissionPolicy mirror-operator-owned-only, ValidatingAdmissionPolicyBinding " +
        "mirror-operator-owned-only",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("install refuses a token lifetime under the TokenRequest API's floor", async () => {
  const client = {} as CredentialsClient;
  await assert.rejects(
    installNodeCredentials(client, { server: "https://x" }, nodeGrant(SAMPLE), {
      path: "/nonexistent/kubeconfig",
      expirationSeconds: 60,
    }),
    /at least 600 s/,
  );
});
