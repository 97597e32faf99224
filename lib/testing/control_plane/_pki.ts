/**
 * Fresh X.509 v3 certificates for one local control plane, made with
 * WebCrypto (no `openssl` needed): a CA, the API server's serving
 * certificate, one client certificate per identity, and the service-account
 * signing key pair, written as PEM files.
 *
 * Every certificate carries v3 extensions because Deno's TLS stack (rustls)
 * rejects v1 certificates. Keys are P-256 (fast to generate, accepted by Go
 * and rustls) except the service-account key, which is RSA as the API server
 * and controller manager expect.
 *
 * The DER is written by hand (`_der.ts`) because the maintained libraries cost
 * more than the 380 lines they would save: importing `@peculiar/x509` (21
 * packages, and a global `Reflect` polyfill), `pkijs` (5 packages) or
 * `node-forge` (no ECDSA) adds 11 to 15 MiB of RSS to a 34 MiB process and
 * 0.3 to 1 s of import time to every test that loads the test kit, where
 * these two files add 1.6 MiB.
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
  bitString,
  booleanTrue,
  explicit,
  implicit,
  integer,
  octetString,
  oid,
  sequence,
  set,
  time,
  utf8String,
} from "./_der.ts";

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
const SERVING_IPS = [[127, 0, 0, 1], [10, 96, 0, 1]];
const SERVING_NAMES = [
  "localhost",
  "kubernetes",
  "kubernetes.default",
  "kubernetes.default.svc",
  "kubernetes.default.svc.cluster.local",
];
const VALID_DAYS = 3650;
/** Certificates are valid from an hour ago, so a clock a little behind still accepts them. */
const BACKDATE_MS = 3_600_000;

const ECDSA_WITH_SHA256 = sequence(oid("1.2.840.10045.4.3.2"));
const EC_KEY: EcKeyGenParams = { name: "ECDSA", namedCurve: "P-256" };
const KEY_USAGE = { digitalSignature: 0x80, keyCertSign: 0x04, cRLSign: 0x02 };
const SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

/** A certificate that signs others: its subject, key identifier and signing key. */
interface Issuer {
  name: Uint8Array;
  keyId: Uint8Array;
  privateKey: CryptoKey;
}

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
  const caKeys = await generateEcKeys();
  const caName = distinguishedName({ commonName: "kinglet-local-ca" });
  const caKeyId = await keyIdentifier(caKeys.publicKey);
  const ca: Issuer = { name: caName, keyId: caKeyId, privateKey: caKeys.privateKey };
  const caCert = await certificate(caName, caKeys.publicKey, ca, [
    extension("2.5.29.19", true, sequence(booleanTrue())),
    keyUsage(KEY_USAGE.digitalSignature | KEY_USAGE.keyCertSign | KEY_USAGE.cRLSign),
    extension("2.5.29.14", false, octetString(caKeyId)),
  ]);
  await writePair(pair("ca"), caCert, caKeys.privateKey, signal);

  const issue = async (name: string, identity: ClientIdentity, usage: string, alt?: Uint8Array) => {
    const keys = await generateEcKeys();
    const keyId = await keyIdentifier(keys.publicKey);
    const cert = await certificate(distinguishedName(identity), keys.publicKey, ca, [
      extension("2.5.29.19", true, sequence()),
      keyUsage(KEY_USAGE.digitalSignature),
      extension("2.5.29.37", false, sequence(oid(usage))),
      ...(alt ? [extension("2.5.29.17", false, alt)] : []),
      extension("2.5.29.14", false, octetString(keyId)),
      extension("2.5.29.35", false, sequence(implicit(0, ca.keyId))),
    ]);
    const out = pair(name);
    await writePair(out, cert, keys.privateKey, signal);
    return out;
  };
  const names = Object.keys(clients);
  const [serving, issued, serviceAccount] = await Promise.all([
    issue("apiserver", { commonName: "kube-apiserver" }, SERVER_AUTH, servingNames()),
    Promise.all(names.map((name) => issue(name, clients[name]!, CLIENT_AUTH))),
    serviceAccountKeys(dir, signal),
  ]);
  return {
    ca: pair("ca"),
    serving,
    clients: Object.fromEntries(names.map((name, i) => [name, issued[i]!])),
    serviceAccount,
  };
}

