/**
 * How the in-memory API server serves CRDs: where a kind's structural
 * schema is in its CRD, and the status a CRD gets once written.
 *
 * @module
 */
import type { JsonSchema } from "../crd/types.ts";
import { CUSTOM_RESOURCE_DEFINITIONS, resourceName } from "../kube/resources.ts";
import type { KubeObject, Resource } from "../kube/types.ts";

interface CrdSpec {
  names?: unknown;
  versions?: { name?: string; storage?: boolean; schema?: { openAPIV3Schema?: JsonSchema } }[];
}

/** The structural schema `crd` gives `version`, if it serves that version with one. */
export function crdSchema(crd: KubeObject, version: string): JsonSchema | undefined {
  const versions = (crd.spec as CrdSpec | undefined)?.versions;
  return versions?.find((v) => v.name === version)?.schema?.openAPIV3Schema;
}

/** The version `crd` stores its objects in, if it is given and names one. */
export function crdStorageVersion(crd: KubeObject | undefined): string | undefined {
  return (crd?.spec as CrdSpec | undefined)?.versions?.find((v) => v.storage)?.name;
}

/**
 * `object` as the API server stores it: a CRD written without a status is
 * served at once, its names accepted and its kind established (a real API
 * server takes a moment, which `installCrds` waits out).
 */
export function served<T extends KubeObject>(resource: Resource, object: T): T {
  if (resourceName(resource) !== resourceName(CUSTOM_RESOURCE_DEFINITIONS) || object.status) {
    return object;
  }
  const condition = (type: string, reason: string, message: string) => ({
    type,
    status: "True",
    reason,
    message,
  });
  const names = (object.spec as CrdSpec | undefined)?.names;
  return {
    ...object,
    status: {
      conditions: [
        condition("NamesAccepted", "NoConflicts", "no conflicts found"),
        condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
      ],
      ...(names !== undefined && { acceptedNames: names }),
    },
  };
}
