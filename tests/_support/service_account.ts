/**
 * Kubeconfigs that authenticate as a service account bound to exactly the
 * roles in deploy/, so that integration and e2e tests run kinglet with the
 * rights it has in a real install rather than as cluster admin.
 *
 * @example
 * ```ts ignore
 * import { testKubeconfig } from "./cluster.ts";
 * import { serviceAccountKubeconfig } from "./service_account.ts";
 * const kubeconfig = await serviceAccountKubeconfig(testKubeconfig(), "kinglet-system", "kinglet");
 * ```
 *
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

/** The folder of the in-cluster manifests. */
export const DEPLOY_DIR: string = fileURLToPath(new URL("../../deploy/", import.meta.url));

/** The service account deploy/ creates, which its bindings name. */
export const KINGLET_SERVICE_ACCOUNT = { namespace: "kinglet-system", name: "kinglet" } as const;

/**
 * The RBAC manifests of deploy/, in the order they can be applied, with the
 * ownership policy that confines deploy/'s own service account past them.
 */
export const RBAC_MANIFESTS: readonly string[] = [
  "namespace.yaml",
  "serviceaccount.yaml",
  "clusterrole.yaml",
  "clusterrolebinding.yaml",
  "role.yaml",
  "rolebinding.yaml",
  "webhook-role.yaml",
  "webhook-rolebinding.yaml",
  "validatingadmissionpolicy.yaml",
  "validatingadmissionpolicybinding.yaml",
];

/** Options of {@link serviceAccountKubeconfig}. */
export interface ServiceAccountKubeconfigOptions {
  /** Lifetime of the token the TokenRequest API issues. Defaults to 3600 (the API's floor is 600). */
  expirationSeconds?: number;
  signal?: AbortSignal;
}

interface Binding {
  metadata: { name: string; namespace?: string };
  subjects: { kind: string; name: string; namespace?: string }[];
}

/**
 * Applies deploy/'s RBAC (server-side and forced, so repeating it changes
 * nothing and it wins over rules an install test left),
 * binds its ClusterRole and leader-election Role to `namespace/name` as well
 * when that is not deploy/'s own service account, requests a token for it
 * through the TokenRequest API and writes a kubeconfig using that token next
 * to `adminKubeconfig`.
 *
 * @returns the path of the written kubeconfig.
 * @throws {Error} when kubectl fails, with its standard error.
 */
export async function serviceAccountKubeconfig(
  adminKubeconfig: string,
  namespace: string,
  name: string,
  options: ServiceAccountKubeconfigOptions = {},
): Promise<string> {
  const { signal } = options;
  const run = (args: string[], stdin?: string) => kubectlAs(adminKubeconfig, args, stdin, signal);
  for (const file of RBAC_MANIFESTS) {
    // Forced: an install test before may have left its own rules (kinglet install --namespace
    // narrows the ClusterRole under the field manager "kinglet"); these tests want deploy/'s.
    await run([
      "apply",
      "--server-side",
      "--force-conflicts",
      "--field-manager=kinglet-tests",
      "-f",
      join(DEPLOY_DIR, file),
    ]);
  }
  const own = namespace === KINGLET_SERVICE_ACCOUNT.namespace &&
    name === KINGLET_SERVICE_ACCOUNT.name;
  if (!own) {
    const objects: unknown[] = [
      { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
      { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } },
    ];
    for (
      const file of ["clusterrolebinding.yaml", "rolebinding.yaml", "webhook-rolebinding.yaml"]
    ) {
      const binding = parse(await Deno.readTextFile(join(DEPLOY_DIR, file))) as Binding;
      binding.metadata.name = `${binding.metadata.name}-${namespace}-${name}`;
      binding.subjects = [{ kind: "ServiceAccount", name, namespace }];
      objects.push(binding);
    }
    await run(
      ["apply", "--server-side", "--field-manager=kinglet-tests", "-f", "-"],
      JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }),
    );
  }
  const token = (await run([
    "create",
    "token",
    name,
    "--namespace",
    namespace,
    `--duration=${options.expirationSeconds ?? 3600}s`,
  ])).trim();
  const view = JSON.parse(
    await run(["config", "view", "--raw", "--minify", "--flatten", "-o", "json"]),
  ) as { clusters?: { cluster: Record<string, unknown> }[] };
  const cluster = view.clusters?.[0]?.cluster;
  if (!cluster?.server) throw new Error(`${adminKubeconfig} has no current cluster`);
  const user = `system:serviceaccount:${namespace}:${name}`;
  const kubeconfig = {
    apiVersion: "v1",
    kind: "Config",
    "current-context": user,
    clusters: [{
      name: "cluster",
      cluster: {
        server: cluster.server,
        ...(cluster["certificate-authority-data"]
          ? { "certificate-authority-data": cluster["certificate-authority-data"] }
          : {}),
      },
    }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: user, context: { cluster: "cluster", user, namespace } }],
  };
  const path = join(dirname(adminKubeconfig), `${namespace}.${name}.kubeconfig`);
  await Deno.writeTextFile(path, JSON.stringify(kubeconfig, null, 2), { mode: 0o600 });
  return path;
}

async function kubectlAs(
  kubeconfig: string,
  args: string[],
  stdin: string | undefined,
  signal: AbortSignal | undefined,
): Promise<string> {
  const child = new Deno.Command("kubectl", {
    args: ["--kubeconfig", kubeconfig, ...args],
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    ...(signal && { signal }),
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const output = await child.output();
  const decoder = new TextDecoder();
  if (!output.success) {
    throw new Error(`kubectl ${args.join(" ")} failed: ${decoder.decode(output.stderr).trim()}`);
  }
  return decoder.decode(output.stdout);
}
