/**
 * Where the webhook's certificates live so that every candidate of an
 * operator finds the same ones: a Secret in the operator's namespace
 * ({@link SecretCertificateStore}), or a directory on the node
 * ({@link DirectoryCertificateStore}).
 *
 * What the caller must know:
 *
 * - A store holds five PEM texts under the names cert-manager and
 *   controller-runtime use: `ca.crt` (the bundle of CAs the API server
 *   trusts), `ca-current.crt` and `ca.key` (the CA that issues now),
 *   `tls.crt` and `tls.key` (the serving certificate).
 * - Writes are optimistic: each names the version it read, and one that
 *   another writer beat returns `undefined` instead of writing; the caller
 *   reads again. Nothing is ever merged.
 * - A directory is one node's. The CA bundle in a webhook configuration is
 *   cluster-wide, so when several nodes serve, keep the certificates in a
 *   Secret, or each node would inject a bundle of its own CA over the others'.
 *
 * @example
 * ```ts
 * import { SecretCertificateStore } from "./cert_store.ts";
 * import { MemoryCluster } from "../../testing/memory_cluster.ts";
 * const cluster = new MemoryCluster({ namespaces: ["ops"] });
 * const store = new SecretCertificateStore(cluster, { namespace: "ops", name: "demo-webhook-tls", operator: "demo" });
 * await store.read(); // undefined: nothing stored yet
 * const pem = "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n";
 * const pair = { cert: pem, key: pem };
 * const version = await store.write({ caBundle: pem, ca: pair, serving: pair }, undefined);
 * await store.write({ caBundle: pem, ca: pair, serving: pair }, undefined); // undefined: it exists
 * (await store.read())?.version === version; // true
 * ```
 *
 * @module
 */
import { isAlreadyExists, isConflict, isNotFound } from "../../kube/errors.ts";
import type { KubeClient } from "../../kube/client.ts";
import { SECRETS } from "../../kube/resources.ts";
import type { KubeObject } from "../../kube/types.ts";
import type { CertificateKeyPair } from "../../x509/mod.ts";
import { sha256Hex } from "../../_sha256.ts";

/** What a keeper keeps, all PEM. */
export interface StoredCertificates {
  /** Every CA the API server is to trust, the current one among them (`ca.crt`). */
  caBundle: string;
  /** The CA that issues now (`ca-current.crt`, `ca.key`). */
  ca: CertificateKeyPair;
  /** The serving certificate (`tls.crt`, `tls.key`). */
  serving: CertificateKeyPair;
}

/** What a store holds, and the version a write must name to replace it. */
export interface StoredRecord {
  /** `undefined` when something is stored but not all five texts are. */
  certificates?: StoredCertificates;
  /** What a write names to replace this: a resourceVersion, or a digest of the files. */
  version: string;
}

/** Keeps {@link StoredCertificates} for all the candidates of an operator. */
export interface CertificateStore {
  /** What is stored, or `undefined` when nothing is. */
  read(signal?: AbortSignal): Promise<StoredRecord | undefined>;
  /**
   * Stores `certificates` if the store is still at `version` (`undefined`:
   * still empty). Resolves to the new version, or to `undefined` when
   * another writer got there first: read again.
   */
  write(
    certificates: StoredCertificates,
    version: string | undefined,
    signal?: AbortSignal,
  ): Promise<string | undefined>;
}

/** The file and Secret key of each text. */
const KEYS = {
  caBundle: "ca.crt",
  caCert: "ca-current.crt",
  caKey: "ca.key",
  servingCert: "tls.crt",
  servingKey: "tls.key",
} as const;

type Texts = Record<keyof typeof KEYS, string>;

function texts(certificates: StoredCertificates): Texts {
  const { caBundle, ca, serving } = certificates;
  return {
    caBundle,
    caCert: ca.cert,
    caKey: ca.key,
    servingCert: serving.cert,
    servingKey: serving.key,
  };
}

function certificatesOf(found: Partial<Texts>): StoredCertificates | undefined {
  const { caBundle, caCert, caKey, servingCert, servingKey } = found;
  if (!caBundle || !caCert || !caKey || !servingCert || !servingKey) return undefined;
  return {
    caBundle,
    ca: { cert: caCert, key: caKey },
    serving: { cert: servingCert, key: servingKey },
  };
}

/** The client calls a {@link SecretCertificateStore} makes: get, create and update of one Secret. */
export type SecretStoreClient = Pick<KubeClient, "getOptional" | "create" | "replace">;

/** Options of {@link SecretCertificateStore}. */
export interface SecretCertificateStoreOptions {
  /** The operator's namespace. */
  namespace: string;
  /** The Secret's name, usually `webhookObjectNames(operator).secret`. */
  name: string;
  /** Written as the `app.kubernetes.io/managed-by` label, which the ownership policy reads. */
  operator: string;
}

interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

/**
 * Certificates in a `kubernetes.io/tls` Secret: created when absent,
 * replaced with the resourceVersion read (a 409 is a lost race). Needs
 * `get`, `create` and `update` on the Secret, nothing more.
 */
export class SecretCertificateStore implements CertificateStore {
  readonly #client: SecretStoreClient;
  readonly #namespace: string;
  readonly #name: string;
  readonly #operator: string;
  /** The Secret last read, whose labels and annotations a replace keeps. */
  #last: Secret | undefined;

