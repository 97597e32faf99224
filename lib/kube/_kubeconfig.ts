/**
 * Kubeconfig files to a {@link ClusterConfig}: read the files, merge them the
 * way kubectl does, pick the context, then gather the TLS material and the
 * credentials its cluster and user point to.
 *
 * @module
 */
import { logger } from "../log.ts";
import type { Clock } from "../async/clock.ts";
import type { ClusterConfig } from "./cluster_config.ts";
import { ConfigError, describeError } from "./errors.ts";
import { ExecTokenSource } from "./_exec.ts";
import {
  type ClusterEntry,
  type ContextEntry,
  type KubeconfigFile,
  parseKubeconfig,
  type UserEntry,
} from "./_kubeconfig_file.ts";
import { FileTokenSource, noToken, staticToken, type TokenSource } from "./token_source.ts";

/** Inputs of {@link kubeconfigConfig}. */
export interface KubeconfigOptions {
  /** Absolute paths, highest precedence first. */
  paths: string[];
  /** True when the paths come from `KUBECONFIG`: missing ones are skipped, as kubectl does. */
  skipMissing: boolean;
  /** Said after "<path> does not exist" when a file is missing and not skipped. */
  missingHint?: string;
  context?: string;
  /** The environment exec plugins see; unset, they inherit the process's. */
  execEnv?: Record<string, string | undefined>;
  readTextFile: (path: string) => Promise<string>;
  clock?: Clock;
}

/** Successors of the auth providers that were removed from Kubernetes clients. */
const AUTH_PROVIDER_SUCCESSORS: Record<string, string> = {
  gcp: "the exec plugin gke-gcloud-auth-plugin " +
    "(https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl)",
  azure: "the exec plugin kubelogin (https://azure.github.io/kubelogin/), " +
    "e.g. `kubelogin convert-kubeconfig`",
  oidc: "the exec plugin kubelogin (https://github.com/int128/kubelogin, `kubectl oidc-login`)",
};

/**
 * Loads and merges the kubeconfig files: for clusters, users and contexts the
 * first file to define a name wins, and `current-context` comes from the
 * first file that sets one.
 *
 * @throws {ConfigError} for missing or malformed files, unknown names and unusable credentials.
 */
export async function kubeconfigConfig(opts: KubeconfigOptions): Promise<ClusterConfig> {
  const files: KubeconfigFile[] = [];
  for (const path of opts.paths) {
    let text: string;
    try {
      text = await opts.readTextFile(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound && opts.skipMissing) continue;
      if (e instanceof Deno.errors.NotFound) {
        throw new ConfigError(
          `Cannot read kubeconfig ${path}: it does not exist; ` +
            (opts.missingHint ?? "check the path"),
          { cause: e },
        );
      }
      throw new ConfigError(`Cannot read kubeconfig ${path}: ${describeError(e)}`, { cause: e });
    }
    files.push(await parseKubeconfig(text, path));
  }
  if (files.length === 0) {
    throw new ConfigError(
      `None of the kubeconfig files in KUBECONFIG exists: ${opts.paths.join(", ")}; ` +
        "fix KUBECONFIG or pass a kubeconfig path",
    );
  }
  const source = files.map((f) => f.path).join(Deno.build.os === "windows" ? ";" : ":");
  const merged = merge(files);

  const contextName = opts.context ?? merged.currentContext;
  const available = (m: Map<string, unknown>) =>
    m.size === 0 ? "none are defined" : [...m.keys()].join(", ");
  if (!contextName) {
    throw new ConfigError(
      `No current-context is set in ${source}; choose a context ` +
        `(kubectl config use-context <name>, or --context); available contexts: ` +
        available(merged.contexts),
    );
  }
  const context = merged.contexts.get(contextName);
  if (!context) {
    throw new ConfigError(
      `Context "${contextName}" not found in ${source}; available contexts: ` +
        available(merged.contexts),
    );
  }
  const inContext = `context "${context.name}" in ${context.file}`;
  if (!context.cluster) {
    throw new ConfigError(
      `Invalid ${inContext}: it names no cluster; set contexts[].context.cluster`,
    );
  }
  const cluster = merged.clusters.get(context.cluster);
  if (!cluster) {
    throw new ConfigError(
      `Cluster "${context.cluster}" (used by ${inContext}) not found in ${source}; ` +
        `available clusters: ${available(merged.clusters)}`,
    );
  }
  let user: UserEntry | undefined;
  if (context.user) {
    user = merged.users.get(context.user);
    if (!user) {
      throw new ConfigError(
        `User "${context.user}" (used by ${inContext}) not found in ${source}; ` +
          `available users: ${available(merged.users)}`,
      );
    }
  }
  const tls = await clusterTls(cluster, opts.readTextFile);
  const credentials = user ? await userCredentials(user, cluster, tls.caCert, opts) : {
    auth: noToken,
  };
  if (cluster.tlsServerName && credentials.clientCert) {
    throw new ConfigError(
      `Cannot use ${inContext}: cluster "${cluster.name}" in ${cluster.file} sets tls-server-name ` +
        `and user "${user?.name}" a client certificate, and Deno cannot present a client ` +
        "certificate to a server it verifies by another name; authenticate with a token, or use " +
        "a server URL whose host name is in the server certificate",
    );
  }
  return {
    server: tls.server,
    ...(tls.caCert ? { caCert: tls.caCert } : {}),
    ...(cluster.tlsServerName ? { tlsServerName: cluster.tlsServerName } : {}),
    ...(cluster.insecureSkipTlsVerify ? { insecureSkipTLSVerify: true } : {}),
    ...(cluster.proxyUrl ? { proxyUrl: cluster.proxyUrl } : {}),
    ...credentials,
    namespace: context.namespace ?? "default",
    contextName: context.name,
    source,
  };
}

