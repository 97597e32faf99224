/**
 * What an operator declares to have the API server call it: admission
 * (validation and defaulting of one kind) and conversion (between the
 * versions of one kind, through a hub). The webhook server serves these,
 * `deploy` writes the webhook configurations and the least RBAC from them,
 * and the test kit's `MemoryCluster` runs them in-process, as the API server
 * would.
 *
 * What the caller must know:
 *
 * - Handlers are plain functions of the object: no zod on the run path. A
 *   validator returns {@link allowed} or {@link denied} (with warnings); a
 *   defaulter returns the object as it should be stored, and the server
 *   sends the JSON Patch from what it was given to what it returned.
 * - A handler that throws or runs past {@link AdmissionWebhook.handlerTimeoutMs}
 *   is answered by the server: a denial that says so under `failurePolicy:
 *   "Fail"`, an allow under `"Ignore"`.
 * - Conversion functions see the whole object and must keep its metadata
 *   (the API server refuses a conversion that changes more than labels and
 *   annotations). The server sets `apiVersion`.
 *
 * @module
 */
import type { KubeList, KubeObject, Resource } from "../../kube/mod.ts";

/** An admission operation, as the API server names it. */
export type Operation = "CREATE" | "UPDATE" | "DELETE";

/** What the API server does when the webhook cannot be reached or fails. */
export type FailurePolicy = "Fail" | "Ignore";

/** The part of the client a handler may read the cluster through (an existence check). */
export interface WebhookClient {
  /** Reads one object; rejects with the client's `ApiError` (404 when absent). */
  get<T extends KubeObject>(
    res: Resource,
    name: string,
    opts?: { namespace?: string; signal?: AbortSignal },
  ): Promise<T>;
  /** Lists objects, in a namespace and by labels when given. */
  list<T extends KubeObject>(
    res: Resource,
    opts?: { namespace?: string; labelSelector?: string; signal?: AbortSignal },
  ): Promise<KubeList<T>>;
}

/** One admission request, decoded. */
export interface AdmissionRequest<T extends KubeObject = KubeObject> {
  /** The request's uid, echoed in the response. */
  uid: string;
  /** What the request does to the object. */
  operation: Operation;
  /** The object as it would be stored; absent on DELETE. */
  object?: T;
  /** The object before the change; present on UPDATE and DELETE. */
  oldObject?: T;
  /** The object's namespace, empty for cluster-scoped kinds. */
  namespace: string;
  /** The object's name (empty on a CREATE with generateName). */
  name: string;
  /** Who asks. */
  userInfo: { username?: string; groups?: string[] };
  /** Whether the request is a dry run (handlers must not write then). */
  dryRun: boolean;
}

/** What a handler lends from the server. */
export interface AdmissionContext {
  /** Aborted when the handler's time is up or the server stops. */
  signal: AbortSignal;
  /** Reads the cluster with the operator's credentials. */
  client: WebhookClient;
}

/** A validator's answer. */
export type Verdict =
  | { allowed: true; warnings?: string[] }
  | { allowed: false; message: string; code?: number; warnings?: string[] };

/** Allows, with optional warnings `kubectl` prints. */
export function allowed(...warnings: string[]): Verdict {
  return warnings.length > 0 ? { allowed: true, warnings } : { allowed: true };
}

/** Denies with a message `kubectl` prints (code 403 unless given). */
export function denied(message: string, code = 403): Verdict {
  return { allowed: false, message, code };
}

/**
 * Validation and defaulting of one kind: a `ValidatingWebhookConfiguration`
 * entry when `validate` is set, a `MutatingWebhookConfiguration` entry when
 * `default` is set.
 */
export interface AdmissionWebhook<T extends KubeObject = KubeObject> {
  /** The kind it admits. */
  resource: Resource;
  /** Checks a change; an exception counts as a failure (see `failurePolicy`). */
  validate?(request: AdmissionRequest<T>, context: AdmissionContext): Verdict | Promise<Verdict>;
  /** Returns the object with its defaults (the given one may be changed in place). */
  default?(object: T, context: AdmissionContext & { request: AdmissionRequest<T> }): T | Promise<T>;
  /** Which operations are validated. @default ["CREATE", "UPDATE"] */
  operations?: readonly Operation[];
  /** What the API server does when the webhook fails or cannot be reached. @default "Fail" */
  failurePolicy?: FailurePolicy;
  /** How long the API server waits, 1 to 30. @default 10 */
  timeoutSeconds?: number;
  /**
   * How long a handler may run before the server answers for it; less than
   * `timeoutSeconds`. @default timeoutSeconds * 1000 - 500
   */
  handlerTimeoutMs?: number;
  /** CEL `matchConditions` (name, expression), v1.30+. @default none */
  matchConditions?: readonly { name: string; expression: string }[];
}

