/**
 * Node-mode credentials with an operator's own rights instead of the
 * cluster-admin `k3s.yaml`: run with an admin kubeconfig,
 * {@link installNodeCredentials} applies the operator's ServiceAccount, its
 * RBAC and its ownership policy (the token is of that ServiceAccount, so the
 * policy confines the node's operator as it does the pod's), asks the TokenRequest API for a token of that ServiceAccount, and
 * writes two files, mode 0600: the token at `<path>.token`, and at `<path>` a
 * kubeconfig naming the API server, its CA and that token file.
 * `kinglet install --node-kubeconfig` does this for kinglet; an author's
 * operator does it for itself with {@link runNodeInstall} (its `install`
 * command, which its `<name>-credentials.service` runs).
 *
 * What the caller must know:
 *
 * - The token expires (`expirationSeconds`, 24 h by default; the API server
 *   may shorten it). Running it again writes a fresh one in place (a
 *   temporary file renamed over the old, so a reader never sees half a
 *   token); the runtime reads the token file again every minute and on a
 *   401, so the operator picks the new token up without a restart. The
 *   credentials timer renews it every 8 hours.
 * - The kubeconfig is block YAML that needs no YAML package to read, and
 *   keeps no secret itself: the token is only in its file.
 * - Before it applies anything it proves it can write both files
 *   ({@link checkNodeFiles}): a folder it may not write fails the command
 *   with a {@link NodeFilesError} saying what to grant, and leaves the
 *   cluster as it was.
 *
 * @example
 * ```ts
 * import { nodeKubeconfig } from "./node_credentials.ts";
 * nodeKubeconfig({ server: "https://10.0.0.1:6443", caCert: "-----BEGIN CERTIFICATE-----\n" }, "/var/lib/kinglet/kubeconfig.token", "kinglet-system")
 *   .includes("tokenFile: /var/lib/kinglet/kubeconfig.token"); // true
 * ```
 *
 * @module
 */
import { dirname, resolve } from "node:path";
import { envPrefix } from "../build/grants.ts";
import {
  type ClusterConfig,
  isForbidden,
  keyOf,
  KubeClient,
  type KubeObject,
  loadConfig,
  type Resource,
} from "../kube/mod.ts";
import { commentedYaml } from "./_commented_yaml.ts";
import { describeOperator, type OperatorDescription } from "./operator.ts";
import { MANIFEST_RESOURCES, rbacObjects } from "./rbac_files.ts";
import { webhookConfigurations } from "./webhook_files.ts";

/** What the admin client must be able to do. */
export type CredentialsClient = Pick<KubeClient, "apply" | "requestToken">;

/** An object to apply, with the resource it is applied to. */
export type Applied = KubeObject & { resource: Resource };

/** `object` with the resource it is applied to, found by its kind. */
export function applied(object: KubeObject): Applied {
  return { ...object, resource: MANIFEST_RESOURCES[object.kind ?? ""]! };
}

/** What {@link installNodeCredentials} grants, and to whom. */
export interface NodeGrant {
  /** The objects to apply first, in order: the ServiceAccount, its roles and bindings. */
  objects: readonly Applied[];
  /** The ServiceAccount the token is requested for. */
  account: { namespace: string; name: string };
  /** Who applies them (server-side apply's field manager), e.g. `kinglet`. */
  fieldManager: string;
  /**
   * The one namespace the rights serve, when they serve only one: the
   * kubeconfig's context names it, so that a run (and kubectl) can tell.
   * Defaults to the ServiceAccount's namespace.
   */
  namespace?: string;
}

/** Options of {@link installNodeCredentials}. */
export interface NodeCredentialsOptions {
  /** Where the kubeconfig goes; the token goes beside it, at `<path>.token`. */
  path: string;
  /** The token's requested lifetime, in seconds. @default 86400 */
  expirationSeconds?: number;
  /** Aborts the requests. */
  signal?: AbortSignal;
}

/**
 * What the operator described applies for node mode: its Namespace (so
 * that its ServiceAccount and Lease have one), then the RBAC of its deploy
 * files, object for object, then its webhook configurations at the node's
 * loopback (deploy/systemd/webhooks.yaml), whose CA bundle it injects itself.
 *
 * @throws {TypeError} for a description that cannot be derived; see `describeOperator`.
 */
export function nodeGrant(description: OperatorDescription): NodeGrant {
  const operator = describeOperator(description);
  const namespace: KubeObject = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: operator.namespace, labels: { "app.kubernetes.io/name": operator.name } },
  };
  const objects = [
    namespace,
    ...rbacObjects(operator).map((m) => m.object as KubeObject),
    ...webhookConfigurations(operator, "url"),
  ];
  return {
    objects: objects.map(applied),
    account: { namespace: operator.namespace, name: operator.serviceAccount },
    fieldManager: operator.name,
  };
}

