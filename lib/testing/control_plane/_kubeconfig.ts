/**
 * Kubeconfig files for the local control plane: one per identity, each with
 * its certificates embedded, so a file works on its own when copied.
 *
 * The file is block-style YAML with every scalar double-quoted, the shape
 * kubectl writes and kinglet's client reads without a YAML library.
 *
 * @module
 */

/** Where to connect and as whom. */
export interface KubeconfigSpec {
  /** API server URL, e.g. `https://127.0.0.1:6443`. */
  server: string;
  /** User name inside the file, e.g. `admin`. */
  user: string;
  /** PEM file paths. */
  ca: string;
  cert: string;
  key: string;
}

const CLUSTER = "kinglet-local";

/** Writes a single-context kubeconfig with embedded certificate data to `path`, mode 0600. */
export async function writeKubeconfig(path: string, spec: KubeconfigSpec): Promise<void> {
  const base64 = async (file: string) => btoa(await Deno.readTextFile(file));
  const [ca, cert, key] = await Promise.all([base64(spec.ca), base64(spec.cert), base64(spec.key)]);
  const q = (value: string) => JSON.stringify(value);
  const context = `${spec.user}@${CLUSTER}`;
  const text = [
    `apiVersion: "v1"`,
    `kind: "Config"`,
    `clusters:`,
    `- name: ${q(CLUSTER)}`,
    `  cluster:`,
    `    server: ${q(spec.server)}`,
    `    certificate-authority-data: ${q(ca)}`,
    `users:`,
    `- name: ${q(spec.user)}`,
    `  user:`,
    `    client-certificate-data: ${q(cert)}`,
    `    client-key-data: ${q(key)}`,
    `contexts:`,
    `- name: ${q(context)}`,
    `  context:`,
    `    cluster: ${q(CLUSTER)}`,
    `    user: ${q(spec.user)}`,
    `current-context: ${q(context)}`,
    ``,
  ].join("\n");
  await Deno.writeTextFile(path, text, { mode: 0o600 });
}
