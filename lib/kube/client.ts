/**
 * The Kubernetes API client: CRUD, pagination, patches (merge, JSON,
 * strategic, server-side apply), status subresources and watches, over
 * a keep-alive HTTP/1.1 client of kinglet's own (Deno's `fetch` when the
 * kubeconfig names a proxy).
 *
 * Namespaces: a single-object call on a namespaced resource uses
 * `opts.namespace`, else the object's `metadata.namespace`, else the
 * context's namespace ({@link KubeClient.namespace}). `list` and `watch`
 * without a namespace span all namespaces.
 *
 * @example
 * ```ts ignore
 * import { KubeClient } from "./client.ts";
 * import { loadConfig } from "./config.ts";
 * import { NAMESPACES } from "./resources.ts";
 * const client = new KubeClient(await loadConfig());
 * const namespaces = await client.listAll(NAMESPACES);
 * client.close();
 * ```
 *
 * @module
 */
import denoJson from "../../deno.json" with { type: "json" };
import { type Clock, systemClock } from "../async/clock.ts";
import type { ClusterConfig } from "./config.ts";
import { isNotFound } from "./errors.ts";
import { resourcePath, SERVICE_ACCOUNTS } from "./resources.ts";
import { FlowControl } from "./_flow_control.ts";
import {
  type RateLimiterObservation,
  type RequestObservation,
  type RequestSpec,
  Transport,
} from "./_transport.ts";
import type { KubeList, KubeObject, Resource, WatchEvent } from "./types.ts";
import { decodeWatchStream } from "./watch.ts";

export type { RateLimiterObservation, RequestObservation, RequestTarget } from "./_transport.ts";

/**
 * The default of {@link ClientOptions.qps}. client-go's 5 (controller-runtime's
 * 20) would stretch kinglet's own benchmark: 5,000 WebApps take about 4.7
 * requests each, and a restarted operator re-applies about 150 of them a
 * second on two cores, some 300 requests a second. 500 leaves that untouched
 * and still stops a hot loop from flooding the API server.
 */
export const DEFAULT_QPS = 500;

/** The default of {@link ClientOptions.burst}: two seconds at {@link DEFAULT_QPS}. */
export const DEFAULT_BURST = 1_000;

/** Options of {@link KubeClient}. */
export interface ClientOptions {
  /** Defaults to `kinglet/<version> (deno <version>)`. */
  userAgent?: string;
  /**
   * Per-request timeout in milliseconds, not applied to watch streams; a
   * timeout also moves later requests to new connections (see
   * {@link KubeClient.resetConnections}). Defaults to 30 000.
   */
  timeoutMs?: number;
  /** Called after every HTTP exchange, e.g. to count `rest_client_requests_total`. */
  onRequest?: (o: RequestObservation) => void;
  /**
   * Requests per second this client sends, sustained, watches included
   * and Lease requests (leader election) excepted (client-go's `QPS`); 0
   * turns client-side flow control off. Requests past the limit wait their
   * turn, in order. Defaults to {@link DEFAULT_QPS} (500).
   */
  qps?: number;
  /**
   * Requests sent at once before `qps` applies (client-go's `Burst`).
   * Defaults to {@link DEFAULT_BURST} (1000).
   */
  burst?: number;
  /**
   * Called once per request after its wait for a flow-control token, e.g. to
   * observe `rest_client_rate_limiter_duration_seconds`.
   */
  onRateLimited?: (o: RateLimiterObservation) => void;
  /** Paces flow control and measures request timeouts. Defaults to {@link systemClock}. */
  clock?: Clock;
}

/** Options of {@link KubeClient.get}. */
export interface GetOptions {
  /** The namespace of a namespaced resource; defaults to the context's namespace. */
  namespace?: string;
  /** Fetch only `metadata` (a PartialObjectMetadata), a fraction of the bytes of a full object. */
  metadataOnly?: boolean;
  /** Aborts the request. */
  signal?: AbortSignal;
}