/** One version of a converted kind: from it to the hub and back. */
export interface VersionConversion {
  /** The object of this version as the hub version. */
  toHub(object: KubeObject): KubeObject;
  /** The hub object as this version. */
  fromHub(hub: KubeObject): KubeObject;
}

/**
 * The versions of one kind and how each converts to and from its hub.
 * `defineKind` takes it to write the CRD's versions and `conversion:
 * Webhook`; the server answers the API server's `ConversionReview`s with it.
 */
export interface Conversion {
  /** The kind: group, plural and kind name (its `version` is ignored). */
  resource: Resource;
  /** The version every other converts through, usually the storage version. */
  hub: string;
  /** Every version but the hub, by name. */
  versions: Readonly<Record<string, VersionConversion>>;
}

/** Checks a conversion declaration at once: the hub is not among its spokes, names are versions. */
export function defineConversion(conversion: Conversion): Conversion {
  const { hub, versions, resource } = conversion;
  const version = /^v\d+((alpha|beta)\d+)?$/;
  if (!version.test(hub)) {
    throw new RangeError(
      `Cannot define the conversion of ${resource.kind}: 'hub' must be a version like v1, got ${
        JSON.stringify(hub)
      }`,
    );
  }
  for (const name of Object.keys(versions)) {
    if (name === hub || !version.test(name)) {
      throw new RangeError(
        `Cannot define the conversion of ${resource.kind}: 'versions' must name versions other than the hub ${hub}, got ${
          JSON.stringify(name)
        }`,
      );
    }
  }
  if (Object.keys(versions).length === 0) {
    throw new RangeError(
      `Cannot define the conversion of ${resource.kind}: 'versions' names no version besides the hub ${hub}`,
    );
  }
  return conversion;
}

/** The HTTP paths the server answers, one per kind, as the configurations name them. */
export const webhookPaths = {
  validate: (r: Resource) => `/validate/${r.group || "core"}/${r.plural}`,
  mutate: (r: Resource) => `/mutate/${r.group || "core"}/${r.plural}`,
  convert: (r: Resource) => `/convert/${r.group || "core"}/${r.plural}`,
};

/** The webhook's name in a configuration: `v<plural>.<group>` (validate) or `m<plural>.<group>`. */
export function webhookName(kind: "validate" | "mutate", r: Resource): string {
  return `${kind === "validate" ? "v" : "m"}${r.plural}.${r.group || "core.k8s.io"}`;
}

/** The default port of the webhook server. */
export const DEFAULT_WEBHOOK_PORT = 9443;

/**
 * The names an operator's webhooks go by, from the operator's name: the
 * two configurations `deploy` writes and the runtime injects its CA into,
 * the Secret its certificates live in, and the Service that fronts it in a
 * pod.
 */
export function webhookObjectNames(operator: string): {
  validating: string;
  mutating: string;
  secret: string;
  service: string;
} {
  return {
    validating: `${operator}-validating`,
    mutating: `${operator}-mutating`,
    secret: `${operator}-webhook-tls`,
    service: `${operator}-webhook`,
  };
}

/**
 * The host and port of a webhook server's `host:port` address; an empty
 * host (`:9443`) is every interface.
 *
 * @example
 * ```ts
 * import { parseWebhookAddress } from "./spec.ts";
 * parseWebhookAddress(":9443"); // { hostname: "0.0.0.0", port: 9443 }
 * ```
 *
 * @throws {RangeError} when `address` is not `host:port` with a port up to 65535.
 */
export function parseWebhookAddress(address: string): { hostname: string; port: number } {
  const match = /^(.*):(\d{1,5})$/.exec(address);
  const port = Number(match?.[2]);
  if (!match || port > 65535) {
    throw new RangeError(
      "Cannot serve webhooks: 'address' must be host:port (e.g. 127.0.0.1:9443 or :9443), " +
        `got ${JSON.stringify(address)}`,
    );
  }
  const host = match[1]!.replace(/^\[(.*)\]$/, "$1");
  return { hostname: host === "" ? "0.0.0.0" : host, port };
}