/**
 * The files of node mode cannot be written where `--node-kubeconfig` asks;
 * thrown before anything is applied. The message says which folder, why,
 * and what to do.
 */
export class NodeFilesError extends Error {
  /** Always `NodeFilesError`. */
  override readonly name = "NodeFilesError";
  /** Always false: a grant or a path must change first. */
  readonly retryable = false;
  /** The exit code of a configuration error, which the units do not restart on. */
  readonly exitCode = 2;
}

/**
 * Proves that the kubeconfig at `path` and its token at `<path>.token` can
 * be written as {@link installNodeCredentials} writes them: creates their
 * folder (mode 0700) when it is missing, then writes, restricts to 0600 and
 * removes a file in it. `operator` names the `<PREFIX>_ALLOW_WRITE`
 * variable that widens the grant.
 *
 * @throws {NodeFilesError} when Deno or the operating system refuses.
 */
export async function checkNodeFiles(path: string, operator: string): Promise<void> {
  const folder = dirname(resolve(path));
  const files = `${path} and ${path}.token`;
  const probe = `${resolve(path)}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  try {
    await Deno.mkdir(folder, { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(probe, "", { mode: 0o600 });
    await Deno.chmod(probe, 0o600);
    await Deno.remove(probe);
  } catch (error) {
    const nothing = "nothing was applied";
    if (error instanceof Deno.errors.NotCapable) {
      const grant = `${envPrefix(operator)}_ALLOW_WRITE=${folder}`;
      const how = error.message.includes("deno compile")
        ? `rebuild the binary with ${grant}`
        : `start it with ${grant} (deno task start), or with --allow-write=${folder} (deno run)`;
      throw new NodeFilesError(
        `Cannot write ${files}: ${operator} may not write in ${folder} (${nothing}). Write ` +
          `them under /var/lib/${operator}, which it may, or ${how}`,
      );
    }
    if (error instanceof Deno.errors.PermissionDenied) {
      throw new NodeFilesError(
        `Cannot write ${files}: the operating system denies writing in ${folder} (${nothing}); ` +
          "run install as a user that may write there, or choose a folder that user owns",
      );
    }
    throw new NodeFilesError(
      `Cannot write ${files} in ${folder} (${nothing}): ${
        error instanceof Error ? error.message : error
      }; choose a path whose folder exists or can be created`,
    );
  }
}

/**
 * Applies `grant`'s objects, requests a token of its ServiceAccount and
 * writes the token file and the kubeconfig; returns a line per thing done,
 * for the user.
 *
 * @throws {RangeError} when `expirationSeconds` is under 600 (the API's floor).
 * @throws {NodeFilesError} before anything is applied, when the files cannot be written.
 */
export async function installNodeCredentials(
  client: CredentialsClient,
  config: Pick<ClusterConfig, "server" | "caCert">,
  grant: NodeGrant,
  options: NodeCredentialsOptions,
): Promise<string[]> {
  const { namespace, name } = grant.account;
  const lifetime = options.expirationSeconds ?? 86_400;
  if (!Number.isSafeInteger(lifetime) || lifetime < 600) {
    throw new RangeError(
      `Cannot request the token of ${namespace}/${name}: its lifetime must be at least 600 s ` +
        `(the TokenRequest API's floor), got ${lifetime}`,
    );
  }
  await checkNodeFiles(options.path, grant.fieldManager);
  const { signal } = options;
  for (const { resource, ...object } of grant.objects) {
    await client.apply(resource, object, {
      fieldManager: grant.fieldManager,
      force: true,
      ...(signal && { signal }),
    });
  }
  const { token, expirationTimestamp } = await client.requestToken(namespace, name, {
    expirationSeconds: lifetime,
    ...(signal && { signal }),
  });
  const tokenPath = `${options.path}.token`;
  await Deno.mkdir(dirname(options.path), { recursive: true, mode: 0o700 });
  await writePrivate(tokenPath, token);
  await writePrivate(options.path, nodeKubeconfig(config, tokenPath, grant.namespace ?? namespace));
  return [
    `applied ${grant.objects.map(named).join(", ")}`,
    `wrote ${tokenPath}: a token of ${namespace}/${name}, valid until ${expirationTimestamp}; ` +
    "run this again before then",
    `wrote ${options.path}: run ${grant.fieldManager} with --kubeconfig ${options.path}`,
  ];
}

/** `Role team-a/kinglet`: an object as the lines of install name it. */
function named(object: KubeObject): string {
  const { namespace, name } = object.metadata ?? {};
  return `${object.kind} ${keyOf(namespace, `${name}`)}`;
}