/** Options of {@link KubeClient.list} and {@link KubeClient.listAll}. */
export interface ListOptions {
  /** Omit to list across all namespaces. */
  namespace?: string;
  /** Only objects whose labels match, e.g. `app=web,tier!=cache`. */
  labelSelector?: string;
  /** Only objects whose fields match, e.g. `metadata.name=web`. */
  fieldSelector?: string;
  /** Page size; the server may return fewer and a `continue` token. */
  limit?: number;
  /** The token of the previous page. */
  continue?: string;
  /** List at (or not older than) this version; omit for the latest. */
  resourceVersion?: string;
  /** How `resourceVersion` is compared. */
  resourceVersionMatch?: "Exact" | "NotOlderThan";
  /** Items are PartialObjectMetadata: apiVersion, kind and metadata only. */
  metadataOnly?: boolean;
  /** Aborts the request. */
  signal?: AbortSignal;
}

/** Options of writes: {@link KubeClient.create} and {@link KubeClient.replace}. */
export interface WriteOptions {
  /** Defaults to `metadata.namespace` of the object, then the context's namespace. */
  namespace?: string;
  /** Names the writer in `managedFields`. */
  fieldManager?: string;
  /** Validate and admit the request without persisting it. */
  dryRun?: boolean;
  /** Aborts the request. */
  signal?: AbortSignal;
}

/** Options of {@link KubeClient.patch}. */
export interface PatchOptions {
  /**
   * `merge` (RFC 7386), `json` (RFC 6902, with `test` ops), `strategic`
   * (built-in kinds only) or `apply` (server-side apply; needs `fieldManager`).
   */
  type: "merge" | "json" | "strategic" | "apply";
  /** Defaults to the context's namespace. */
  namespace?: string;
  /** Names the writer in `managedFields`; required by `apply`. */
  fieldManager?: string;
  /** Server-side apply only: take ownership of fields other managers own. */
  force?: boolean;
  /** Patch the status subresource instead of the object. */
  subresource?: "status";
  /** Validate and admit the request without persisting it. */
  dryRun?: boolean;
  /** Aborts the request. */
  signal?: AbortSignal;
}

/** Options of {@link KubeClient.apply}. */
export interface ApplyOptions {
  /** Names the writer in `managedFields`: the fields it sends are the fields it owns. */
  fieldManager: string;
  /** Take ownership of fields another manager owns instead of failing with 409 Conflict. */
  force?: boolean;
  /** Apply to the status subresource instead of the object. */
  subresource?: "status";
  /** Validate and admit the request without persisting it. */
  dryRun?: boolean;
  /** Aborts the request. */
  signal?: AbortSignal;
}

/** Options of {@link KubeClient.delete}. */
export interface DeleteOptions {
  /** Defaults to the context's namespace. */
  namespace?: string;
  /** Delete only if the object still has this uid / resourceVersion (else 409 Conflict). */
  preconditions?: { uid?: string; resourceVersion?: string };
  /** What happens to dependents; defaults to the resource's policy (usually Background). */
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
  /** Seconds before the object is deleted; 0 deletes at once. */
  gracePeriodSeconds?: number;
  /**
   * Resolve, instead of failing with 404 NotFound, when the object is
   * already gone (controller-runtime's `client.IgnoreNotFound`): a cleanup
   * that may run twice deletes without a `catch` of its own. Defaults to false.
   */
  ignoreNotFound?: boolean;
  /** Aborts the request. */
  signal?: AbortSignal;
}

