/**
 * The start-up check of the CRDs: are the ones this kinglet serves installed,
 * and with the schema it was built with? A CRD that is missing, or older than
 * the binary, otherwise shows up later and far from its cause: watches that
 * fail with 404, or fields the API server prunes from every write.
 *
 * The expected schema hashes come from `crds/schema_hashes.ts`, generated
 * with the CRDs, so that this check does not load the schemas themselves.
 *
 * @example
 * ```ts
 * import { checkCrds, crdInstallHint } from "./crd_check.ts";
 * import type { KubeClient } from "../kube/client.ts";
 * declare const client: KubeClient;
 * const install = crdInstallHint({ inCluster: true });
 * const problem = await checkCrds(client, ["webapps.kinglet.dev"], install);
 * // e.g. "CRD webapps.kinglet.dev is not installed; run: kinglet install --kubeconfig <…>"
 * ```
 *
 * @module
 */
import { CRD_SCHEMA_HASHES } from "../../crds/schema_hashes.ts";
import { SCHEMA_HASH_ANNOTATION } from "../crd/types.ts";
import type { KubeClient } from "../kube/client.ts";
import { describeError, isForbidden, isNotFound } from "../kube/errors.ts";
import { CUSTOM_RESOURCE_DEFINITIONS } from "../kube/resources.ts";
import type { KubeObject } from "../kube/types.ts";
import { logger } from "../log.ts";

/**
 * One line saying which of the CRDs `names` are missing or carry another
 * schema than this binary's, and the command that fixes it (`install`);
 * undefined when they all match. A CRD the caller may not read (RBAC without
 * the `get` on CRDs) is not checked.
 *
 * @throws whatever the client throws other than 403 and 404 (an unreachable server).
 */
export async function checkCrds(
  client: Pick<KubeClient, "get">,
  names: readonly string[],
  install: string,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const missing: string[] = [];
  const stale: string[] = [];
  for (const name of names) {
    let crd: KubeObject;
    try {
      crd = await client.get<KubeObject>(CUSTOM_RESOURCE_DEFINITIONS, name, {
        ...(signal && { signal }),
      });
    } catch (error) {
      if (isNotFound(error)) {
        missing.push(name);
        continue;
      }
      if (isForbidden(error)) {
        logger("main").debug("Not checking the schema of CRD {name}: {error}", {
          name,
          error: describeError(error),
        });
        continue;
      }
      throw error;
    }
    const installed = crd.metadata?.annotations?.[SCHEMA_HASH_ANNOTATION];
    const expected = CRD_SCHEMA_HASHES[name];
    if (installed === expected) continue;
    stale.push(
      installed === undefined
        ? `${name} (installed without a schema hash, by an older kinglet)`
        : `${name} (schema ${installed}, this kinglet's is ${expected ?? "unknown"})`,
    );
  }
  const problems = [
    ...(missing.length ? [`${plural(missing, "is", "are")} not installed`] : []),
    ...(stale.length ? [`${plural(stale, "differs", "differ")} from this kinglet's`] : []),
  ];
  return problems.length ? `${problems.join("; ")}; run: ${install}` : undefined;
}

/**
 * The command that installs the CRDs, for the hint of {@link checkCrds}.
 * Never the kubeconfig kinglet runs with: kinglet's own credentials (its
 * ServiceAccount in a pod, or on a node what `kinglet install
 * --node-kubeconfig` wrote) may read CRDs but not install them, so that
 * command would fail with 403. On a node set up from deploy/systemd/,
 * `kinglet-credentials.service` runs `kinglet install` with the k3s admin
 * kubeconfig; starting it (as root) installs the CRDs this binary serves.
 *
 * @example
 * ```ts
 * import { crdInstallHint } from "./crd_check.ts";
 * crdInstallHint({ inCluster: false }).includes("systemctl start kinglet-credentials.service"); // true
 * ```
 */
export function crdInstallHint(where: { inCluster: boolean }): string {
  const admin = "kinglet install --kubeconfig <a cluster-admin kubeconfig> " +
    "(not kinglet's own credentials: they may read CRDs, not install them)";
  if (where.inCluster) return admin;
  return `${admin}; on a node set up from deploy/systemd/, as root: ` +
    "systemctl start kinglet-credentials.service, which installs them with k3s.yaml";
}

function plural(items: string[], one: string, many: string): string {
  return `CRD${items.length > 1 ? "s" : ""} ${items.join(", ")} ${items.length > 1 ? many : one}`;
}