function merge(files: KubeconfigFile[]) {
  const clusters = new Map<string, ClusterEntry>();
  const users = new Map<string, UserEntry>();
  const contexts = new Map<string, ContextEntry>();
  let currentContext: string | undefined;
  for (const f of files) {
    for (const [k, v] of f.clusters) if (!clusters.has(k)) clusters.set(k, v);
    for (const [k, v] of f.users) if (!users.has(k)) users.set(k, v);
    for (const [k, v] of f.contexts) if (!contexts.has(k)) contexts.set(k, v);
    currentContext ??= f.currentContext;
  }
  return { clusters, users, contexts, currentContext };
}

async function clusterTls(
  c: ClusterEntry,
  readTextFile: (path: string) => Promise<string>,
): Promise<{ server: string; caCert?: string }> {
  const at = `cluster "${c.name}" in ${c.file}`;
  if (!c.server) {
    throw new ConfigError(
      `Invalid ${at}: "server" is missing; set it to the API server URL, e.g. https://10.0.0.1:6443`,
    );
  }
  let url: URL;
  try {
    url = new URL(c.server);
  } catch {
    throw new ConfigError(
      `Invalid ${at}: server ${excerpt(JSON.stringify(c.server))} is not a URL`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ConfigError(`Invalid ${at}: server ${excerpt(c.server)} must be an https:// URL`);
  }
  if (c.tlsServerName && url.protocol !== "https:") {
    throw new ConfigError(
      `Invalid ${at}: tls-server-name is set but server ${excerpt(c.server)} is not https://; ` +
        "remove tls-server-name or use the https:// URL",
    );
  }
  if (c.tlsServerName && c.proxyUrl) {
    throw new ConfigError(
      `Cannot use ${at}: tls-server-name together with proxy-url (Deno's fetch, which carries ` +
        "the proxy, cannot verify the server by another name); remove one, or use a server URL " +
        "whose host name is in the server certificate",
    );
  }
  const hasCa = Boolean(c.certificateAuthority || c.certificateAuthorityData);
  if (c.certificateAuthority && c.certificateAuthorityData) {
    throw new ConfigError(
      `Invalid ${at}: both certificate-authority and certificate-authority-data are set; keep one`,
    );
  }
  if (c.insecureSkipTlsVerify && hasCa) {
    throw new ConfigError(
      `Invalid ${at}: insecure-skip-tls-verify is set together with a certificate authority; ` +
        "remove insecure-skip-tls-verify (preferred) or the certificate authority",
    );
  }
  if (c.insecureSkipTlsVerify) {
    logger("kube", "config").warn(
      "TLS certificate verification of {server} is disabled by insecure-skip-tls-verify in {where}",
      { server: c.server, where: at },
    );
  }
  const server = c.server.replace(/\/+$/, "");
  if (c.certificateAuthorityData) {
    return {
      server,
      caCert: decodePem(c.certificateAuthorityData, "certificate-authority-data", at),
    };
  }
  if (c.certificateAuthority) {
    return {
      server,
      caCert: await readPem(c.certificateAuthority, "certificate-authority", at, readTextFile),
    };
  }
  return { server };
}

async function userCredentials(
  u: UserEntry,
  cluster: ClusterEntry,
  caCert: string | undefined,
  opts: KubeconfigOptions,
): Promise<{ auth: TokenSource; clientCert?: string; clientKey?: string }> {
  const at = `user "${u.name}" in ${u.file}`;
  if (u.authProvider !== undefined) {
    const successor = AUTH_PROVIDER_SUCCESSORS[u.authProvider] ??
      "the exec credential plugin its vendor provides";
    throw new ConfigError(
      `Cannot use ${at}: auth-provider "${excerpt(u.authProvider)}" was removed from Kubernetes ` +
        `clients; switch the user to ${successor}`,
    );
  }
  if (u.basicAuth) {
    throw new ConfigError(
      `Cannot use ${at}: username/password authentication was removed from kube-apiserver ` +
        "(1.19); use a token, a client certificate or an exec plugin",
    );
  }
  if (u.impersonation) {
    throw new ConfigError(
      `Cannot use ${at}: impersonation (as, as-groups, as-uid, as-user-extra) is not supported`,
    );
  }
  const read = opts.readTextFile;
  const cert = await material(
    u,
    "client-certificate",
    u.clientCertificate,
    u.clientCertificateData,
    read,
  );
  const key = await material(u, "client-key", u.clientKey, u.clientKeyData, read);
  if (Boolean(cert) !== Boolean(key)) {
    throw new ConfigError(
      `Invalid ${at}: ${cert ? "client-key" : "client-certificate"} is missing; a client ` +
        "certificate needs both client-certificate(-data) and client-key(-data)",
    );
  }
  const tls = cert && key ? { clientCert: cert, clientKey: key } : {};
  const clock = opts.clock ? { clock: opts.clock } : {};
  // kubectl's precedence: tokenFile, then token, then the exec plugin.
  if (u.tokenFile) {
    const source = new FileTokenSource(u.tokenFile, {
      readTextFile: read,
      description: `tokenFile of ${at}`,
      ...clock,
    });
    await source.token();
    return { auth: source, ...tls };
  }
  if (u.token) return { auth: staticToken(u.token), ...tls };
  if (u.exec) {
    const info = {
      server: cluster.server ?? "",
      ...(caCert ? { "certificate-authority-data": encodeBase64(caCert) } : {}),
      ...(cluster.insecureSkipTlsVerify ? { "insecure-skip-tls-verify": true } : {}),
      ...(cluster.execExtension !== undefined ? { config: cluster.execExtension } : {}),
    };
    const auth = new ExecTokenSource(u.exec, {
      where: at,
      cluster: info,
      ...(opts.execEnv ? { env: opts.execEnv } : {}),
      ...clock,
    });
    return { auth, ...tls };
  }
  return { auth: noToken, ...tls };
}

async function material(
  u: UserEntry,
  field: "client-certificate" | "client-key",
  file: string | undefined,
  data: string | undefined,
  readTextFile: (path: string) => Promise<string>,
): Promise<string | undefined> {
  const at = `user "${u.name}" in ${u.file}`;
  if (file && data) {
    throw new ConfigError(`Invalid ${at}: both ${field} and ${field}-data are set; keep one`);
  }
  if (data) return decodePem(data, `${field}-data`, at);
  if (file) return await readPem(file, field, at, readTextFile);
  return undefined;
}

async function readPem(
  path: string,
  field: string,
  at: string,
  readTextFile: (path: string) => Promise<string>,
): Promise<string> {
  let text: string;
  try {
    text = await readTextFile(path);
  } catch (e) {
    throw new ConfigError(`Cannot read ${field} ${path} of ${at}: ${describeError(e)}`, {
      cause: e,
    });
  }
  if (!text.includes("-----BEGIN ")) {
    throw new ConfigError(`Invalid ${field} ${path} of ${at}: the file holds no PEM block`);
  }
  return text;
}

/** Decodes a `*-data` field: base64 of PEM text. */
function decodePem(data: string, field: string, at: string): string {
  let text: string;
  try {
    text = new TextDecoder().decode(Uint8Array.from(atob(data), (c) => c.charCodeAt(0)));
  } catch (e) {
    throw new ConfigError(`Invalid ${at}: ${field} is not valid base64`, { cause: e });
  }
  if (!text.includes("-----BEGIN ")) {
    throw new ConfigError(
      `Invalid ${at}: ${field} does not decode to PEM; it must be the base64 of a PEM file ` +
        `(e.g. base64 -w0 < ca.crt)`,
    );
  }
  return text;
}

function encodeBase64(text: string): string {
  return btoa(Array.from(new TextEncoder().encode(text), (b) => String.fromCharCode(b)).join(""));
}

/** The start of a value quoted in a message: a value in the wrong place may be a whole file. */
function excerpt(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}...` : text;
}
