/**
 * One kubeconfig file, parsed and checked field by field: every problem is a
 * {@link ConfigError} naming the file, the entry and the field. Relative paths
 * are resolved against the file's folder, as kubectl does.
 *
 * @module
 */
import { dirname, resolvePath as resolve } from "./_path.ts";
import { NOT_BLOCK_YAML, readBlockYaml } from "./_block_yaml.ts";
import { ConfigError, describeError } from "./errors.ts";
import { EXEC_API_VERSIONS, type ExecConfig } from "./_exec.ts";

/** `clusters[].cluster`, with `name` and the file it came from. */
export interface ClusterEntry {
  name: string;
  file: string;
  server?: string;
  certificateAuthority?: string;
  certificateAuthorityData?: string;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
  /** `extensions[name=client.authentication.k8s.io/exec].extension`, for exec plugins. */
  execExtension?: unknown;
}

/** `users[].user`. */
export interface UserEntry {
  name: string;
  file: string;
  clientCertificate?: string;
  clientCertificateData?: string;
  clientKey?: string;
  clientKeyData?: string;
  token?: string;
  tokenFile?: string;
  exec?: ExecConfig;
  /** `auth-provider.name`: legacy in-tree plugins, refused with a pointer to their successor. */
  authProvider?: string;
  basicAuth: boolean;
  impersonation: boolean;
}

/** `contexts[].context`. */
export interface ContextEntry {
  name: string;
  file: string;
  cluster?: string;
  user?: string;
  namespace?: string;
}

/** The entries of one file, keyed by name. */
export interface KubeconfigFile {
  path: string;
  clusters: Map<string, ClusterEntry>;
  users: Map<string, UserEntry>;
  contexts: Map<string, ContextEntry>;
  currentContext?: string;
}

type Obj = Record<string, unknown>;

/**
 * Parses the text of the kubeconfig at `path` (absolute). An empty file is an
 * empty config, as for kubectl. The usual block-style file is read without
 * the `yaml` package, which is loaded only for other YAML.
 *
 * @throws {ConfigError} for invalid YAML, wrong types, unnamed or duplicate entries.
 */
export async function parseKubeconfig(text: string, path: string): Promise<KubeconfigFile> {
  let doc = readBlockYaml(text);
  if (doc === NOT_BLOCK_YAML) doc = await parseYaml(text, path);
  const where = `kubeconfig ${path}`;
  const root = doc === null || doc === undefined ? {} : record(doc, where);
  const dir = dirname(path);
  const abs = (p: string | undefined) => (p ? resolve(dir, p) : undefined);
  const file: KubeconfigFile = {
    path,
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
  };
  const currentContext = str(root, "current-context", where);
  if (currentContext) file.currentContext = currentContext;

  for (const [name, c, at] of named(root, "clusters", "cluster", path)) {
    const ext = list(c, "extensions", at).map((e, i) => record(e, `extensions[${i}] of ${at}`))
      .find((e) => e.name === "client.authentication.k8s.io/exec");
    file.clusters.set(name, {
      name,
      file: path,
      server: str(c, "server", at),
      certificateAuthority: abs(str(c, "certificate-authority", at)),
      certificateAuthorityData: str(c, "certificate-authority-data", at),
      insecureSkipTlsVerify: bool(c, "insecure-skip-tls-verify", at) ?? false,
      tlsServerName: str(c, "tls-server-name", at),
      proxyUrl: str(c, "proxy-url", at),
      execExtension: ext?.extension,
    });
  }
  for (const [name, u, at] of named(root, "users", "user", path)) {
    const provider = u["auth-provider"] === undefined || u["auth-provider"] === null
      ? undefined
      : record(u["auth-provider"], `auth-provider of ${at}`);
    file.users.set(name, {
      name,
      file: path,
      clientCertificate: abs(str(u, "client-certificate", at)),
      clientCertificateData: str(u, "client-certificate-data", at),
      clientKey: abs(str(u, "client-key", at)),
      clientKeyData: str(u, "client-key-data", at),
      token: str(u, "token", at),
      tokenFile: abs(str(u, "tokenFile", at)),
      exec: u.exec === undefined || u.exec === null ? undefined : execConfig(u.exec, at, dir),
      authProvider: provider ? (str(provider, "name", `auth-provider of ${at}`) ?? "") : undefined,
      basicAuth: Boolean(str(u, "username", at) || str(u, "password", at)),
      impersonation: ["as", "as-uid", "as-groups", "as-user-extra"].some((k) =>
        u[k] !== undefined && u[k] !== null && u[k] !== ""
      ),
    });
  }
  for (const [name, c, at] of named(root, "contexts", "context", path)) {
    file.contexts.set(name, {
      name,
      file: path,
      cluster: str(c, "cluster", at),
      user: str(c, "user", at),
      namespace: str(c, "namespace", at),
    });
  }
  return file;
}

