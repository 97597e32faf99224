/**
 * Command lines of the local control plane's components: etcd and
 * kube-apiserver, which every local control plane runs, and the controller
 * manager, the scheduler and kwok, which the full one adds. Pure functions of
 * where the files are and which ports were picked, so the whole configuration
 * of the local cluster reads in one place (kine's, the other datastore, is in
 * `_datastore.ts`).
 *
 * @module
 */
import { join } from "node:path";
import { KWOK_NODE_ANNOTATION } from "./_cluster_objects.ts";
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
    // A webhook behind a Service is called at its endpoints' addresses, not its DNS name, which
    // nothing resolves here: a test can stand in for a pod with an Endpoints object.
    "--enable-aggregator-routing=true",
    "--profiling=false",
  ];
}

/** Files the API clients of the local control plane read. */
export interface ClientLayout {
  pki: Pki;
  kubeconfigs: { controllerManager: string; scheduler: string; kwok: string };
  /** The kwok stages file (node and pod lifecycles). */
  kwokStages: string;
}

/** Pod IPs (kwok's) come from a range disjoint from {@link SERVICE_CIDR}. */
const POD_CIDR = "10.244.0.0/16";

/**
 * Client rate limits of the controller manager and scheduler. Their defaults
 * (20 qps) make the control plane, not the operator under test, the slowest
 * part of a run with thousands of objects.
 */
const FAST_CLIENT = ["--kube-api-qps=200", "--kube-api-burst=400"];

/**
 * kube-controller-manager without HTTPS serving (nothing scrapes it) and
 * without the controllers that need a cloud provider or node CIDRs.
 */
export function controllerManagerArgs(layout: ClientLayout): string[] {
  const { pki } = layout;
  return [
    `--kubeconfig=${layout.kubeconfigs.controllerManager}`,
    "--secure-port=0",
    "--leader-elect=false",
    "--use-service-account-credentials=true",
    `--service-account-private-key-file=${pki.serviceAccount.privateKey}`,
    `--root-ca-file=${pki.ca.cert}`,
    `--cluster-signing-cert-file=${pki.ca.cert}`,
    `--cluster-signing-key-file=${pki.ca.key}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    "--controllers=*,-node-ipam-controller,-node-route-controller,-cloud-node-lifecycle-controller,-service-lb-controller",
    ...FAST_CLIENT,
    "--profiling=false",
  ];
}

/** kube-scheduler with its default profile, without HTTPS serving. */
export function schedulerArgs(layout: ClientLayout): string[] {
  return [
    `--kubeconfig=${layout.kubeconfigs.scheduler}`,
    "--secure-port=0",
    "--leader-elect=false",
    ...FAST_CLIENT,
    "--profiling=false",
  ];
}

/**
 * kwok managing only the nodes annotated `kwok.x-k8s.io/node=fake`, with
 * Lease heartbeats (as kubelets do) so the node lifecycle controller keeps
 * them Ready.
 */
export function kwokArgs(layout: ClientLayout): string[] {
  return [
    `--kubeconfig=${layout.kubeconfigs.kwok}`,
    `--config=${layout.kwokStages}`,
    "--manage-all-nodes=false",
    `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
    "--node-lease-duration-seconds=40",
    `--cidr=${POD_CIDR}`,
  ];
}