/** Options of {@link KubeClient.watch}. */
export interface WatchOptions {
  /** Omit to watch all namespaces. */
  namespace?: string;
  /** Start after this version; omit to start with synthetic ADDED events of the current state. */
  resourceVersion?: string;
  /** How `resourceVersion` is compared. */
  resourceVersionMatch?: "Exact" | "NotOlderThan";
  /** Ask for BOOKMARK events carrying the latest resourceVersion. Defaults to true. */
  allowWatchBookmarks?: boolean;
  /** The server ends the watch after this long (it picks a randomised default otherwise). */
  timeoutSeconds?: number;
  /** Streaming list: initial state as ADDED events, ended by a bookmark. */
  sendInitialEvents?: boolean;
  /** Only objects whose labels match. */
  labelSelector?: string;
  /** Only objects whose fields match. */
  fieldSelector?: string;
  /** Event objects are PartialObjectMetadata. */
  metadataOnly?: boolean;
  /** Aborting ends the iteration quietly and closes the connection. */
  signal?: AbortSignal;
}

const JSON_TYPE = "application/json";
const AS_META = `${JSON_TYPE};as=PartialObjectMetadata;g=meta.k8s.io;v=v1,${JSON_TYPE}`;
const AS_META_LIST = `${JSON_TYPE};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,${JSON_TYPE}`;
const PATCH_TYPES = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
  // The apply content type says YAML, but JSON is YAML and needs no YAML library.
  apply: "application/apply-patch+yaml",
} as const;

/**
 * A client for one API server. Holds one pooled HTTP/1.1 client (a
 * connection per request in flight, reused when idle); call {@link close}
 * when done.
 *
 * Errors: every method throws {@link ApiError} for an error answer,
 * {@link TransportError} when no answer arrived, {@link ConfigError} when the
 * configuration cannot work (e.g. an exec plugin is missing), and the
 * signal's reason when the caller aborts. A 401 is retried once with a fresh
 * token from the config's token source.
 *
 * @example
 * ```ts ignore
 * import { CONFIG_MAPS, KubeClient, loadConfig } from "./mod.ts";
 * const client = new KubeClient(await loadConfig(), { timeoutMs: 10_000 });
 * await client.apply(CONFIG_MAPS, {
 *   apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: "shop" },
 *   data: { color: "blue" },
 * }, { fieldManager: "kinglet" });
 * for await (const event of client.watch(CONFIG_MAPS, { namespace: "shop", signal: AbortSignal.timeout(60_000) })) {
 *   console.log(event.type, event.object.metadata?.name);
 * }
 * client.close();
 * ```
 */
export class KubeClient {
  /** The default namespace of the context, `"default"` if it sets none. */
  readonly namespace: string;
  /** Base URL of the API server. */
  readonly server: string;
  readonly #transport: Transport;

