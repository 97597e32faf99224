/**
 * The two requests a watcher makes, list and watch, behind one small
 * interface, and its adapter over the Kubernetes client.
 *
 * @module
 */
import type { KubeClient } from "../../kube/client.ts";
import { resourceName } from "../../kube/resources.ts";
import type { KubeList, KubeObject, Resource, WatchEvent } from "../../kube/types.ts";

/** Options of one list request; a watcher pages with `limit` and `continue`. */
export interface ListPageOptions {
  /** Page size. */
  limit?: number;
  /** The token of the previous page. */
  continue?: string;
  /** List at (or not older than) this version. */
  resourceVersion?: string;
  /** How `resourceVersion` is compared. */
  resourceVersionMatch?: "Exact" | "NotOlderThan";
  /** Aborts the request. */
  signal?: AbortSignal;
}

/** Options of one watch request. */
export interface WatchStreamOptions {
  /** Start after this version. */
  resourceVersion?: string;
  /** Ask for BOOKMARK events. */
  allowWatchBookmarks: boolean;
  /** The server ends the watch after this long. */
  timeoutSeconds?: number;
  /** Streaming list: the initial state as ADDED events, ended by a bookmark. */
  sendInitialEvents?: boolean;
  /** How `resourceVersion` is compared. */
  resourceVersionMatch?: "Exact" | "NotOlderThan";
  /** Aborts the request. */
  signal?: AbortSignal;
}

/**
 * Lists and watches one collection: a resource, maybe narrowed to a
 * namespace and selectors.
 */
export interface ListerWatcher<T extends KubeObject> {
  /** What is watched, for log lines, e.g. `configmaps in namespace "default"`. */
  readonly description?: string;
  /** One page of the collection. */
  list(options: ListPageOptions): Promise<KubeList<T>>;
  /** Changes to the collection; ERROR events are thrown as errors. */
  watch(options: WatchStreamOptions): AsyncIterable<WatchEvent<T>>;
  /**
   * Called when a watch stalled, before the next request: drops the
   * connection under it, which may have gone silent and would otherwise
   * carry the next watch into the same void. Optional.
   */
  reconnect?(): void;
}

/** Narrows what a {@link listerWatcher} sees. */
export interface ListerWatcherOptions {
  /** Defaults to every namespace. */
  namespace?: string;
  /** Only objects whose labels match. */
  labelSelector?: string;
  /** Only objects whose fields match. */
  fieldSelector?: string;
  /** Receive `PartialObjectMetadata` (metadata only) instead of whole objects. Defaults to false. */
  metadataOnly?: boolean;
}

/** The part of {@link KubeClient} a {@link listerWatcher} uses. */
export type ListWatchClient =
  & Pick<KubeClient, "list" | "watch">
  & Partial<Pick<KubeClient, "resetConnections">>;

/**
 * Adapts the Kubernetes client to a {@link ListerWatcher} of `resource`.
 *
 * @example
 * ```ts
 * import { listerWatcher } from "./watcher.ts";
 * import { PODS } from "../../kube/resources.ts";
 * import { KubeClient } from "../../kube/client.ts";
 * import { staticToken } from "../../kube/token_source.ts";
 * const client = new KubeClient({
 *   server: "https://127.0.0.1:6443",
 *   auth: staticToken("example"),
 *   namespace: "default",
 *   source: "example",
 * });
 * const lw = listerWatcher(client, PODS, { namespace: "shop", labelSelector: "app=web" });
 * lw.description; // 'pods in namespace "shop" with labels app=web'
 * client.close();
 * ```
 *
 * @throws {TypeError} when a namespace is given for a cluster-scoped resource.
 */
export function listerWatcher<T extends KubeObject = KubeObject>(
  client: ListWatchClient,
  resource: Resource,
  options: ListerWatcherOptions = {},
): ListerWatcher<T> {
  if (options.namespace !== undefined && !resource.namespaced) {
    throw new TypeError(
      `Cannot watch ${resource.plural} in namespace "${options.namespace}": ${resource.kind} is cluster-scoped`,
    );
  }
  const scope: ListerWatcherOptions = {};
  if (options.namespace !== undefined) scope.namespace = options.namespace;
  if (options.labelSelector) scope.labelSelector = options.labelSelector;
  if (options.fieldSelector) scope.fieldSelector = options.fieldSelector;
  if (options.metadataOnly) scope.metadataOnly = true;
  return {
    description: describe(resource, scope),
    list: (page) => client.list<T>(resource, { ...scope, ...page }),
    watch: (watch) => client.watch<T>(resource, { ...scope, ...watch }),
    reconnect: () => client.resetConnections?.(),
  };
}

function describe(resource: Resource, scope: ListerWatcherOptions): string {
  let text = resourceName(resource);
  text += scope.namespace === undefined ? "" : ` in namespace "${scope.namespace}"`;
  if (scope.labelSelector) text += ` with labels ${scope.labelSelector}`;
  if (scope.fieldSelector) text += ` with fields ${scope.fieldSelector}`;
  if (scope.metadataOnly) text += " (metadata only)";
  return text;
}
