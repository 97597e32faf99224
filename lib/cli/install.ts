/**
 * `kinglet crds` and `kinglet install`: the CRDs as YAML, and their
 * server-side apply with a wait until every one is Established.
 *
 * @example
 * ```ts
 * import { crdDocuments } from "./install.ts";
 * crdDocuments().length; // 3
 * ```
 *
 * @module
 */
import { stringify } from "npm:yaml@2.9.1";
import { type CustomResourceDefinition, withSchemaHash } from "../crd/mod.ts";
import type { KubeClient } from "../kube/client.ts";
import { isAlreadyExists, isNotFound } from "../kube/errors.ts";
import { NAMESPACES } from "../kube/resources.ts";
import { CREATED_BY_ANNOTATION, FIELD_MANAGER } from "../operators/labels.ts";
import { KIND_DEFINITIONS } from "../operators/mod.ts";
import { installCrds } from "../runtime/crds/mod.ts";

/** Every CRD kinglet serves, annotated with its schema hash. */
export function crdDocuments(): CustomResourceDefinition[] {
  return KIND_DEFINITIONS.map((definition) => withSchemaHash(definition.crd()));
}

/** The CRDs as one multi-document YAML stream. */
export function crdsYaml(): string {
  return crdDocuments().map((crd) => stringify(crd, { lineWidth: 0 })).join("---\n");
}

/**
 * Applies the CRDs (and the leader-election namespace, if given) and waits
 * until the API server reports every CRD Established; resolves to their names.
 *
 * @throws {CrdWaitError} naming the CRD and its conditions when it is not
 * Established within `timeoutMs`.
 */
export async function install(
  client: Pick<KubeClient, "apply" | "create" | "get">,
  options: { namespace?: string; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<string[]> {
  const { namespace, ...wait } = options;
  if (namespace) await ensureNamespace(client, namespace, options.signal);
  return await installCrds(client, crdDocuments(), { fieldManager: FIELD_MANAGER, ...wait });
}

/**
 * Creates `name` unless it exists, marked as made by install so that
 * uninstall removes it, and only it: a namespace that was there before is
 * left as it is.
 */
async function ensureNamespace(
  client: Pick<KubeClient, "create" | "get">,
  name: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  const at = signal ? { signal } : {};
  try {
    await client.get(NAMESPACES, name, at);
    return;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  try {
    await client.create(NAMESPACES, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name, annotations: { [CREATED_BY_ANNOTATION]: "kinglet-install" } },
    }, at);
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}