  /**
   * Creates a client for the cluster `config` describes; call {@link KubeClient.close} when done.
   *
   * @throws {RangeError} when `timeoutMs` is not a positive number, `qps` is
   * negative or `burst` is not a positive integer.
   * @throws {ConfigError} when the TLS material or proxy of `config` is unusable.
   */
  constructor(config: ClusterConfig, options: ClientOptions = {}) {
    const timeoutMs = options.timeoutMs ?? 30_000;
    if (!(timeoutMs > 0)) {
      throw new RangeError(
        `Cannot create the client: 'timeoutMs' must be a positive number, got ${timeoutMs}`,
      );
    }
    this.namespace = config.namespace || "default";
    this.server = config.server.replace(/\/+$/, "");
    this.#transport = new Transport({ ...config, server: this.server }, {
      userAgent: options.userAgent ?? `kinglet/${denoJson.version} (deno ${Deno.version.deno})`,
      clock: options.clock ?? systemClock,
      timeoutMs,
      flowControl: new FlowControl(options.clock ?? systemClock, {
        qps: options.qps ?? DEFAULT_QPS,
        burst: options.burst ?? DEFAULT_BURST,
      }),
      ...(options.onRequest ? { onRequest: options.onRequest } : {}),
      ...(options.onRateLimited ? { onRateLimited: options.onRateLimited } : {}),
    });
  }

  /** Reads one object. */
  get<T extends KubeObject>(res: Resource, name: string, opts: GetOptions = {}): Promise<T> {
    return this.#transport.json<T>({
      verb: "get",
      method: "GET",
      path: this.#objectPath(res, name, opts.namespace),
      accept: opts.metadataOnly ? AS_META : JSON_TYPE,
      ...signal(opts),
    });
  }

  /**
   * Reads one object, or `undefined` when there is none (404), as kube-rs'
   * `Api::get_opt`: for a reconcile that branches on whether something
   * exists. A kind the API server does not serve (a CRD not installed)
   * answers 404 too, and reads as `undefined` as well.
   *
   * @throws {ApiError} for any error answer but 404.
   */
  getOptional<T extends KubeObject>(
    res: Resource,
    name: string,
    opts: GetOptions = {},
  ): Promise<T | undefined> {
    return this.get<T>(res, name, opts).catch(undefinedIfNotFound);
  }

  /** Reads one page of a collection; follow `metadata.continue` for the next. */
  async list<T extends KubeObject>(res: Resource, opts: ListOptions = {}): Promise<KubeList<T>> {
    const list = await this.#transport.json<KubeList<T>>({
      verb: "list",
      method: "GET",
      path: resourcePath(res, { namespace: opts.namespace }),
      query: query({
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        limit: opts.limit,
        continue: opts.continue,
        resourceVersion: opts.resourceVersion,
        resourceVersionMatch: opts.resourceVersionMatch,
      }),
      accept: opts.metadataOnly ? AS_META_LIST : JSON_TYPE,
      ...signal(opts),
    });
    list.items ??= [];
    list.metadata ??= {};
    return list;
  }

  /**
   * Reads a whole collection, page by page when `limit` is set. The result
   * carries every item and the resourceVersion of the first page, which is
   * the snapshot all pages come from.
   *
   * @throws {ApiError} 410 Gone when the continue token expired mid-way; list again.
   */
  async listAll<T extends KubeObject>(res: Resource, opts: ListOptions = {}): Promise<KubeList<T>> {
    const first = await this.list<T>(res, opts);
    const items = first.items;
    for (let next = first.metadata.continue; next;) {
      // The continue token pins the snapshot; the server refuses a resourceVersion beside it.
      const { resourceVersion: _rv, resourceVersionMatch: _match, ...rest } = opts;
      const page = await this.list<T>(res, { ...rest, continue: next });
      for (const item of page.items) items.push(item);
      next = page.metadata.continue;
    }
    const resourceVersion = first.metadata.resourceVersion;
    return {
      ...(first.apiVersion ? { apiVersion: first.apiVersion } : {}),
      ...(first.kind ? { kind: first.kind } : {}),
      metadata: resourceVersion === undefined ? {} : { resourceVersion },
      items,
    };
  }

  /**
   * Asks the TokenRequest API for a token of the ServiceAccount
   * `namespace/name`, as `kubectl create token` does. The API server may
   * shorten `expirationSeconds` (its `--service-account-max-token-expiration`);
   * the answer says when the token really expires.
   *
   * @throws {ApiError} 404 when the ServiceAccount does not exist, 403 without
   *   `create` on `serviceaccounts/token`.
   */
  async requestToken(
    namespace: string,
    name: string,
    opts: { expirationSeconds?: number; signal?: AbortSignal } = {},
  ): Promise<{ token: string; expirationTimestamp: string }> {
    const answer = await this.#transport.json<KubeObject>({
      verb: "create",
      method: "POST",
      path: resourcePath(SERVICE_ACCOUNTS, { namespace, name, subresource: "token" }),
      body: JSON.stringify({
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { ...(opts.expirationSeconds && { expirationSeconds: opts.expirationSeconds }) },
      }),
      contentType: JSON_TYPE,
      ...signal(opts),
    });
    const status = answer.status as { token?: string; expirationTimestamp?: string } | undefined;
    if (!status?.token) {
      throw new TypeError(
        `The API server answered a TokenRequest for ${namespace}/${name} with no token`,
      );
    }
    return { token: status.token, expirationTimestamp: status.expirationTimestamp ?? "" };
  }

  /** Creates an object; the answer is the object as stored. */
  create<T extends KubeObject>(res: Resource, obj: T, opts: WriteOptions = {}): Promise<T> {
    const namespace = this.#namespace(res, opts.namespace, obj.metadata?.namespace);
    return this.#transport.json<T>({
      verb: "create",
      method: "POST",
      path: resourcePath(res, { namespace }),
      query: writeQuery(opts),
      body: JSON.stringify(obj),
      contentType: JSON_TYPE,
      ...signal(opts),
    });
  }

  /**
   * Replaces an object (PUT). Set `metadata.resourceVersion` to fail with
   * 409 Conflict if someone else wrote in between.
   *
   * @throws {TypeError} when the object has no `metadata.name`.
   */
  replace<T extends KubeObject>(
    res: Resource,
    obj: T,
    opts: WriteOptions & { subresource?: "status" } = {},
  ): Promise<T> {
    const name = requireName(obj, res, "replace");
    return this.#transport.json<T>({
      verb: "update",
      method: "PUT",
      path: this.#objectPath(res, name, opts.namespace, obj.metadata?.namespace, opts.subresource),
      query: writeQuery(opts),
      body: JSON.stringify(obj),
      contentType: JSON_TYPE,
      ...signal(opts),
    });
  }

  /**
   * Patches an object. A JSON patch whose `test` op fails is rejected with
   * an {@link ApiError} 422 Invalid and changes nothing.
   *
   * @throws {TypeError} for `apply` without `fieldManager`, or `force` with another type.
   */
  patch<T extends KubeObject>(
    res: Resource,
    name: string,
    patch: unknown,
    opts: PatchOptions,
  ): Promise<T> {
    const contentType = PATCH_TYPES[opts.type];
    if (!contentType) {
      throw new TypeError(
        `Cannot patch ${res.plural} "${name}": 'type' must be merge, json, strategic or apply, ` +
          `got ${JSON.stringify(opts.type)}`,
      );
    }
    if (opts.type === "apply" && !opts.fieldManager) {
      throw new TypeError(`Cannot apply ${res.plural} "${name}": 'fieldManager' is required`);
    }
    if (opts.force !== undefined && opts.type !== "apply") {
      throw new TypeError(
        `Cannot patch ${res.plural} "${name}": 'force' only applies to type "apply", got "${opts.type}"`,
      );
    }
    return this.#transport.json<T>({
      verb: "patch",
      method: "PATCH",
      path: this.#objectPath(res, name, opts.namespace, undefined, opts.subresource),
      query: writeQuery(opts),
      body: JSON.stringify(patch),
      contentType,
      ...signal(opts),
    });
  }

  /**
   * Server-side apply: sends the fields this manager wants to own. Fields
   * owned by another manager with a different value fail with 409 Conflict
   * unless `force` is set.
   *
   * @throws {TypeError} when the object has no `metadata.name`.
   */
  apply<T extends KubeObject>(res: Resource, obj: T, opts: ApplyOptions): Promise<T> {
    const name = requireName(obj, res, "apply");
    const namespace = this.#namespace(res, undefined, obj.metadata?.namespace);
    return this.patch<T>(res, name, obj, { ...opts, type: "apply", namespace });
  }

  /**
   * Deletes an object. Resolves once the server accepted the deletion, not
   * when it is gone; with `ignoreNotFound`, also when it was gone already.
   */
  async delete(res: Resource, name: string, opts: DeleteOptions = {}): Promise<void> {
    const { preconditions, propagationPolicy, gracePeriodSeconds } = opts;
    const hasBody = preconditions || propagationPolicy || gracePeriodSeconds !== undefined;
    const body = {
      apiVersion: "v1",
      kind: "DeleteOptions",
      ...(preconditions ? { preconditions } : {}),
      ...(propagationPolicy ? { propagationPolicy } : {}),
      ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}),
    };
    const deleting = this.#transport.discard({
      verb: "delete",
      method: "DELETE",
      path: this.#objectPath(res, name, opts.namespace),
      ...(hasBody ? { body: JSON.stringify(body), contentType: JSON_TYPE } : {}),
      ...signal(opts),
    });
    await (opts.ignoreNotFound ? deleting.catch(undefinedIfNotFound) : deleting);
  }

  /**
   * Watches a collection. Iterate with `for await`; the iteration ends when
   * the server closes the stream (after `timeoutSeconds`) or the signal
   * aborts. Leaving the loop early closes the connection.
   *
   * @throws {ApiError} for an ERROR event; 410 Gone means the resourceVersion is too old: relist.
   * @throws {WatchDecodeError} when the stream carries something that is not an event.
   */
  async *watch<T extends KubeObject>(
    res: Resource,
    opts: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>, void, undefined> {
    const path = resourcePath(res, { namespace: opts.namespace });
    let body: ReadableStream<Uint8Array>;
    try {
      body = await this.#transport.stream({
        verb: "watch",
        method: "GET",
        path,
        query: query({
          watch: true,
          allowWatchBookmarks: opts.allowWatchBookmarks ?? true,
          resourceVersion: opts.resourceVersion,
          resourceVersionMatch: opts.resourceVersionMatch,
          timeoutSeconds: opts.timeoutSeconds,
          sendInitialEvents: opts.sendInitialEvents,
          labelSelector: opts.labelSelector,
          fieldSelector: opts.fieldSelector,
        }),
        accept: opts.metadataOnly ? AS_META : JSON_TYPE,
        ...signal(opts),
      });
    } catch (e) {
      if (opts.signal?.aborted) return;
      throw e;
    }
    yield* decodeWatchStream<T>(body, { path, ...signal(opts) });
  }

  /** Closes the pooled connections. The client must not be used afterwards. */
  close(): void {
    this.#transport.close();
  }

  /**
   * Makes later requests open new connections, leaving those in flight to
   * finish on the old ones: the way out of a connection that went silent
   * without closing, which the pool would otherwise keep reusing. The client
   * does this itself when a request times out; a watcher calls it when a
   * watch stalls.
   */
  resetConnections(): void {
    this.#transport.resetConnections();
  }

  #namespace(res: Resource, explicit?: string, fromObject?: string): string | undefined {
    // A namespace given for a cluster-scoped resource is left for resourcePath to reject.
    if (!res.namespaced) return explicit;
    return explicit ?? fromObject ?? this.namespace;
  }

  #objectPath(
    res: Resource,
    name: string,
    explicit?: string,
    fromObject?: string,
    subresource?: string,
  ): string {
    return resourcePath(res, {
      name,
      namespace: this.#namespace(res, explicit, fromObject),
      subresource,
    });
  }
}

/** A rejection handler: 404 NotFound becomes `undefined`, anything else is thrown again. */
function undefinedIfNotFound(error: unknown): undefined {
  if (isNotFound(error)) return undefined;
  throw error;
}

function requireName(obj: KubeObject, res: Resource, verb: string): string {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError(`Cannot ${verb} a ${res.kind}: metadata.name is missing`);
  return name;
}

function query(params: Record<string, string | number | boolean | undefined>): URLSearchParams {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") q.set(k, String(v));
  return q;
}

/** The query of create, replace and patch; the API takes `dryRun=All`, not a boolean. */
function writeQuery(opts: { fieldManager?: string; force?: boolean; dryRun?: boolean }) {
  return query({
    fieldManager: opts.fieldManager,
    force: opts.force,
    dryRun: opts.dryRun ? "All" : undefined,
  });
}

function signal(opts: { signal?: AbortSignal }): Pick<RequestSpec, "signal"> {
  return opts.signal ? { signal: opts.signal } : {};
}
