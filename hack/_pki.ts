/**
 * Fresh X.509 v3 certificates for one local control plane, made with
 * `openssl`: a CA, the API server's serving certificate, one client
 * certificate per identity, and the service-account signing key pair.
 *
 * Every certificate carries v3 extensions because Deno's TLS stack (rustls)
 * rejects v1 certificates. Keys are P-256 (fast to generate, accepted by Go
 * and rustls) except the service-account key, which is RSA as the API server
 * and controller manager expect.
 *
 * @module
 */
import { join } from "node:path";

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

const OPENSSL_CONFIG = `[req]
distinguished_name = dn
prompt = no
[dn]
CN = kinglet
[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign, digitalSignature
subjectKeyIdentifier = hash
[serving_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, IP:10.96.0.1, DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
[client_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
`;

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-noenc"];

/**
 * Writes a CA, a serving certificate for `127.0.0.1`/`localhost`/`kubernetes…`,
 * one client certificate per entry of `clients` and an RSA service-account key
 * pair into `dir`, which must exist.
 *
 * @throws {Error} when `openssl` is missing or fails, with its output.
 */
export async function generatePki(
  dir: string,
  clients: Record<string, ClientIdentity>,
  signal?: AbortSignal,
): Promise<Pki> {
  const config = join(dir, "openssl.cnf");
  await Deno.writeTextFile(config, OPENSSL_CONFIG);
  const pair = (name: string): KeyPair => ({
    cert: join(dir, `${name}.crt`),
    key: join(dir, `${name}.key`),
  });
  const ca = pair("ca");
  const certify = (name: string, subject: string, extensions: string, issuer?: KeyPair) => {
    const out = pair(name);
    const signing = issuer ? ["-CA", issuer.cert, "-CAkey", issuer.key] : [];
    return openssl([
      "req",
      "-x509",
      "-new",
      ...EC_KEY,
      "-keyout",
      out.key,
      "-out",
      out.cert,
      "-days",
      "3650",
      "-subj",
      subject,
      "-config",
      config,
      "-extensions",
      extensions,
      ...signing,
    ], signal).then(() => out);
  };

  await certify("ca", "/CN=kinglet-local-ca", "ca_ext");
  const serviceAccount = {
    privateKey: join(dir, "service-account.key"),
    publicKey: join(dir, "service-account.pub"),
  };
  const names = Object.keys(clients);
  const [serving, issued] = await Promise.all([
    certify("apiserver", "/CN=kube-apiserver", "serving_ext", ca),
    Promise.all(names.map((name) => certify(name, subjectOf(clients[name]!), "client_ext", ca))),
    openssl([
      "genpkey",
      "-algorithm",
      "RSA",
      "-pkeyopt",
      "rsa_keygen_bits:2048",
      "-out",
      serviceAccount.privateKey,
    ], signal)
      .then(() =>
        openssl([
          "pkey",
          "-in",
          serviceAccount.privateKey,
          "-pubout",
          "-out",
          serviceAccount.publicKey,
        ], signal)
      ),
  ]);
  return {
    ca,
    serving,
    clients: Object.fromEntries(names.map((name, i) => [name, issued[i]!])),
    serviceAccount,
  };
}

/** `/O=a/O=b/CN=c`, escaping the characters openssl's `-subj` treats specially. */
function subjectOf(identity: ClientIdentity): string {
  const escape = (value: string) => value.replace(/[\\/=+,]/g, (c) => `\\${c}`);
  const orgs = (identity.organizations ?? []).map((o) => `/O=${escape(o)}`).join("");
  return `${orgs}/CN=${escape(identity.commonName)}`;
}

async function openssl(args: string[], signal?: AbortSignal): Promise<void> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("openssl", { args, stdin: "null", signal }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new Error("Cannot generate certificates: 'openssl' is not on PATH; install OpenSSL 3");
    }
    throw error;
  }
  if (!output.success) {
    const text = new TextDecoder().decode(output.stderr).trim();
    throw new Error(`openssl ${args[0]} failed (exit ${output.code}): ${text}`);
  }
}
