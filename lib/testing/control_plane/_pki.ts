/**
 * Fresh X.509 v3 certificates for one local control plane, made with
 * WebCrypto (no `openssl` needed): a CA, the API server's serving
 * certificate, one client certificate per identity, and the service-account
 * signing key pair, written as PEM files.
 *
 * The certificates come from kinglet's X.509 module (`lib/x509/`, whose
 * module doc says why its DER is written by hand rather than by a library),
 * valid for ten years. Their keys are P-256; the service-account key is RSA,
 * as the API server and controller manager expect.
 *
 * @example
 * ```ts
 * import { generatePki } from "./_pki.ts";
 * const dir = await Deno.makeTempDir();
 * const pki = await generatePki(dir, { admin: { commonName: "admin", organizations: ["system:masters"] } });
 * const pem = await Deno.readTextFile(pki.clients["admin"]!.cert);
 * if (!pem.startsWith("-----BEGIN CERTIFICATE-----")) throw new Error(pem);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */
import { join } from "node:path";
import {
  type CertificateKeyPair,
  createCertificateAuthority,
  issueCertificate,
  pemEncode,
} from "../../x509/mod.ts";

/** A client identity: its common name and organizations (groups). */
export interface ClientIdentity {
  commonName: string;
  organizations?: string[];
}

/** Paths of a PEM certificate and its private key. */
export interface KeyPair {
  cert: string;
  key: string;
}

/** What {@link generatePki} wrote, all PEM files under its folder. */
export interface Pki {
  ca: KeyPair;
  serving: KeyPair;
  clients: Record<string, KeyPair>;
  serviceAccount: { privateKey: string; publicKey: string };
}

/** Where the serving certificate is valid: loopback and the in-cluster names of the API server. */
const SERVING_IPS = ["127.0.0.1", "10.96.0.1"];
const SERVING_NAMES = [
  "localhost",
  "kubernetes",
  "kubernetes.default",
  "kubernetes.default.svc",
  "kubernetes.default.svc.cluster.local",
];
/** Ten years: a local control plane outlives no certificate it made. */
const LIFETIME_MS = 3650 * 86_400_000;

/**
 * Writes a CA, a serving certificate for `127.0.0.1`/`localhost`/`kubernetes…`,
 * one client certificate per entry of `clients` and an RSA service-account key
 * pair into `dir`, which must exist. Private keys are PKCS #8, readable only
 * by their owner.
 *
 * @throws the signal's reason when aborted.
 */
export async function generatePki(
  dir: string,
  clients: Record<string, ClientIdentity>,
  signal?: AbortSignal,
): Promise<Pki> {
  const pair = (name: string): KeyPair => ({
    cert: join(dir, `${name}.crt`),
    key: join(dir, `${name}.key`),
  });
  const ca = await createCertificateAuthority({
    commonName: "kinglet-local-ca",
    lifetimeMs: LIFETIME_MS,
  });
  await writePair(pair("ca"), ca, signal);
  const issue = async (
    name: string,
    subject: ClientIdentity,
    usage: "serverAuth" | "clientAuth",
    names: { dnsNames?: string[]; ipAddresses?: string[] } = {},
  ) => {
    const issued = await issueCertificate(ca, {
      subject,
      usage,
      lifetimeMs: LIFETIME_MS,
      ...names,
    });
    const out = pair(name);
    await writePair(out, issued, signal);
    return out;
  };
  const names = Object.keys(clients);
  const [serving, issued, serviceAccount] = await Promise.all([
    issue("apiserver", { commonName: "kube-apiserver" }, "serverAuth", {
      dnsNames: SERVING_NAMES,
      ipAddresses: SERVING_IPS,
    }),
    Promise.all(names.map((name) => issue(name, clients[name]!, "clientAuth"))),
    serviceAccountKeys(dir, signal),
  ]);
  return {
    ca: pair("ca"),
    serving,
    clients: Object.fromEntries(names.map((name, i) => [name, issued[i]!])),
    serviceAccount,
  };
}

/** The RSA key pair the API server verifies service-account tokens with, and signs them with. */
async function serviceAccountKeys(
  dir: string,
  signal: AbortSignal | undefined,
): Promise<Pki["serviceAccount"]> {
  const keys = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );
  const paths = {
    privateKey: join(dir, "service-account.key"),
    publicKey: join(dir, "service-account.pub"),
  };
  signal?.throwIfAborted();
  const [privateDer, publicDer] = await Promise.all([
    crypto.subtle.exportKey("pkcs8", keys.privateKey),
    crypto.subtle.exportKey("spki", keys.publicKey),
  ]);
  await Promise.all([
    Deno.writeTextFile(paths.privateKey, pemEncode("PRIVATE KEY", privateDer), { mode: 0o600 }),
    Deno.writeTextFile(paths.publicKey, pemEncode("PUBLIC KEY", publicDer)),
  ]);
  return paths;
}

async function writePair(
  paths: KeyPair,
  pair: CertificateKeyPair,
  signal: AbortSignal | undefined,
): Promise<void> {
  signal?.throwIfAborted();
  await Promise.all([
    Deno.writeTextFile(paths.cert, pair.cert),
    Deno.writeTextFile(paths.key, pair.key, { mode: 0o600 }),
  ]);
}