async function generateEcKeys(): Promise<CryptoKeyPair> {
  return await crypto.subtle.generateKey(EC_KEY, true, ["sign", "verify"]);
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
    Deno.writeTextFile(paths.privateKey, pem("PRIVATE KEY", privateDer), { mode: 0o600 }),
    Deno.writeTextFile(paths.publicKey, pem("PUBLIC KEY", publicDer)),
  ]);
  return paths;
}

/** A signed certificate (DER) for `publicKey`, valid from an hour ago for ten years. */
async function certificate(
  subject: Uint8Array,
  publicKey: CryptoKey,
  issuer: Issuer,
  extensions: Uint8Array[],
): Promise<Uint8Array> {
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  const now = Date.now();
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", publicKey));
  const tbs = sequence(
    explicit(0, integer(new Uint8Array([2]))),
    integer(serial),
    ECDSA_WITH_SHA256,
    issuer.name,
    sequence(time(new Date(now - BACKDATE_MS)), time(new Date(now + VALID_DAYS * 86_400_000))),
    subject,
    spki,
    explicit(3, sequence(...extensions)),
  );
  const signature = new Uint8Array(
    await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, issuer.privateKey, tbs),
  );
  // WebCrypto signs as r‖s; X.509 wants SEQUENCE { r INTEGER, s INTEGER }.
  const half = signature.length / 2;
  const ecdsa = sequence(integer(signature.subarray(0, half)), integer(signature.subarray(half)));
  return sequence(tbs, ECDSA_WITH_SHA256, bitString(ecdsa));
}

/** `O=…` for each organization, then `CN=…`: the groups and user name the API server reads. */
function distinguishedName(identity: ClientIdentity): Uint8Array {
  const attribute = (type: string, value: string) => set(sequence(oid(type), utf8String(value)));
  return sequence(
    ...(identity.organizations ?? []).map((o) => attribute("2.5.4.10", o)),
    attribute("2.5.4.3", identity.commonName),
  );
}

function extension(id: string, critical: boolean, value: Uint8Array): Uint8Array {
  return sequence(oid(id), ...(critical ? [booleanTrue()] : []), octetString(value));
}

/** A critical key usage extension; DER drops the trailing zero bits of the flags. */
function keyUsage(flags: number): Uint8Array {
  let unused = 0;
  while (unused < 7 && ((flags >> unused) & 1) === 0) unused++;
  return extension("2.5.29.15", true, bitString(new Uint8Array([flags]), unused));
}

function servingNames(): Uint8Array {
  const ascii = new TextEncoder();
  return sequence(
    ...SERVING_IPS.map((ip) => implicit(7, new Uint8Array(ip))),
    ...SERVING_NAMES.map((name) => implicit(2, ascii.encode(name))),
  );
}

/** SHA-1 of the public key's bits, as RFC 5280's first method derives a key identifier. */
async function keyIdentifier(publicKey: CryptoKey): Promise<Uint8Array> {
  const raw = await crypto.subtle.exportKey("raw", publicKey);
  return new Uint8Array(await crypto.subtle.digest("SHA-1", raw));
}

async function writePair(
  paths: KeyPair,
  cert: Uint8Array,
  privateKey: CryptoKey,
  signal: AbortSignal | undefined,
): Promise<void> {
  signal?.throwIfAborted();
  const key = await crypto.subtle.exportKey("pkcs8", privateKey);
  await Promise.all([
    Deno.writeTextFile(paths.cert, pem("CERTIFICATE", cert)),
    Deno.writeTextFile(paths.key, pem("PRIVATE KEY", key), { mode: 0o600 }),
  ]);
}

function pem(label: string, der: ArrayBuffer | Uint8Array): string {
  const bytes = der instanceof Uint8Array ? der : new Uint8Array(der);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  const lines = btoa(binary).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}
