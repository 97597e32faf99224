/**
 * The Lease reads and writes a leader elector makes, behind one small
 * interface, and its adapter over the Kubernetes client.
 *
 * @module
 */
import type { KubeClient } from "../../kube/client.ts";
import { isNotFound } from "../../kube/errors.ts";
import { LEASES } from "../../kube/resources.ts";
import type { KubeObject } from "../../kube/types.ts";

/** A `coordination.k8s.io/v1` Lease as it travels over JSON. */
export interface Lease extends KubeObject {
  /** Who holds the Lease, for how long, and when it was acquired and renewed. */
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    /** RFC 3339 with microseconds. */
    acquireTime?: string;
    /** RFC 3339 with microseconds. */
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** Reads and writes one kind of object, Leases; the seam tests replace. */
export interface LeaseApi {
  /** The Lease, or undefined when it does not exist. */
  get(namespace: string, name: string, signal?: AbortSignal): Promise<Lease | undefined>;
  /**
   * Creates the Lease; fails with 409 when another candidate was first.
   *
   * @throws an error recognised by `isAlreadyExists` when the Lease exists.
   */
  create(lease: Lease, signal?: AbortSignal): Promise<Lease>;
  /**
   * Replaces the Lease, conditional on its resourceVersion.
   *
   * @throws an error recognised by `isConflict` when `metadata.resourceVersion` is stale.
   */
  replace(lease: Lease, signal?: AbortSignal): Promise<Lease>;
  /**
   * Streams the Lease as it changes, from after `resourceVersion`, until
   * the server ends the watch or `signal` aborts; `undefined` when it was
   * deleted. Optional: without it a candidate learns of renewals only by
   * its reads, every retry period.
   */
  changes?(
    namespace: string,
    name: string,
    resourceVersion: string,
    signal: AbortSignal,
  ): AsyncIterable<Lease | undefined>;
}

/** The part of {@link KubeClient} a {@link leaseApi} uses. */
export type LeaseClient = Pick<KubeClient, "get" | "create" | "replace"> & {
  watch?: KubeClient["watch"];
};

/**
 * A {@link LeaseApi} over the Kubernetes client.
 *
 * @example
 * ```ts
 * import { LeaderElector, leaseApi } from "./leader.ts";
 * import { KubeClient } from "../../kube/client.ts";
 * import { staticToken } from "../../kube/token_source.ts";
 * const client = new KubeClient({
 *   server: "https://127.0.0.1:6443",
 *   auth: staticToken("example"),
 *   namespace: "default",
 *   source: "example",
 * });
 * const elector = new LeaderElector(leaseApi(client), {
 *   namespace: "kube-system",
 *   name: "kinglet",
 *   identity: "node-a",
 * });
 * elector.isLeader; // false until run() acquires the Lease
 * client.close();
 * ```
 */
export function leaseApi(client: LeaseClient): LeaseApi {
  return {
    async get(namespace, name, signal) {
      try {
        return await client.get<Lease>(LEASES, name, { namespace, signal });
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    create: (lease, signal) => client.create(LEASES, lease, { signal }),
    replace: (lease, signal) => client.replace(LEASES, lease, { signal }),
    ...(client.watch && {
      async *changes(namespace, name, resourceVersion, signal) {
        const events = client.watch!<Lease>(LEASES, {
          namespace,
          fieldSelector: `metadata.name=${name}`,
          resourceVersion,
          allowWatchBookmarks: false,
          signal,
        });
        for await (const event of events) {
          if (event.type === "BOOKMARK") continue;
          yield event.type === "DELETED" ? undefined : event.object;
        }
      },
    }),
  };
}
