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
import { stringify } from "yaml";
import type { KubeClient } from "../kube/client.ts";
import { CUSTOM_RESOURCE_DEFINITIONS, NAMESPACES } from "../kube/resources.ts";
import type { KubeObject } from "../kube/types.ts";
import { buildCrd, type CustomResourceDefinition } from "../operators/crd.ts";
import { isAlreadyExists, isNotFound } from "../kube/errors.ts";
import { CREATED_BY_ANNOTATION, FIELD_MANAGER } from "../operators/labels.ts";
import { KIND_DEFINITIONS } from "../operators/mod.ts";
import { withSchemaHash } from "../operators/schema_hash.ts";

/** Every CRD kinglet serves, annotated with its schema hash. */
export function crdDocuments(): CustomResourceDefinition[] {
  return KIND_DEFINITIONS.map((definition) => withSchemaHash(buildCrd(definition)));
}

/** The CRDs as one multi-document YAML stream. */
export function crdsYaml(): string {
  return crdDocuments().map((crd) => stringify(crd, { lineWidth: 0 })).join("---\n");
}

/**
 * Applies the CRDs (and the leader-election namespace, if given) and waits
 * until the API server reports every CRD Established.
 *
 * @throws {Error} naming the CRD and its conditions when it is not Established within `timeoutMs`.
 */
export async function installCrds(
  client: Pick<KubeClient, "apply" | "create" | "get">,
  options: { namespace?: string; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<string[]> {
  const signal = options.signal;
  if (options.namespace) await ensureNamespace(client, options.namespace, signal);
  const names: string[] = [];
  for (const crd of crdDocuments()) {
    await client.apply(CUSTOM_RESOURCE_DEFINITIONS, crd as unknown as KubeObject, {
      fieldManager: FIELD_MANAGER,
      force: true,
      ...(signal && { signal }),
    });
    names.push(crd.metadata.name);
  }
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (const name of names) {
    for (;;) {
      const crd = await client.get<KubeObject>(CUSTOM_RESOURCE_DEFINITIONS, name, {
        ...(signal && { signal }),
      });
      const conditions = (crd.status as { conditions?: { type: string; status: string }[] })
        ?.conditions ?? [];
      if (conditions.some((c) => c.type === "Established" && c.status === "True")) break;
      if (Date.now() > deadline) {
        throw new Error(
          `CRD ${name} is not Established after ${(options.timeoutMs ?? 60_000) / 1000}s; ` +
            `conditions: ${JSON.stringify(conditions)}. Check the API server log.`,
        );
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return names;
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