function execConfig(value: unknown, user: string, dir: string): ExecConfig {
  const at = `exec of ${user}`;
  const e = record(value, at);
  const apiVersion = str(e, "apiVersion", at);
  const supported = EXEC_API_VERSIONS as readonly (string | undefined)[];
  if (!supported.includes(apiVersion)) {
    throw new ConfigError(
      `Invalid ${at}: apiVersion ${quote(apiVersion ?? null)} is not supported; ` +
        `use one of ${EXEC_API_VERSIONS.join(", ")}`,
    );
  }
  const command = str(e, "command", at);
  if (!command) throw new ConfigError(`Invalid ${at}: "command" is missing`);
  const interactiveMode = str(e, "interactiveMode", at);
  if (interactiveMode === "Always") {
    throw new ConfigError(
      `Cannot use ${at}: interactiveMode is "Always", but kinglet runs exec plugins ` +
        `without a terminal; use a plugin that works with interactiveMode "Never"`,
    );
  }
  const args = list(e, "args", at).map((a, i) => {
    if (typeof a !== "string") throw typeError(`args[${i}]`, at, "a string", a);
    return a;
  });
  const env = list(e, "env", at).map((item, i) => {
    const entry = record(item, `env[${i}] of ${at}`);
    const name = str(entry, "name", `env[${i}] of ${at}`);
    if (!name) throw new ConfigError(`Invalid env[${i}] of ${at}: "name" is missing`);
    return { name, value: str(entry, "value", `env[${i}] of ${at}`) ?? "" };
  });
  const installHint = str(e, "installHint", at);
  return {
    apiVersion: apiVersion as ExecConfig["apiVersion"],
    // A bare name is looked up on PATH; only a path with a slash is relative to the file.
    command: command.includes("/") ? resolve(dir, command) : command,
    args,
    env,
    ...(installHint ? { installHint } : {}),
    provideClusterInfo: bool(e, "provideClusterInfo", at) ?? false,
  };
}

/** Yields `[name, body, description]` for each entry of a named list like `clusters`. */
function* named(
  root: Obj,
  key: string,
  body: string,
  path: string,
): Generator<[string, Obj, string]> {
  const seen = new Set<string>();
  const items = list(root, key, `kubeconfig ${path}`);
  for (const [i, item] of items.entries()) {
    const entry = record(item, `${key}[${i}] of kubeconfig ${path}`);
    const name = entry.name;
    if (typeof name !== "string" || name === "") {
      throw new ConfigError(`Invalid kubeconfig ${path}: ${key}[${i}] has no "name"`);
    }
    if (seen.has(name)) {
      throw new ConfigError(
        `Invalid kubeconfig ${path}: ${key} has two entries named "${name}"; rename or remove one`,
      );
    }
    seen.add(name);
    const at = `${body} "${name}" in ${path}`;
    const value = entry[body];
    yield [name, value === undefined || value === null ? {} : record(value, at), at];
  }
}

function record(v: unknown, where: string): Obj {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new ConfigError(`Invalid ${where}: expected a mapping, got ${describe(v)}`);
  }
  return v as Obj;
}

function list(o: Obj, key: string, where: string): unknown[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw typeError(key, where, "a list", v);
  return v;
}

function str(o: Obj, key: string, where: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string") throw typeError(key, where, "a string", v);
  return v;
}

function bool(o: Obj, key: string, where: string): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw typeError(key, where, "true or false", v);
  return v;
}

function typeError(key: string, where: string, expected: string, got: unknown): ConfigError {
  return new ConfigError(`Invalid ${where}: "${key}" must be ${expected}, got ${describe(got)}`);
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return "a list";
  if (v === null) return "null";
  if (typeof v === "object") return "a mapping";
  return `${typeof v} ${quote(v)}`;
}

/** A scalar as JSON, shortened: a value in the wrong place may be a pasted certificate or file. */
function quote(v: unknown): string {
  const text = typeof v === "bigint" ? String(v) : JSON.stringify(v) ?? String(v);
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}

async function parseYaml(text: string, path: string): Promise<unknown> {
  // A full specifier: lib/kube is imported by URL too, where kinglet's import map does not apply.
  const { parse } = await import("npm:yaml@2.9.1");
  try {
    // Warnings (an unknown tag, say) would go to stderr around the log; the checks judge the values.
    return parse(text, { logLevel: "error" });
  } catch (e) {
    const first = describeError(e).split("\n")[0];
    throw new ConfigError(`Invalid kubeconfig ${path}: not valid YAML: ${first}`, { cause: e });
  }
}
