/**
 * The local control plane: a real Kubernetes API server as child processes
 * on loopback, for the test kit's `testCluster`, the repository's
 * scripts (`hack/with_cluster.ts`, `deno task dev`), its tests and the
 * benchmark. This folder is its one home; everything outside it comes in
 * through this module.
 *
 * {@link startCluster} runs etcd (or kine on SQLite, as a single-server k3s
 * does), kube-apiserver, kube-controller-manager, kube-scheduler and kwok,
 * with fresh certificates, and creates fake kwok nodes on which pods become
 * Running and Ready without a container runtime; with `apiServerOnly`, only
 * the datastore and kube-apiserver, as envtest starts them. Everything lives
 * in one folder (data, certificates, kubeconfigs, `logs/<component>.log`);
 * processes are stopped by process id only.
 *
 * The binaries are kinglet's own, built from the Go module proxy at the
 * versions pinned in `versions.env` by `build.sh`
 * (`deno task control-plane`) once into
 * `~/.cache/kinglet/control-plane/<versions>/bin`, or the prebuilt ones of a
 * `binDir` (envtest's `KUBEBUILDER_ASSETS`).
 * `KINGLET_K8S_VERSION` (`newest`, `oldest` or `vX.Y.Z`) picks the
 * Kubernetes version and `KINGLET_DATASTORE` the datastore.
 *
 * The package does not export this module: authors reach it through
 * `testCluster`, which starts only the datastore and kube-apiserver, from the
 * prebuilt binaries of `KUBEBUILDER_ASSETS`; building them needs this
 * checkout's `build.sh` and Go.
 *
 * @example
 * ```ts ignore
 * import { startCluster } from "./mod.ts";
 * await using cluster = await startCluster({ log: (m) => console.error(m) });
 * console.log(cluster.kubeconfig, cluster.server);
 * ```
 *
 * @module
 */
export {
  type Cluster,
  type ClusterTimings,
  startCluster,
  type StartClusterOptions,
} from "./_cluster.ts";
export { compactEtcd, type Datastore } from "./_datastore.ts";
export { type ClientIdentity, generatePki, type Pki } from "./_pki.ts";
export { freePorts, tailFile } from "./_process.ts";
