/**
 * Kubeconfig files for the local control plane: one per component, each with
 * its client certificate embedded, so a file works on its own when copied.
 *
 * @module
 */
import { stringify } from "yaml";

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

/** Writes a single-context kubeconfig with embedded certificate data to `path`. */
export async function writeKubeconfig(path: string, spec: KubeconfigSpec): Promise<void> {
  const [ca, cert, key] = await Promise.all(
    [spec.ca, spec.cert, spec.key].map(async (file) => btoa(await Deno.readTextFile(file))),
  );
  const context = `${spec.user}@${CLUSTER}`;
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{
      name: CLUSTER,
      cluster: { server: spec.server, "certificate-authority-data": ca },
    }],
    users: [{ name: spec.user, user: { "client-certificate-data": cert, "client-key-data": key } }],
    contexts: [{ name: context, context: { cluster: CLUSTER, user: spec.user } }],
    "current-context": context,
  };
  await Deno.writeTextFile(path, stringify(config), { mode: 0o600 });
}