  /**
   * Creates a store over one Secret; nothing is read until {@link read}.
   *
   * @throws {TypeError} when `namespace`, `name` or `operator` is empty.
   */
  constructor(client: SecretStoreClient, options: SecretCertificateStoreOptions) {
    for (const key of ["namespace", "name", "operator"] as const) {
      if (!options[key]) {
        throw new TypeError(
          `Cannot keep certificates in a Secret: '${key}' must be a name, got ""`,
        );
      }
    }
    this.#client = client;
    this.#namespace = options.namespace;
    this.#name = options.name;
    this.#operator = options.operator;
  }

  async read(signal?: AbortSignal): Promise<StoredRecord | undefined> {
    const secret = await this.#client.getOptional<Secret>(SECRETS, this.#name, {
      namespace: this.#namespace,
      ...(signal && { signal }),
    });
    this.#last = secret;
    if (!secret) return undefined;
    const found: Partial<Texts> = {};
    for (const [field, key] of Object.entries(KEYS) as [keyof Texts, string][]) {
      const value = secret.data?.[key];
      if (value) found[field] = atob(value);
    }
    const certificates = certificatesOf(found);
    return {
      version: secret.metadata?.resourceVersion ?? "",
      ...(certificates && { certificates }),
    };
  }

  async write(
    certificates: StoredCertificates,
    version: string | undefined,
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    const data: Record<string, string> = {};
    for (const [field, text] of Object.entries(texts(certificates))) {
      data[KEYS[field as keyof Texts]] = btoa(text);
    }
    const kept = this.#last?.metadata?.resourceVersion === version ? this.#last : undefined;
    const metadata = {
      ...kept?.metadata,
      name: this.#name,
      namespace: this.#namespace,
      labels: { ...kept?.metadata?.labels, "app.kubernetes.io/managed-by": this.#operator },
      ...(version !== undefined && { resourceVersion: version }),
    };
    const secret: Secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata,
      type: "kubernetes.io/tls",
      data,
    };
    const options = { namespace: this.#namespace, ...(signal && { signal }) };
    try {
      const written = version === undefined
        ? await this.#client.create(SECRETS, secret, options)
        : await this.#client.replace(SECRETS, secret, options);
      this.#last = written;
      return written.metadata?.resourceVersion ?? "";
    } catch (error) {
      if (version === undefined && isNotFound(error)) {
        throw new TypeError(
          `Cannot keep the webhook's certificates in the Secret ${this.#namespace}/${this.#name}: ` +
            `the namespace ${this.#namespace} does not exist; create it (the operator's install ` +
            "does) or name another namespace for the certificates",
          { cause: error },
        );
      }
      // A create that lost to another's, or a replace of a Secret changed or deleted meanwhile.
      if (isAlreadyExists(error) || isConflict(error) || isNotFound(error)) return undefined;
      throw error;
    }
  }
}

/**
 * Certificates as five files in a directory the process owns, each readable
 * by its owner only. A write replaces all five at once for readers (a new
 * file renamed over the old, under an exclusive lock of `.lock`), and the
 * version is the SHA-256 of the five texts.
 */
export class DirectoryCertificateStore implements CertificateStore {
  readonly #dir: string;

  /**
   * Creates a store in `dir`, made (mode 0700) at the first write.
   *
   * @throws {TypeError} when `dir` is empty.
   */
  constructor(dir: string) {
    if (!dir) throw new TypeError(`Cannot keep certificates in a directory: 'dir' is empty`);
    this.#dir = dir;
  }

  async read(): Promise<StoredRecord | undefined> {
    const lock = await this.#lock(false);
    if (!lock) return undefined;
    try {
      return await this.#readUnlocked();
    } finally {
      lock.close();
    }
  }

  async write(
    certificates: StoredCertificates,
    version: string | undefined,
  ): Promise<string | undefined> {
    await Deno.mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const lock = (await this.#lock(true))!;
    try {
      if ((await this.#readUnlocked())?.version !== version) return undefined;
      const all = texts(certificates);
      const temporary = Object.entries(all).map(([field, text]) => {
        const path = `${this.#dir}/${KEYS[field as keyof Texts]}`;
        return { path, next: `${path}.${crypto.randomUUID()}.tmp`, text };
      });
      await Promise.all(
        temporary.map(({ next, text }) => Deno.writeTextFile(next, text, { mode: 0o600 })),
      );
      for (const { path, next } of temporary) await Deno.rename(next, path);
      return await versionOf(all);
    } finally {
      lock.close();
    }
  }

  async #readUnlocked(): Promise<StoredRecord | undefined> {
    const found: Partial<Texts> = {};
    for (const [field, file] of Object.entries(KEYS) as [keyof Texts, string][]) {
      try {
        found[field] = await Deno.readTextFile(`${this.#dir}/${file}`);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
    if (Object.keys(found).length === 0) return undefined;
    const certificates = certificatesOf(found);
    const version = await versionOf(found);
    return { version, ...(certificates && { certificates }) };
  }

  /** The lock file, locked shared or exclusive; `undefined` when reading a directory not made. */
  async #lock(exclusive: boolean): Promise<Deno.FsFile | undefined> {
    const path = `${this.#dir}/.lock`;
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
    } catch (error) {
      if (!exclusive && error instanceof Deno.errors.NotFound) return undefined;
      throw error;
    }
    await file.lock(exclusive);
    return file;
  }
}

async function versionOf(found: Partial<Texts>): Promise<string> {
  const joined = Object.keys(KEYS).map((field) => found[field as keyof Texts] ?? "").join("\0");
  return await sha256Hex([new TextEncoder().encode(joined)]);
}
