/**
 * `kinglet uninstall`: deletes what `kinglet install` created, the CRDs and
 * the leader-election namespace, and refuses while custom resources exist.
 *
 * Deleting a CRD deletes every custom resource of its kind, and with them
 * (through owner references) the Deployments, StatefulSets, Services and
 * Secrets kinglet made for them: the refusal is what stands between a
 * mistyped command and a cluster's workloads. `force` deletes them anyway.
 *
 * The namespace is deleted only if `install` created it (it did not exist
 * before) and no pod runs in it (e.g. kinglet itself, from `deploy/`).
 *
 * @example
 * ```ts
 * import { uninstall } from "./uninstall.ts";
 * import type { KubeClient } from "../kube/client.ts";
 * declare const client: KubeClient;
 * const removed = await uninstall(client, { namespace: "kinglet-system" });
 * ```
 *
 * @module
 */
import { CRD_SCHEMA_HASHES } from "../../crds/schema_hashes.ts";
import type { KubeClient } from "../kube/client.ts";
import { isNotFound } from "../kube/errors.ts";
import { CUSTOM_RESOURCE_DEFINITIONS, NAMESPACES, PODS } from "../kube/resources.ts";
import type { KubeObject, Resource } from "../kube/types.ts";
import { CREATED_BY_ANNOTATION } from "../operators/labels.ts";
import { uninstallCrds } from "../runtime/crds/mod.ts";

/** Options of {@link uninstall}. */
export interface UninstallOptions {
  /** The namespace `install` created for the leader Lease. Defaults to none. */
  namespace?: string;
  /** Delete the CRDs even while custom resources exist, and those with them. Defaults to false. */
  force?: boolean;
  /** How long to wait for the CRDs to be gone. Defaults to 60 000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Why {@link uninstall} refused: custom resources still exist. */
export class ResourcesExistError extends Error {
  override readonly name = "ResourcesExistError";
}

type Crd = KubeObject & {
  spec: {
    group: string;
    names: { kind: string; plural: string; shortNames?: string[] };
    versions: { name: string; storage?: boolean }[];
  };
};

/**
 * Deletes kinglet's CRDs (waiting until they are gone) and, when `install`
 * alone made it, the namespace; resolves to one line per thing deleted or kept.
 *
 * @throws {ResourcesExistError} naming the resources left, unless `force`.
 * @throws {CrdWaitError} when a CRD is still there after `timeoutMs`, saying why.
 */
export async function uninstall(
  client: Pick<KubeClient, "get" | "list" | "delete">,
  options: UninstallOptions = {},
): Promise<string[]> {
  const signal = options.signal;
  const at = signal ? { signal } : {};
  const crds: Crd[] = [];
  for (const name of Object.keys(CRD_SCHEMA_HASHES)) {
    try {
      crds.push(await client.get<Crd>(CUSTOM_RESOURCE_DEFINITIONS, name, at));
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  const left: string[] = [];
  let total = 0;
  for (const crd of crds) {
    const list = await client.list(served(crd), { limit: 1, ...at });
    const count = list.items.length + (list.metadata.remainingItemCount ?? 0);
    total += count;
    if (count > 0) left.push(`${count} ${crd.spec.names.kind}${count > 1 ? "s" : ""}`);
  }
  if (left.length && !options.force) {
    const kinds = crds.map((crd) => crd.spec.names.shortNames?.[0] ?? crd.spec.names.plural);
    throw new ResourcesExistError(
      `refusing to uninstall: ${left.join(", ")} still ${total === 1 ? "exists" : "exist"}, ` +
        "and deleting the CRDs deletes " +
        `them and their workloads; delete them first (kubectl delete ${kinds.join(",")} ` +
        "--all -A, with kinglet running to clean up), or pass --force",
    );
  }
  const deleted = await uninstallCrds(client, crds, {
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    ...at,
  });
  const done = deleted.map((name) => `deleted CRD ${name}`);
  if (options.namespace) done.push(await deleteNamespace(client, options.namespace, at));
  return done;
}

/** The storage version of a CRD's kind, to list its custom resources. */
function served(crd: Crd): Resource {
  const version = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0];
  return {
    group: crd.spec.group,
    version: version?.name ?? "v1alpha1",
    plural: crd.spec.names.plural,
    kind: crd.spec.names.kind,
    namespaced: true,
  };
}

/** Deletes `name` if `install` created it and nothing runs in it; says what it did. */
async function deleteNamespace(
  client: Pick<KubeClient, "get" | "list" | "delete">,
  name: string,
  at: { signal?: AbortSignal },
): Promise<string> {
  let namespace: KubeObject;
  try {
    namespace = await client.get(NAMESPACES, name, at);
  } catch (error) {
    if (isNotFound(error)) return `namespace ${name} is already gone`;
    throw error;
  }
  if (namespace.metadata?.annotations?.[CREATED_BY_ANNOTATION] !== "kinglet-install") {
    return `kept namespace ${name}: it existed before kinglet install`;
  }
  const pods = await client.list(PODS, { namespace: name, limit: 1, ...at });
  if (pods.items.length) {
    return `kept namespace ${name}: pods run in it (${pods.items[0]!.metadata?.name}, …)`;
  }
  await client.delete(NAMESPACES, name, { ...at, ignoreNotFound: true });
  return `deleted namespace ${name}`;
}
