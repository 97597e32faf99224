/**
 * An operator's deploy files, generated the way kinglet's own are: from a
 * description of the operator (its name, namespace, image, ServiceAccount,
 * controller specs, leader Lease and memory limit), {@link deployFiles}
 * writes its ServiceAccount and least-privilege RBAC (derived from the
 * specs by `controllerRules` and `leaderElectionRules`, a reason above every
 * rule), the ValidatingAdmissionPolicy that takes back what RBAC cannot
 * narrow (`ownershipPolicy`: its writes go only to objects it owns), a
 * hardened Deployment of its FROM scratch image with the memory
 * limit handed over by the Downward API, the Dockerfile with its
 * dockerignore and file list, and for node mode a systemd unit, its
 * environment file and the credentials service and timer. An operator
 * that declares `webhooks` (admission webhooks, conversions) gets their
 * configurations (through a Service in the cluster, at the node's loopback
 * in node mode), the container's port, and the RBAC to inject its CA bundle
 * and keep its certificate's Secret.
 *
 * A description that cannot be derived is refused before anything is
 * written, with a `TypeError` naming the spec and the field. A project's
 * `scripts/deploy.ts` hands its description to {@link runDeploy}, which
 * writes the files, checks them (`--check`) or assembles the image's root
 * file system (`--rootfs`). In node mode the operator's own `install`
 * command, {@link runNodeInstall}, applies that RBAC and policy with the k3s admin
 * kubeconfig and writes a kubeconfig of the operator's ServiceAccount, which
 * its credentials service renews every 8 hours.
 *
 * @example
 * ```ts
 * import { deployFiles } from "@kinglet/kinglet/deploy";
 * import { CONFIG_MAPS, DEPLOYMENTS, type KubeObject } from "@kinglet/kinglet/kube";
 * import type { ControllerSpec } from "@kinglet/kinglet/runtime";
 * const mirrors: ControllerSpec<KubeObject> = {
 *   name: "mirror",
 *   resource: CONFIG_MAPS,
 *   owns: [{ resource: DEPLOYMENTS }],
 *   reconcile: () => Promise.resolve({}),
 * };
 * const files = deployFiles({
 *   name: "mirror-operator",
 *   envPrefix: "MIRROR_",
 *   image: "ghcr.io/example/mirror-operator:0.1.0",
 *   controllers: [mirrors],
 * });
 * [...files.keys()].filter((path) => path.startsWith("deploy/systemd/"));
 * // ["deploy/systemd/mirror-operator.service", "deploy/systemd/mirror-operator.env",
 * //  "deploy/systemd/mirror-operator-credentials.service", "deploy/systemd/mirror-operator-credentials.timer"]
 * ```
 *
 * @module
 */
export {
  type DeclaredRule,
  DENO_VERSION,
  type DeployedController,
  type DeployedResource,
  type DeployLayout,
  type DeployNotes,
  describeOperator,
  type EnvGroup,
  type EnvVar,
  type Operator,
  type OperatorDescription,
} from "./operator.ts";
export {
  type DeclaredAdmission,
  type DeployedWebhooks,
  type OperatorWebhooks,
} from "./webhook_declarations.ts";
export { compareDeployFiles, deployFiles, runDeploy, writeDeployFiles } from "./files.ts";
export { runNodeInstall } from "./node_credentials.ts";
export { type RbacManifest, rbacObjects } from "./rbac_files.ts";
export { SCRATCH_ARCHES, SCRATCH_FILES, type ScratchArch } from "./image_files.ts";
export { type AssembleOptions, assembleRootfs, scratchFiles } from "./rootfs.ts";