/** An install the API server refused: its kubeconfig is not an admin's. */
export class InstallDeniedError extends Error {
  /** Always `InstallDeniedError`. */
  override readonly name = "InstallDeniedError";
  /** Always false: install needs another kubeconfig. */
  readonly retryable = false;
  /** The exit code of a configuration error. */
  readonly exitCode = 2;
}

/**
 * What to say when the API server refuses install (a 403): install applies
 * CRDs, a ServiceAccount and RBAC, which only an admin may, so the fix is
 * an admin kubeconfig, not more rights for the operator. `source` is the
 * kubeconfig install ran with, `account` the operator's ServiceAccount, whose
 * own credentials (what install writes) are named as such.
 */
export function installDenied(
  error: Error,
  source: string,
  account: { namespace: string; name: string },
): InstallDeniedError {
  const own = error.message.includes(
    `"system:serviceaccount:${account.namespace}:${account.name}"`,
  );
  const which = own
    ? `${source} holds the ServiceAccount ${account.namespace}/${account.name}'s own ` +
      "credentials (what install --node-kubeconfig writes), not an admin's"
    : `the user of ${source} may not do that`;
  return new InstallDeniedError(
    `install was refused: ${error.message.replace(/; RBAC does not grant.*$/, "")}. Install ` +
      "applies CRDs, a ServiceAccount and RBAC, which takes an admin, and " +
      `${which}: run install with --kubeconfig <an admin kubeconfig> (on a k3s server, ` +
      "/etc/rancher/k3s/k3s.yaml)",
  );
}

/**
 * An operator's `install` command, for its `<name>-credentials.service`:
 * `install --kubeconfig <admin kubeconfig> --node-kubeconfig <path>` applies
 * the RBAC of `description` with the admin's rights and writes the
 * operator's own kubeconfig at `<path>`. Resolves to the exit code.
 *
 * @example
 * ```ts ignore
 * import { runNodeInstall } from "@kinglet/kinglet/deploy";
 * import { operator } from "./src/operator.ts";
 * if (Deno.args[0] === "install") Deno.exit(await runNodeInstall(operator, Deno.args.slice(1)));
 * ```
 */
export async function runNodeInstall(
  description: OperatorDescription,
  args: readonly string[],
): Promise<number> {
  const value = (flag: string) => {
    const i = args.findIndex((arg) => arg === flag || arg.startsWith(`${flag}=`));
    if (i === -1) return undefined;
    return args[i]!.includes("=") ? args[i]!.slice(flag.length + 1) : args[i + 1];
  };
  const path = value("--node-kubeconfig");
  if (!path) {
    Deno.stderr.writeSync(
      new TextEncoder().encode(
        "usage: install [--kubeconfig <admin kubeconfig>] --node-kubeconfig <path>\n",
      ),
    );
    return 2;
  }
  try {
    await checkNodeFiles(path, description.name);
  } catch (error) {
    if (!(error instanceof NodeFilesError)) throw error;
    Deno.stderr.writeSync(new TextEncoder().encode(`${error.message}\n`));
    return error.exitCode;
  }
  const admin = value("--kubeconfig");
  const config = await loadConfig(admin ? { kubeconfig: admin } : {});
  const client = new KubeClient(config);
  const grant = nodeGrant(description);
  try {
    const done = await installNodeCredentials(client, config, grant, { path });
    for (const line of done) Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
  } catch (error) {
    if (!isForbidden(error)) throw error;
    const denied = installDenied(error as Error, config.source, grant.account);
    Deno.stderr.writeSync(new TextEncoder().encode(`${denied.message}\n`));
    return denied.exitCode;
  } finally {
    client.close();
  }
  return 0;
}

/** The kubeconfig of a node's operator: the API server, its CA and the token file. */
export function nodeKubeconfig(
  config: Pick<ClusterConfig, "server" | "caCert">,
  tokenPath: string,
  namespace: string,
): string {
  const cluster = {
    server: config.server,
    ...(config.caCert !== undefined && { "certificate-authority-data": btoa(config.caCert) }),
  };
  return commentedYaml({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "kinglet", cluster }],
    users: [{ name: "kinglet", user: { tokenFile: tokenPath } }],
    contexts: [{ name: "kinglet", context: { cluster: "kinglet", user: "kinglet", namespace } }],
    "current-context": "kinglet",
  });
}

/** Writes `text` to `path`, mode 0600, replacing any old file at once. */
async function writePrivate(path: string, text: string): Promise<void> {
  const temporary = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(temporary, text, { mode: 0o600 });
  try {
    await Deno.chmod(temporary, 0o600);
    await Deno.rename(temporary, path);
  } catch (error) {
    await Deno.remove(temporary).catch(() => {});
    throw error;
  }
}
