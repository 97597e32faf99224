/**
 * Command lines of etcd and kube-apiserver, the two components every local
 * control plane runs. Pure functions of where the files are and which ports
 * were picked, so their whole configuration reads in one place.
 *
 * @module
 */
import { join } from "node:path";
import type { Pki } from "./_pki.ts";

/** Files and ports of one local control plane. */
export interface Layout {
  /** The folder the control plane owns. */
  dir: string;
  pki: Pki;
  ports: { etcdClient: number; etcdPeer: number; apiserver: number };
}

/** Service ClusterIPs come from here. */
export const SERVICE_CIDR = "10.96.0.0/16";

/** `http://127.0.0.1:<port>` of etcd's client listener. */
export function etcdEndpoint(layout: Pick<Layout, "ports">): string {
  return `http://127.0.0.1:${layout.ports.etcdClient}`;
}

/** Single-member etcd on loopback, plain HTTP, without fsync (throwaway data). */
export function etcdArgs(layout: Pick<Layout, "dir" | "ports">): string[] {
  const peer = `http://127.0.0.1:${layout.ports.etcdPeer}`;
  return [
    "--name=kinglet",
    `--data-dir=${join(layout.dir, "etcd")}`,
    `--listen-client-urls=${etcdEndpoint(layout)}`,
    `--advertise-client-urls=${etcdEndpoint(layout)}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=kinglet=${peer}`,
    "--initial-cluster-state=new",
    "--unsafe-no-fsync=true",
    "--log-level=warn",
  ];
}

/** Whether etcd at `endpoint` answers its health check with a healthy status. */
export async function etcdHealthy(endpoint: string, signal?: AbortSignal): Promise<boolean> {
  try {
    const response = await fetch(`${endpoint}/health`, { signal });
    const body = await response.json() as { health?: string };
    return response.ok && body.health === "true";
  } catch (error) {
    if (signal?.aborted) throw error;
    return false;
  }
}

/**
 * kube-apiserver on loopback with client-certificate authentication, Node and
 * RBAC authorization and the default admission plugins. The configmap watch
 * cache is off so that watches of configmaps read etcd directly and a watch
 * from a compacted resourceVersion gets 410 Gone, which tests rely on.
 */
export function apiserverArgs(layout: Layout): string[] {
  const { pki } = layout;
  return [
    "--bind-address=127.0.0.1",
    "--advertise-address=127.0.0.1",
    `--secure-port=${layout.ports.apiserver}`,
    `--etcd-servers=${etcdEndpoint(layout)}`,
    `--tls-cert-file=${pki.serving.cert}`,
    `--tls-private-key-file=${pki.serving.key}`,
    `--client-ca-file=${pki.ca.cert}`,
    "--authorization-mode=Node,RBAC",
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    `--service-account-key-file=${pki.serviceAccount.publicKey}`,
    `--service-account-signing-key-file=${pki.serviceAccount.privateKey}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    "--enable-priority-and-fairness=true",
    "--watch-cache-sizes=configmaps#0",
    "--allow-privileged=true",
    // The reconciler would publish 127.0.0.1 as the endpoint of the
    // `kubernetes` Service, which validation rejects every 10 s.
    "--endpoint-reconciler-type=none",
    "--profiling=false",
  ];
}
