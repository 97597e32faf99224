/**
 * Command lines of the components the local control plane runs beside etcd
 * and kube-apiserver (whose command lines are in `lib/testing/_components.ts`):
 * the controller manager, the scheduler and kwok. Pure functions of where the
 * files are, so the whole configuration of the local cluster reads in two
 * places.
 *
 * @module
 */
import { SERVICE_CIDR } from "../lib/testing/_components.ts";
import type { Pki } from "../lib/testing/_pki.ts";
import { KWOK_NODE_ANNOTATION } from "./_nodes.ts";

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
