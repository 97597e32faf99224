/**
 * Test cluster set-up shared by the e2e suites: the CRDs installed once per
 * test process, and a kubeconfig for the operator's ServiceAccount bound to
 * the deploy/ RBAC (so a missing permission fails the suite).
 *
 * @module
 */
import { install } from "../../lib/cli/install.ts";
import type { KubeClient } from "../../lib/kube/client.ts";
import { testKubeconfig } from "./cluster.ts";
import { serviceAccountKubeconfig } from "./service_account.ts";

let installed: Promise<string[]> | undefined;
let kubeconfig: Promise<string> | undefined;

/** Installs the CRDs (and the kinglet-system namespace) once per process. */
export function installCrdsOnce(client: KubeClient): Promise<string[]> {
  installed ??= install(client, { namespace: "kinglet-system" });
  return installed;
}

/** A kubeconfig of the `kinglet` ServiceAccount in `kinglet-system`, with the deploy/ RBAC. */
export function operatorKubeconfig(): Promise<string> {
  kubeconfig ??= serviceAccountKubeconfig(testKubeconfig(), "kinglet-system", "kinglet");
  return kubeconfig;
}
