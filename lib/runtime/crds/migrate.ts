/**
 * Moves every stored object of a custom kind to the CRD's storage version,
 * as kube-storage-version-migrator does: each object is read and written
 * back unchanged, which the API server stores anew in the storage version;
 * then the CRD's `status.storedVersions` is narrowed to that version alone,
 * so that an older version may later be dropped from the CRD.
 *
 * What the caller must know:
 *
 * - Run it once the new storage version is installed and its conversion
 *   webhook answers (a write back converts each object through it), from
 *   one process at a time (the leader).
 * - A write that loses to another writer (409) reads the object again and
 *   retries; one deleted meanwhile is passed over. Objects are written one
 *   at a time, a page of `pageSize` read at once.
 * - It needs `list` and `update` on the kind and `patch` on the CRD's
 *   `status` subresource.
 *
 * @example
 * ```ts
 * import { migrateStorageVersion } from "./migrate.ts";
 * import type { KubeClient } from "../../kube/client.ts";
 * async function upgrade(client: KubeClient): Promise<void> {
 *   const { migrated } = await migrateStorageVersion(client, "backups.example.com");
 *   console.log(`rewrote ${migrated} Backups in their storage version`);
 * }
 * ```
 *
 * @module
 */
import type { KubeClient } from "../../kube/client.ts";
import { isConflict, isNotFound } from "../../kube/errors.ts";
import { CUSTOM_RESOURCE_DEFINITIONS } from "../../kube/resources.ts";
import type { KubeObject, Resource } from "../../kube/types.ts";

/** What {@link migrateStorageVersion} calls. */
export type MigrateClient = Pick<KubeClient, "get" | "list" | "replace" | "patch">;

/** What {@link migrateStorageVersion} did. */
export interface MigrateResult {
  /** The version every object is now stored in. */
  storageVersion: string;
  /** How many objects were written back. */
  migrated: number;
}

interface Crd extends KubeObject {
  spec: {
    group: string;
    names: { plural: string; kind: string };
    scope: "Namespaced" | "Cluster";
    versions: { name: string; storage?: boolean }[];
  };
  status?: { storedVersions?: string[] };
}

/**
 * Rewrites every object of the CRD `name` (`<plural>.<group>`) in its
 * storage version, then sets its `status.storedVersions` to that version.
 *
 * @throws {RangeError} when the CRD has no storage version.
 * @throws the client's errors (a missing CRD is a 404), or the signal's reason.
 */
export async function migrateStorageVersion(
  client: MigrateClient,
  name: string,
  options: { pageSize?: number; signal?: AbortSignal } = {},
): Promise<MigrateResult> {
  const { signal, pageSize = 100 } = options;
  const crd = await client.get<Crd>(CUSTOM_RESOURCE_DEFINITIONS, name, { signal });
  const storage = crd.spec.versions.find((v) => v.storage)?.name;
  if (!storage) throw new RangeError(`Cannot migrate ${name}: its CRD names no storage version`);
  const resource: Resource = {
    group: crd.spec.group,
    version: storage,
    plural: crd.spec.names.plural,
    kind: crd.spec.names.kind,
    namespaced: crd.spec.scope === "Namespaced",
  };
  let migrated = 0;
  let next: string | undefined;
  do {
    const page = await client.list(resource, {
      limit: pageSize,
      ...(next && { continue: next }),
      signal,
    });
    for (const object of page.items) {
      if (await rewrite(client, resource, object, signal)) migrated++;
    }
    next = page.metadata?.continue || undefined;
  } while (next);
  const stored = crd.status?.storedVersions ?? [];
  if (stored.length !== 1 || stored[0] !== storage) {
    await client.patch(CUSTOM_RESOURCE_DEFINITIONS, name, {
      status: { storedVersions: [storage] },
    }, { type: "merge", subresource: "status", signal });
  }
  return { storageVersion: storage, migrated };
}

/** Writes `object` back as read; on a conflict reads it again. False when it is gone. */
async function rewrite(
  client: MigrateClient,
  resource: Resource,
  object: KubeObject,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  let current = object;
  for (;;) {
    const { name, namespace } = current.metadata ?? {};
    try {
      await client.replace(resource, current, { signal });
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      if (!isConflict(e) || !name) throw e;
      try {
        current = await client.get(resource, name, { ...(namespace && { namespace }), signal });
      } catch (again) {
        if (isNotFound(again)) return false;
        throw again;
      }
    }
  }
}
